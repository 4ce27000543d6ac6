"""The runners table: Runner groups, Runners, enrollment tokens, enrollments and context
parameters (of groups and Runners). One table, items told apart by their sort key."""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

_META = table_meta("runners_table")

GROUP_SK = "group"
RUNNER_SK = "runner"
ENROLLMENT_SK = "enrollment"
TOKEN_SK = "enrollment-token"


def context_sk(name: str) -> str:
    return f"context#{name}"


class ByKind(GlobalSecondaryIndex["GroupRecord"]):
    """Lists one kind of item (groups by name, runners and enrollments by id)."""

    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class ByGroup(GlobalSecondaryIndex["RunnerRecord"]):
    class Meta:
        index_name = "by_group"
        projection = AllProjection()

    runner_group = UnicodeAttribute(hash_key=True)
    pk = UnicodeAttribute(range_key=True)


class GroupRecord(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # rgp_…
    sk = UnicodeAttribute(range_key=True, default=GROUP_SK)
    kind = UnicodeAttribute(default="group")
    sort_key = UnicodeAttribute()  # casefolded name + "#" + id
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    by_kind = ByKind()


class RunnerRecord(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # run_…
    sk = UnicodeAttribute(range_key=True, default=RUNNER_SK)
    kind = UnicodeAttribute(default="runner")
    sort_key = UnicodeAttribute()  # the id: runners list in enrollment order
    group_id = UnicodeAttribute()
    runner_group = (
        UnicodeAttribute()
    )  # = group_id; only runners carry it, so by_group lists runners
    name = UnicodeAttribute()
    hostname = UnicodeAttribute(null=True)
    version = UnicodeAttribute(null=True)
    state = UnicodeAttribute()  # "pending" (awaiting approval) | "active"
    certificate_serial = UnicodeAttribute(null=True)  # hex; only this certificate is accepted
    certificate_not_after = UTCDateTimeAttribute(null=True)
    queue_url = UnicodeAttribute(null=True)
    last_seen_at = UTCDateTimeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    by_kind = ByKind()
    by_group = ByGroup()


class EnrollmentTokenRecord(Model):
    """A one-time enrollment token, stored only as its SHA-256."""

    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # "enrollment-token#<sha256 hex>"
    sk = UnicodeAttribute(range_key=True, default=TOKEN_SK)
    id = UnicodeAttribute()
    group_id = UnicodeAttribute()
    needs_approval = BooleanAttribute(default=False)
    expires_at = UTCDateTimeAttribute()
    used_at = UTCDateTimeAttribute(null=True)
    used_by = UnicodeAttribute(null=True)  # the enrollment it became
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    expires = TTLAttribute(null=True)


class EnrollmentRecord(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # enr_…
    sk = UnicodeAttribute(range_key=True, default=ENROLLMENT_SK)
    kind = UnicodeAttribute(default="enrollment")
    sort_key = UnicodeAttribute()  # the id
    group_id = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    status = UnicodeAttribute()  # "pending" | "approved"
    secret_hash = UnicodeAttribute()  # the enrolling Runner polls with this secret
    csr_pem = UnicodeAttribute()
    certificate_pem = UnicodeAttribute(null=True)
    hostname = UnicodeAttribute(null=True)
    version = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    approved_at = UTCDateTimeAttribute(null=True)
    approved_by = UnicodeAttribute(null=True)
    by_kind = ByKind()


class ContextRecord(Model):
    """A context parameter of a group or a Runner (deployments keep theirs elsewhere)."""

    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # rgp_… or run_…
    sk = UnicodeAttribute(range_key=True)  # context#<name>
    name = UnicodeAttribute()
    value = JSONAttribute()
    updated_at = UTCDateTimeAttribute()
    updated_by = UnicodeAttribute()
    revision = NumberAttribute(default=1)
