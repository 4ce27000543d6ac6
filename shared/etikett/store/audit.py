"""The audit log: one immutable entry per mutating operation, indexed for the log's filters.

Entries are written with the change they record (`UnitOfWork(entry)`), or alone for a refusal
(`append`). Ids are ULIDs, so a time range is a key range on every index, never a filter.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pynamodb.attributes import MapAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.expressions.condition import Condition
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.ids import ulid_bound
from etikett.store.base import get_item, item_of, record_of, table_meta
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

STREAM = "audit"


@dataclass(frozen=True)
class AuditRecord:
    id: str  # aud_<ULID>: sorts by time
    at: dt.datetime
    actor: str  # "human" | "service" | "anonymous"
    subject: str
    operation_id: str
    target_id: str | None
    outcome: str  # "success" | "refused"
    code: str | None = None  # the problem code of a refusal
    request_id: str | None = None
    details: dict[str, Any] | None = None  # before/after versions and similar; never a secret


class _ByTime(GlobalSecondaryIndex["_AuditItem"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _BySubject(GlobalSecondaryIndex["_AuditItem"]):
    class Meta:
        index_name = "by_subject"
        projection = AllProjection()

    subject = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _ByOperation(GlobalSecondaryIndex["_AuditItem"]):
    class Meta:
        index_name = "by_operation"
        projection = AllProjection()

    operation_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _ByTarget(GlobalSecondaryIndex["_AuditItem"]):
    class Meta:
        index_name = "by_target"
        projection = AllProjection()

    target_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _AuditItem(Model):
    Meta = table_meta("audit_table")

    id = UnicodeAttribute(hash_key=True)
    stream = UnicodeAttribute(default=STREAM)
    at = UTCDateTimeAttribute()
    actor = UnicodeAttribute()
    subject = UnicodeAttribute()
    operation_id = UnicodeAttribute()
    target_id = UnicodeAttribute(null=True)
    outcome = UnicodeAttribute()
    code = UnicodeAttribute(null=True)
    request_id = UnicodeAttribute(null=True)
    details = MapAttribute(null=True)

    by_time = _ByTime()
    by_subject = _BySubject()
    by_operation = _ByOperation()
    by_target = _ByTarget()


def _item(record: AuditRecord) -> _AuditItem:
    return item_of(_AuditItem, record, stream=STREAM)


def add(uow: UnitOfWork, record: AuditRecord) -> None:
    """The entry of the change `uow` writes, in its transaction."""
    uow.put(_item(record))


def append(record: AuditRecord) -> None:
    """An entry on its own (a refusal changed nothing else)."""
    _item(record).save()


def get(entry_id: str) -> AuditRecord | None:
    item = get_item(_AuditItem, entry_id)
    return record_of(AuditRecord, item) if item is not None else None


def page(
    *,
    actor: str | None,
    operation: str | None,
    target: str | None,
    since: dt.datetime | None,
    until: dt.datetime | None,
    limit: int,
    cursor: str | None,
) -> Page[AuditRecord]:
    """Newest first. The most selective filter picks the index; the others filter its pages."""
    range_condition = None
    if since or until:
        low = f"aud_{ulid_bound(int(since.timestamp() * 1000))}" if since else "aud_"
        high = f"aud_{ulid_bound(int(until.timestamp() * 1000), upper=True)}" if until else "aud_~"
        range_condition = _AuditItem.id.between(low, high)

    index: Any
    if target is not None:
        index, hash_name, hash_value = _AuditItem.by_target, "target_id", target
    elif actor is not None:
        index, hash_name, hash_value = _AuditItem.by_subject, "subject", actor
    elif operation is not None:
        index, hash_name, hash_value = _AuditItem.by_operation, "operation_id", operation
    else:
        index, hash_name, hash_value = _AuditItem.by_time, "stream", STREAM

    filter_condition: Condition | None = None
    filters = []
    if actor is not None and index is not _AuditItem.by_subject:
        filters.append(_AuditItem.subject == actor)
    if operation is not None and index is not _AuditItem.by_operation:
        filters.append(_AuditItem.operation_id == operation)
    for condition in filters:
        filter_condition = condition if filter_condition is None else filter_condition & condition

    def query(**page: Any) -> Any:
        return index.query(
            hash_value,
            range_key_condition=range_condition,
            filter_condition=filter_condition,
            scan_index_forward=False,
            **page,
        )

    return read_page(
        query, {"id", hash_name}, limit, cursor, lambda item: record_of(AuditRecord, item)
    )
