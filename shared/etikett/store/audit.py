"""The audit log: one immutable entry per mutating operation, indexed for the log's filters.

Entries are written with the change they record (`UnitOfWork(entry)`), or alone for a refusal
(`append`). Ids are ULIDs, so a time range is a key range on every index, never a filter.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from pynamodb.expressions.condition import Condition

from etikett.ids import ulid_bound
from etikett.store.audit_table import STREAM, AuditItem, AuditRecord, item
from etikett.store.base import get_item, record_of
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

__all__ = ["AuditRecord", "add", "append", "get", "page"]


def add(uow: UnitOfWork, record: AuditRecord) -> None:
    """The entry of the change `uow` writes, in its transaction."""
    uow.put(item(record))


def append(record: AuditRecord) -> None:
    """An entry on its own (a refusal changed nothing else)."""
    item(record).save()


def get(entry_id: str) -> AuditRecord | None:
    item = get_item(AuditItem, entry_id)
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
        range_condition = AuditItem.id.between(low, high)

    index: Any
    if target is not None:
        index, hash_name, hash_value = AuditItem.by_target, "target_id", target
    elif actor is not None:
        index, hash_name, hash_value = AuditItem.by_subject, "subject", actor
    elif operation is not None:
        index, hash_name, hash_value = AuditItem.by_operation, "operation_id", operation
    else:
        index, hash_name, hash_value = AuditItem.by_time, "stream", STREAM

    filter_condition: Condition | None = None
    filters = []
    if actor is not None and index is not AuditItem.by_subject:
        filters.append(AuditItem.subject == actor)
    if operation is not None and index is not AuditItem.by_operation:
        filters.append(AuditItem.operation_id == operation)
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
