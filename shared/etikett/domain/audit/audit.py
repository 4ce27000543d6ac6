"""The audit log: the entries written with every mutating operation. Reading them back (the audit
API's entries) is in `audit_entries`."""

from __future__ import annotations

from typing import Any, Literal

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.ids import new_id
from etikett.store import audit as audit_log
from etikett.store.audit import AuditRecord
from etikett_engine.errors import ProblemCode

Outcome = Literal["success", "refused"]


def record(
    invocation: Invocation,
    target_id: str | None,
    *,
    outcome: Outcome = "success",
    code: ProblemCode | None = None,
    details: dict[str, Any] | None = None,
    subject: str | None = None,
) -> AuditRecord:
    """The audit entry of `invocation`, to be written with the change (`UnitOfWork(entry)`)."""
    caller = invocation.caller
    at = clock.now()  # the id's time is the entry's: a time range selects it by its id
    return AuditRecord(
        id=new_id("aud", at=at),
        at=at,
        actor=caller.actor if caller else "anonymous",
        subject=subject or (caller.subject if caller else "anonymous"),
        operation_id=invocation.operation_id,
        target_id=target_id,
        outcome=outcome,
        code=str(code) if code is not None else None,
        request_id=invocation.request_id,
        details=details,
    )


SYSTEM_SUBJECT = "etikett"


def system(operation_id: str, target_id: str, details: dict[str, Any]) -> AuditRecord:
    """The entry of a step the service takes on its own (a stage that became active, a
    deployment superseded): actor `system`, written with the change like any other."""
    at = clock.now()
    return AuditRecord(
        id=new_id("aud", at=at),
        at=at,
        actor="system",
        subject=SYSTEM_SUBJECT,
        operation_id=operation_id,
        target_id=target_id,
        outcome="success",
        code=None,
        request_id=None,
        details=details,
    )


def record_refusal(
    invocation: Invocation,
    code: ProblemCode,
    *,
    target_id: str | None = None,
    subject: str | None = None,
) -> None:
    """A refused mutating operation changes nothing, so its entry is written on its own."""
    audit_log.append(record(invocation, target_id, outcome="refused", code=code, subject=subject))
