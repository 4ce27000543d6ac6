"""The audit log: entries written with every mutating operation, and reading them back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.errors import InvalidRequest, NotFound
from etikett.ids import new_id, ulid_bound
from etikett.store.audit import STREAM, AuditRecord
from etikett.store.pages import Page, read_page

Outcome = Literal["success", "refused"]


class AuditEntry(BaseModel):
    id: str
    at: str
    actor: Literal["human", "service", "anonymous"]
    subject: str
    operation_id: str
    target_id: str | None
    outcome: Outcome
    code: str | None = None
    request_id: str | None = None
    details: dict[str, Any] | None = None


def entry(
    invocation: Invocation,
    target_id: str | None,
    *,
    outcome: Outcome = "success",
    code: str | None = None,
    details: dict[str, Any] | None = None,
    subject: str | None = None,
) -> AuditRecord:
    """An audit record for `invocation`, to be written in the same transaction as the change."""
    caller = invocation.caller
    return AuditRecord(
        id=new_id("aud"),
        stream=STREAM,
        at=clock.now(),
        actor=caller.actor if caller else "anonymous",
        subject=subject or (caller.subject if caller else "anonymous"),
        operation_id=invocation.operation_id,
        target_id=target_id,
        outcome=outcome,
        code=code,
        request_id=invocation.request_id,
        details=details,
    )


def record_refusal(
    invocation: Invocation, code: str, *, target_id: str | None = None, subject: str | None = None
) -> None:
    """A refused mutating operation changes nothing, so its entry is written on its own."""
    entry(invocation, target_id, outcome="refused", code=code, subject=subject).save()


def _view(record: AuditRecord) -> AuditEntry:
    return AuditEntry(
        id=record.id,
        at=clock.rfc3339(record.at),
        actor=record.actor,  # type: ignore[arg-type]
        subject=record.subject,
        operation_id=record.operation_id,
        target_id=record.target_id,
        outcome=record.outcome,  # type: ignore[arg-type]
        code=record.code,
        request_id=record.request_id,
        details=record.details.as_dict() if record.details is not None else None,
    )


def _utc(moment: datetime | None) -> datetime | None:
    """A time without an offset is read as UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def get_entry(entry_id: str) -> AuditEntry:
    try:
        return _view(AuditRecord.get(entry_id))
    except AuditRecord.DoesNotExist:
        raise NotFound(
            f"No audit-log entry {entry_id}.", "audit.not_found", entry_id=entry_id
        ) from None


def list_entries(
    *,
    actor: str | None = None,
    operation: str | None = None,
    target: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int,
    cursor: str | None,
) -> Page[AuditEntry]:
    """Newest first. The most selective filter picks the index; the others filter its pages.

    Ids are ULIDs, so a time range is a key range on every index, not a filter.
    """
    since, until = _utc(since), _utc(until)
    if since and until and since > until:
        raise InvalidRequest(
            "`since` is after `until`.", since=clock.rfc3339(since), until=clock.rfc3339(until)
        )
    range_condition = None
    if since or until:
        low = f"aud_{ulid_bound(int(since.timestamp() * 1000))}" if since else "aud_"
        high = f"aud_{ulid_bound(int(until.timestamp() * 1000), upper=True)}" if until else "aud_~"
        range_condition = AuditRecord.id.between(low, high)

    if target is not None:
        index, hash_name, hash_value = AuditRecord.by_target, "target_id", target
    elif actor is not None:
        index, hash_name, hash_value = AuditRecord.by_subject, "subject", actor
    elif operation is not None:
        index, hash_name, hash_value = AuditRecord.by_operation, "operation_id", operation
    else:
        index, hash_name, hash_value = AuditRecord.by_time, "stream", STREAM

    filters = []
    if actor is not None and index is not AuditRecord.by_subject:
        filters.append(AuditRecord.subject == actor)
    if operation is not None and index is not AuditRecord.by_operation:
        filters.append(AuditRecord.operation_id == operation)
    filter_condition = None
    for condition in filters:
        filter_condition = condition if filter_condition is None else filter_condition & condition

    key_names = {"id", hash_name}

    def query(**page: Any) -> Any:
        return index.query(
            hash_value,
            range_key_condition=range_condition,
            filter_condition=filter_condition,
            scan_index_forward=False,
            **page,
        )

    return read_page(query, key_names, limit, cursor, _view)
