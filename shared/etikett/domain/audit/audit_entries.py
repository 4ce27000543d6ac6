"""Reading the audit log back: an entry by id, and entries filtered by who, which operation,
which target and when, as the audit API and log questions show them."""

from datetime import datetime
from typing import Any, Literal

from etikett import clock
from etikett.domain.audit.audit import Outcome
from etikett.store import audit as audit_log
from etikett.store.audit import AuditRecord
from etikett.store.pages import Page
from etikett_engine.errors import InvalidRequest, NotFound, ProblemCode
from etikett_engine.model import Model


class AuditEntry(Model):
    id: str
    at: str
    actor: Literal["human", "service", "anonymous", "system"]
    subject: str
    operation_id: str
    target_id: str | None
    outcome: Outcome
    code: str | None = None
    request_id: str | None = None
    details: dict[str, Any] | None = None


def _view(entry: AuditRecord) -> AuditEntry:
    return AuditEntry(
        id=entry.id,
        at=clock.rfc3339(entry.at),
        actor=entry.actor,
        subject=entry.subject,
        operation_id=entry.operation_id,
        target_id=entry.target_id,
        outcome=entry.outcome,
        code=entry.code,
        request_id=entry.request_id,
        details=entry.details,
    )


def get_entry(entry_id: str) -> AuditEntry:
    found = audit_log.get(entry_id)
    if found is None:
        raise NotFound(
            f"No audit-log entry {entry_id}.", ProblemCode.AUDIT_NOT_FOUND, entry_id=entry_id
        )
    return _view(found)


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
    """Newest first, filtered by who, which operation, which target and when."""
    since = clock.as_utc(since) if since else None
    until = clock.as_utc(until) if until else None
    if since and until and since > until:
        raise InvalidRequest(
            "`since` is after `until`.", since=clock.rfc3339(since), until=clock.rfc3339(until)
        )
    found = audit_log.page(
        actor=actor,
        operation=operation,
        target=target,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )
    return Page(items=[_view(entry) for entry in found.items], next_cursor=found.next_cursor)
