"""Runner groups and Runners in the runners table. The table holds more, items told apart by
their sort key: enrollment tokens and enrollments (`runner_enrollment`), context parameters
(`runner_context`) and the service CA (`ca`), each module with its own items on `META`."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import (
    Item,
    changes,
    condition_failed,
    get_item,
    item_of,
    record_of,
    table_meta,
)
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

META = table_meta("runners_table")  # the table, for the modules of its other items

GROUP_SK = "group"
RUNNER_SK = "runner"


class GroupRecord(NamedTuple):
    id: str  # rgp_…
    name: str
    description: str | None
    created_at: dt.datetime
    # Ports an admin allows the group's printers besides 9100, 6101 and 515.
    printer_ports: tuple[int, ...] = ()


class RunnerRecord(NamedTuple):
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
    online_since: dt.datetime | None = None  # the heartbeat that found it offline before
    # What it printed offline and has not synced: {unsynced_labels, oldest_unsynced_at}.
    offline_report: dict[str, Any] | None = None
    # A Runner that waits for wakes polls its queue until then (runner_wakes); None: it polls
    # all the time (it never said it waits for wakes).
    awake_until: dt.datetime | None = None
    # Its certificate as registered with AWS IoT Core (the broker it waits for wakes at).
    wake_certificate_id: str | None = None


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


class _GroupItem(Item):
    Meta = META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=GROUP_SK)
    kind = UnicodeAttribute(default="group")
    sort_key = UnicodeAttribute()  # casefolded name + "#" + id
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    printer_ports = ListAttribute(of=NumberAttribute, null=True)
    by_kind = _ByKind()


class _RunnerItem(Item):
    Meta = META
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
    online_since = UTCDateTimeAttribute(null=True)
    offline_report = JSONAttribute(null=True)
    awake_until = UTCDateTimeAttribute(null=True)
    wake_certificate_id = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    by_kind = _ByKind()
    by_group = _ByGroup()
    # Discovery's rate limit: the time its discoveries are booked up to (see domain.discovery).
    discovery_booked_until = UTCDateTimeAttribute(null=True)


def _group(item: _GroupItem) -> GroupRecord:
    return record_of(GroupRecord, item)


def _runner(item: _RunnerItem) -> RunnerRecord:
    return record_of(RunnerRecord, item)


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
    uow.put(item, _GroupItem.id.does_not_exist(), name=ConditionName.GROUP_ABSENT)


def update_group(uow: UnitOfWork, before: GroupRecord, after: GroupRecord) -> None:
    """`group.exists` fails when the group is gone."""
    uow.update(
        _GroupItem(before.id, GROUP_SK),
        changes(_GroupItem, before, after),
        _GroupItem.id.exists(),
        name=ConditionName.GROUP_EXISTS,
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
    uow.put(runner_item(runner), _RunnerItem.id.does_not_exist(), name=ConditionName.RUNNER_ABSENT)


def update_runner(uow: UnitOfWork, before: RunnerRecord, after: RunnerRecord) -> None:
    """`runner.exists` fails when the Runner was removed meanwhile."""
    uow.update(
        _RunnerItem(before.id, RUNNER_SK),
        changes(_RunnerItem, before, after),
        _RunnerItem.id.exists(),
        name=ConditionName.RUNNER_EXISTS,
    )


def touch_runner(runner_id: str, **fields: Any) -> bool:
    """Set `fields` (last seen, hostname, version) on the Runner, never bringing back a removed
    one; False if it is gone."""
    return _set_if(runner_id, _RunnerItem.id.exists(), fields)


def beat_while_online(
    runner_id: str, serial: str, online_after: dt.datetime, **fields: Any
) -> bool:
    """Set `fields` on a Runner that is active with certificate `serial` and was last seen no
    earlier than `online_after` (online), in one conditional write; False if it is not so (or
    gone): the caller reads it then."""
    condition = (
        (_RunnerItem.state == "active")
        & (_RunnerItem.certificate_serial == serial)
        & (_RunnerItem.last_seen_at >= online_after)
    )
    return _set_if(runner_id, condition, fields)


def _set_if(runner_id: str, condition: Condition, fields: dict[str, Any]) -> bool:
    """Set `fields` on the Runner if `condition` holds; False if it does not."""
    actions = [getattr(_RunnerItem, name).set(value) for name, value in fields.items()]
    try:
        _RunnerItem(runner_id, RUNNER_SK).update(actions=actions, condition=condition)
    except UpdateError as error:
        if condition_failed(error):
            return False
        raise
    return True


def check_process_since(
    uow: UnitOfWork,
    runner_id: str,
    began: dt.datetime,
    *,
    serial: str | None = None,
    name: ConditionName,
) -> None:
    """In `uow`: the Runner's current process started no later than `began` (a long poll that
    began then still speaks for it), and with `serial` the Runner is active with that
    certificate (else a removed Runner passes: its queue went with it)."""
    started = _RunnerItem.process_started_at
    condition = started.does_not_exist() | (started <= began)
    if serial is not None:
        condition = (
            condition & (_RunnerItem.state == "active") & (_RunnerItem.certificate_serial == serial)
        )
    uow.check(_RunnerItem, runner_id, RUNNER_SK, condition, name=name)


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
        if not condition_failed(error):
            raise
        return False
    return True


def delete_runner(uow: UnitOfWork, runner: RunnerRecord) -> None:
    uow.delete(
        _RunnerItem(runner.id, RUNNER_SK), _RunnerItem.id.exists(), name=ConditionName.RUNNER_EXISTS
    )
