"""Routes of the Audit log group."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Query

from etikett.api.access import requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit_entries

routes = router(prefix="/api/v1/audit-log", tags=["Audit log"])
Reviewer = Annotated[Invocation, requires("approver", "admin")]
# A filter names something: an empty one would be a key DynamoDB cannot look up.


@routes.get(
    "",
    operation_id="listAuditLog",
    response_model=ItemList[audit_entries.AuditEntry],
    summary="Read the audit log, newest first, filtered by actor, operation, target, time",
)
def list_audit_log(
    invocation: Reviewer,
    actor: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="Subject: a username or token subject."),
    ] = None,
    operation: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="An operationId, e.g. createUser."),
    ] = None,
    target: Annotated[
        str | None,
        Query(min_length=1, max_length=200, description="The id the operation acted on."),
    ] = None,
    since: Annotated[datetime | None, Query(description="RFC 3339, inclusive.")] = None,
    until: Annotated[datetime | None, Query(description="RFC 3339, inclusive.")] = None,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> ItemList[audit_entries.AuditEntry]:
    page = audit_entries.list_entries(
        actor=actor,
        operation=operation,
        target=target,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )
    return ItemList[audit_entries.AuditEntry].of(page)


@routes.get(
    "/{entryId}",
    operation_id="getAuditLogEntry",
    response_model=audit_entries.AuditEntry,
    summary="Read one audit-log entry",
    responses={404: {"description": "Unknown entry (`audit.not_found`)"}},
)
def get_audit_log_entry(entryId: str, invocation: Reviewer) -> audit_entries.AuditEntry:
    return audit_entries.get_entry(entryId)
