"""Runner groups, Runners, enrollment tokens, enrollments and the context parameters of groups
and Runners: one table, items told apart by their sort key."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import changes, get_item, item_of, record_of, table_meta
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

_META = table_meta("runners_table")

GROUP_SK = "group"
RUNNER_SK = "runner"
ENROLLMENT_SK = "enrollment"
TOKEN_SK = "enrollment-token"


@dataclass(frozen=True)
class GroupRecord:
    id: str  # rgp_…
    name: str
    description: str | None
    created_at: dt.datetime
    # Ports an admin allows the group's printers besides 9100, 6101 and 515.
    printer_ports: tuple[int, ...] = ()


@dataclass(frozen=True)
class RunnerRecord:
    id: str  # run_…
    group_id: str
    name: str
    hostname: str | None
    version: str | None
    state: str  # "pending" (awaiting approval) | "active"
    certificate_serial: str | None  # hex; only this certificate is accepted
    certificate_not_after: dt.datetime | None
    queue_url: str | None
    last_seen_at: dt.datetime | None
    created_at: dt.datetime
    process_started_at: dt.datetime | None = None  # the first call of its current process


@dataclass(frozen=True)
class EnrollmentTokenRecord:
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


@dataclass(frozen=True)
class EnrollmentRecord:
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


@dataclass(frozen=True)
class ContextRecord:
    """A context parameter of a group or a Runner (deployments keep theirs elsewhere)."""

    owner_id: str  # rgp_… or run_…
    name: str
    value: Any
    updated_at: dt.datetime
    updated_by: str
    revision: int


class _ByKind(GlobalSecondaryIndex["_GroupItem"]):
    """Lists one kind of item (groups by name, runners and enrollments by id)."""

    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class _ByGroup(GlobalSecondaryIndex["_RunnerItem"]):
    class Meta:
        index_name = "by_group"
        projection = AllProjection()

    runner_group = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True, attr_name="pk")


class _GroupItem(Model):
    Meta = _META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=GROUP_SK)
    kind = UnicodeAttribute(default="group")
    sort_key = UnicodeAttribute()  # casefolded name + "#" + id
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    printer_ports = ListAttribute(of=NumberAttribute, null=True)
    by_kind = _ByKind()


class _RunnerItem(Model):
    Meta = _META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=RUNNER_SK)
    kind = UnicodeAttribute(default="runner")
    sort_key = UnicodeAttribute()  # the id: runners list in enrollment order
    group_id = UnicodeAttribute()
    runner_group = UnicodeAttribute()  # = group_id; only runners carry it (the by_group index)
    name = UnicodeAttribute()
    hostname = UnicodeAttribute(null=True)
    version = UnicodeAttribute(null=True)
    state = UnicodeAttribute()
    certificate_serial = UnicodeAttribute(null=True)
    certificate_not_after = UTCDateTimeAttribute(null=True)
    queue_url = UnicodeAttribute(null=True)
    last_seen_at = UTCDateTimeAttribute(null=True)
    process_started_at = UTCDateTimeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    by_kind = _ByKind()
    by_group = _ByGroup()
    # Discovery's rate limit: the time its discoveries are booked up to (see domain.printers).
    discovery_booked_until = UTCDateTimeAttribute(null=True)


class _EnrollmentTokenItem(Model):
    Meta = _META
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


class _EnrollmentItem(Model):
    Meta = _META
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


class _ContextItem(Model):
    Meta = _META
    owner_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # context#<name>
    name = UnicodeAttribute()
    value = JSONAttribute(null=True)  # any JSON value, null too
    updated_at = UTCDateTimeAttribute()
    updated_by = UnicodeAttribute()
    revision = NumberAttribute(default=1)


def context_sk(name: str) -> str:
    return f"context#{name}"


def _token_key(token_hash: str) -> str:
    return f"enrollment-token#{token_hash}"


def _group(item: _GroupItem) -> GroupRecord:
    return record_of(GroupRecord, item)


def _runner(item: _RunnerItem) -> RunnerRecord:
    return record_of(RunnerRecord, item)


def _enrollment(item: _EnrollmentItem) -> EnrollmentRecord:
    return record_of(EnrollmentRecord, item)


def _context(item: _ContextItem) -> ContextRecord:
    return record_of(ContextRecord, item)


def runner_item(runner: RunnerRecord) -> _RunnerItem:
    return item_of(
        _RunnerItem,
        runner,
        sk=RUNNER_SK,
        kind="runner",
        sort_key=runner.id,
        runner_group=runner.group_id,
    )


# --- groups ---------------------------------------------------------------------------------------


def get_group(group_id: str) -> GroupRecord | None:
    item = get_item(_GroupItem, group_id, GROUP_SK)
    return _group(item) if item is not None else None


def add_group(uow: UnitOfWork, group: GroupRecord) -> None:
    item = item_of(
        _GroupItem, group, sk=GROUP_SK, kind="group", sort_key=f"{group.name.casefold()}#{group.id}"
    )
    uow.put(item, _GroupItem.id.does_not_exist(), name="group.absent")


def update_group(uow: UnitOfWork, before: GroupRecord, after: GroupRecord) -> None:
    """`group.exists` fails when the group is gone."""
    uow.update(
        _GroupItem(before.id, GROUP_SK),
        changes(_GroupItem, before, after),
        _GroupItem.id.exists(),
        name="group.exists",
    )


def page_groups(limit: int, cursor: str | None) -> Page[GroupRecord]:
    def query(**page: Any) -> Any:
        return _GroupItem.by_kind.query("group", **page)

    return read_page(query, {"pk", "sk", "kind", "sort_key"}, limit, cursor, _group)


# --- runners --------------------------------------------------------------------------------------


def get_runner(runner_id: str) -> RunnerRecord | None:
    item = get_item(_RunnerItem, runner_id, RUNNER_SK)
    return _runner(item) if item is not None else None


def get_runners(runner_ids: list[str]) -> list[RunnerRecord]:
    """The Runners of these ids that exist, in one batch read."""
    keys = [(runner_id, RUNNER_SK) for runner_id in dict.fromkeys(runner_ids)]
    return [_runner(item) for item in _RunnerItem.batch_get(keys)] if keys else []


def page_runners(limit: int, cursor: str | None, group_id: str | None) -> Page[RunnerRecord]:
    if group_id is not None:

        def query(**page: Any) -> Any:
            return _RunnerItem.by_group.query(group_id, **page)

        return read_page(query, {"pk", "sk", "runner_group"}, limit, cursor, _runner)

    def query_all(**page: Any) -> Any:
        return _RunnerItem.by_kind.query("runner", **page)

    return read_page(query_all, {"pk", "sk", "kind", "sort_key"}, limit, cursor, _runner)


def runners_of(group_id: str) -> list[RunnerRecord]:
    return [_runner(item) for item in _RunnerItem.by_group.query(group_id)]


def add_runner(uow: UnitOfWork, runner: RunnerRecord) -> None:
    uow.put(runner_item(runner), _RunnerItem.id.does_not_exist(), name="runner.absent")


def update_runner(uow: UnitOfWork, before: RunnerRecord, after: RunnerRecord) -> None:
    """`runner.exists` fails when the Runner was removed meanwhile."""
    uow.update(
        _RunnerItem(before.id, RUNNER_SK),
        changes(_RunnerItem, before, after),
        _RunnerItem.id.exists(),
        name="runner.exists",
    )


def touch_runner(runner_id: str, **fields: Any) -> bool:
    """Set `fields` (last seen, hostname, version) on the Runner, never bringing back a removed
    one; False if it is gone."""
    actions = [getattr(_RunnerItem, name).set(value) for name, value in fields.items()]
    try:
        _RunnerItem(runner_id, RUNNER_SK).update(actions=actions, condition=_RunnerItem.id.exists())
    except UpdateError as error:
        if error.cause_response_code == "ConditionalCheckFailedException":
            return False
        raise
    return True


def discovery_schedule(runner_id: str) -> dt.datetime | None:
    """When the Runner's discoveries are booked up to (None: never discovered)."""
    try:
        item = _RunnerItem.get(runner_id, RUNNER_SK, consistent_read=True)
    except _RunnerItem.DoesNotExist:
        return None
    return item.discovery_booked_until


