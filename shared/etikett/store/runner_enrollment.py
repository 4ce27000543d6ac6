"""Enrollment tokens (one-time, stored only as their SHA-256) and the enrollments they become,
in the runners table: what a Runner presents to join a group, and what waits for an admin's
approval."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BooleanAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, changes, get_item, item_of, record_of
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page
from etikett.store.runners import META

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

ENROLLMENT_SK = "enrollment"
TOKEN_SK = "enrollment-token"


class EnrollmentTokenRecord(NamedTuple):
    """A one-time enrollment token, stored only as its SHA-256."""

    token_hash: str
    id: str
    group_id: str
    needs_approval: bool
    expires_at: dt.datetime
    used_at: dt.datetime | None
    used_by: str | None  # the enrollment it became
    created_at: dt.datetime
    created_by: str


class EnrollmentRecord(NamedTuple):
    id: str  # enr_…
    group_id: str
    runner_id: str
    status: str  # "pending" | "approved"
    secret_hash: str  # the enrolling Runner polls with this secret
    csr_pem: str
    certificate_pem: str | None
    hostname: str | None
    version: str | None
    created_at: dt.datetime
    approved_at: dt.datetime | None
    approved_by: str | None


class _ByKind(GlobalSecondaryIndex["_EnrollmentItem"]):
    """The table's index of one kind of item (`etikett.store.runners`): enrollments by id."""

    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class _EnrollmentTokenItem(Item):
    Meta = META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "enrollment-token#<sha256 hex>"
    sk = UnicodeAttribute(range_key=True, default=TOKEN_SK)
    id = UnicodeAttribute()
    group_id = UnicodeAttribute()
    needs_approval = BooleanAttribute(default=False)
    expires_at = UTCDateTimeAttribute()
    used_at = UTCDateTimeAttribute(null=True)
    used_by = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    expires = TTLAttribute(null=True)


class _EnrollmentItem(Item):
    Meta = META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=ENROLLMENT_SK)
    kind = UnicodeAttribute(default="enrollment")
    sort_key = UnicodeAttribute()  # the id
    group_id = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    status = UnicodeAttribute()
    secret_hash = UnicodeAttribute()
    csr_pem = UnicodeAttribute()
    certificate_pem = UnicodeAttribute(null=True)
    hostname = UnicodeAttribute(null=True)
    version = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    approved_at = UTCDateTimeAttribute(null=True)
    approved_by = UnicodeAttribute(null=True)
    by_kind = _ByKind()


def _token_key(token_hash: str) -> str:
    return f"enrollment-token#{token_hash}"


def _enrollment(item: _EnrollmentItem) -> EnrollmentRecord:
    return record_of(EnrollmentRecord, item)


def get_enrollment_token(token_hash: str) -> EnrollmentTokenRecord | None:
    item = get_item(_EnrollmentTokenItem, _token_key(token_hash), TOKEN_SK)
    if item is None:
        return None
    return EnrollmentTokenRecord(
        token_hash=token_hash,
        id=item.id,
        group_id=item.group_id,
        needs_approval=bool(item.needs_approval),
        expires_at=item.expires_at,
        used_at=item.used_at,
        used_by=item.used_by,
        created_at=item.created_at,
        created_by=item.created_by,
    )


def add_enrollment_token(uow: UnitOfWork, token: EnrollmentTokenRecord) -> None:
    item = _EnrollmentTokenItem(
        key=_token_key(token.token_hash),
        sk=TOKEN_SK,
        id=token.id,
        group_id=token.group_id,
        needs_approval=token.needs_approval,
        expires_at=token.expires_at,
        used_at=token.used_at,
        used_by=token.used_by,
        created_at=token.created_at,
        created_by=token.created_by,
        expires=token.expires_at + dt.timedelta(days=7),
    )
    uow.put(item, _EnrollmentTokenItem.key.does_not_exist(), name=ConditionName.TOKEN_ABSENT)


def use_enrollment_token(
    uow: UnitOfWork, token: EnrollmentTokenRecord, at: dt.datetime, enrollment_id: str
) -> None:
    """`token.unused` fails when the token was used meanwhile (tokens are one-time)."""
    uow.update(
        _EnrollmentTokenItem(_token_key(token.token_hash), TOKEN_SK),
        [_EnrollmentTokenItem.used_at.set(at), _EnrollmentTokenItem.used_by.set(enrollment_id)],
        _EnrollmentTokenItem.used_at.does_not_exist(),
        name=ConditionName.TOKEN_UNUSED,
    )


def get_enrollment(enrollment_id: str) -> EnrollmentRecord | None:
    item = get_item(_EnrollmentItem, enrollment_id, ENROLLMENT_SK)
    return _enrollment(item) if item is not None else None


def page_enrollments(limit: int, cursor: str | None, status: str | None) -> Page[EnrollmentRecord]:
    """Newest first; `status` filters when given."""
    condition = _EnrollmentItem.status == status if status else None

    def query(**page: Any) -> Any:
        return _EnrollmentItem.by_kind.query(
            "enrollment", filter_condition=condition, scan_index_forward=False, **page
        )

    return read_page(query, {"pk", "sk", "kind", "sort_key"}, limit, cursor, _enrollment)


def add_enrollment(uow: UnitOfWork, enrollment: EnrollmentRecord) -> None:
    item = item_of(
        _EnrollmentItem, enrollment, sk=ENROLLMENT_SK, kind="enrollment", sort_key=enrollment.id
    )
    uow.put(item, _EnrollmentItem.id.does_not_exist(), name=ConditionName.ENROLLMENT_ABSENT)


def update_enrollment(uow: UnitOfWork, before: EnrollmentRecord, after: EnrollmentRecord) -> None:
    """`enrollment.unchanged` fails when its status moved meanwhile."""
    uow.update(
        _EnrollmentItem(before.id, ENROLLMENT_SK),
        changes(_EnrollmentItem, before, after),
        _EnrollmentItem.status == before.status,
        name=ConditionName.ENROLLMENT_UNCHANGED,
    )