def book_discovery(runner_id: str, seen: dt.datetime | None, booked_until: dt.datetime) -> bool:
    """Move the Runner's booking from `seen` (what the caller read) to `booked_until`, in one
    conditional write: False when another discovery booked meanwhile (read again, retry)."""
    attribute = _RunnerItem.discovery_booked_until
    unchanged = attribute.does_not_exist() if seen is None else attribute == seen
    try:
        _RunnerItem(runner_id, RUNNER_SK).update(
            actions=[attribute.set(booked_until)], condition=_RunnerItem.id.exists() & unchanged
        )
    except UpdateError as error:
        if error.cause_response_code != "ConditionalCheckFailedException":
            raise
        return False
    return True


def delete_runner(uow: UnitOfWork, runner: RunnerRecord) -> None:
    uow.delete(_RunnerItem(runner.id, RUNNER_SK), _RunnerItem.id.exists(), name="runner.exists")


# --- enrollment -----------------------------------------------------------------------------------


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
    uow.put(item, _EnrollmentTokenItem.key.does_not_exist(), name="token.absent")


def use_enrollment_token(
    uow: UnitOfWork, token: EnrollmentTokenRecord, at: dt.datetime, enrollment_id: str
) -> None:
    """`token.unused` fails when the token was used meanwhile (tokens are one-time)."""
    uow.update(
        _EnrollmentTokenItem(_token_key(token.token_hash), TOKEN_SK),
        [_EnrollmentTokenItem.used_at.set(at), _EnrollmentTokenItem.used_by.set(enrollment_id)],
        _EnrollmentTokenItem.used_at.does_not_exist(),
        name="token.unused",
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
    uow.put(item, _EnrollmentItem.id.does_not_exist(), name="enrollment.absent")


def update_enrollment(uow: UnitOfWork, before: EnrollmentRecord, after: EnrollmentRecord) -> None:
    """`enrollment.unchanged` fails when its status moved meanwhile."""
    uow.update(
        _EnrollmentItem(before.id, ENROLLMENT_SK),
        changes(_EnrollmentItem, before, after),
        _EnrollmentItem.status == before.status,
        name="enrollment.unchanged",
    )


# --- context parameters ---------------------------------------------------------------------------


def page_context(owner_id: str, limit: int, cursor: str | None) -> Page[ContextRecord]:
    def query(**page: Any) -> Any:
        return _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#"), **page)

    return read_page(query, {"pk", "sk"}, limit, cursor, _context)


def context_of(owner_id: str) -> list[ContextRecord]:
    return [
        _context(item)
        for item in _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#"))
    ]


def get_context(owner_id: str, name: str) -> ContextRecord | None:
    item = get_item(_ContextItem, owner_id, context_sk(name))
    return _context(item) if item is not None else None


def put_context(uow: UnitOfWork, parameter: ContextRecord) -> None:
    uow.put(item_of(_ContextItem, parameter, sk=context_sk(parameter.name)))


def delete_context(uow: UnitOfWork, parameter: ContextRecord) -> None:
    uow.delete(_ContextItem(parameter.owner_id, context_sk(parameter.name)))


def delete_context_of(owner_id: str) -> None:
    for item in _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#")):
        item.delete()
