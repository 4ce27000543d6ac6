"""What an accepted offline print writes, as an online print's (printing.py) and marked as
printed offline: a finished job, its `print.*` event, its audit entry and one archive entry per
record, under ids derived from the print's — so that writing it twice is impossible (the job's
condition) and writing its entries again harmless."""

import hashlib
from datetime import datetime
from typing import Any, NamedTuple

from ulid import ULID

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.offline_sync.checks import Refusal
from etikett.domain.offline_sync.models import OfflinePrintIn, printed_time
from etikett.domain.printing.jobs import message, outcome_event
from etikett.store import archive, events, jobs
from etikett.store import audit as audit_log
from etikett.store.archive import ArchiveRecord
from etikett.store.audit import AuditRecord
from etikett.store.events import EventRecord
from etikett.store.jobs import JobRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import MAX_WRITES, UnitOfWork

# The job, its audit entry and its event leave this many writes of a transaction for entries.
_IN_ONE_TRANSACTION = MAX_WRITES - 3
UNKNOWN_OUTCOME = "offline_outcome_unknown"


def job_id_of(print_id: str) -> str:
    return "job_" + print_id.removeprefix("opr_")


def entry_id_of(print_id: str, index: int) -> str:
    """The archive entry of a print's record `index`: a ULID of the print's time (entries sort
    where they were printed), then the index (a job's entries in record order), then the print's
    id hashed: the same id on every retry."""
    at = ULID.from_str(print_id.removeprefix("opr_")).bytes[:6]
    digest = hashlib.sha256(print_id.encode()).digest()[:7]
    return f"arc_{ULID.from_bytes(at + index.to_bytes(3, 'big') + digest)}"


class Archived(NamedTuple):
    """What one accepted print writes: its job, event, audit entry and archive entries."""

    job: JobRecord
    event: EventRecord
    audit: AuditRecord
    entries: list[ArchiveRecord]

    @property
    def writes(self) -> int:
        """Its writes in a transaction (0: too many records, its entries go first on their own)."""
        return 3 + len(self.entries) if len(self.entries) <= _IN_ONE_TRANSACTION else 0


def build(
    invocation: Invocation,
    runner: RunnerRecord,
    taken: OfflinePrintIn,
    flag: str | None,
    printer_name: str,
) -> Archived:
    now = clock.now()
    printed_at = printed_time(taken.printed_at)
    outcome = taken.outcome or "failed"
    reason = taken.outcome_reason if taken.outcome else UNKNOWN_OUTCOME
    outcome_at = printed_time(taken.outcome_at) if taken.outcome_at else printed_at
    job = JobRecord(
        id=job_id_of(taken.id),
        kind="print",
        status=outcome,
        runner_id=runner.id,
        printer_id=taken.printer_id,
        payload=_payload(taken, printer_name, printed_at, flag),
        messages=_messages(taken, printed_at, outcome, reason),
        outcome=outcome,
        outcome_reason=reason,
        outcome_at=outcome_at,
        result=None,
        attempts=1,
        created_at=printed_at,
        created_by=invocation.caller.subject if invocation.caller else "system",
        updated_at=now,
        finished_at=outcome_at,
    )
    event = outcome_event(job, outcome, reason)
    assert event is not None
    event = event._replace(
        data={**event.data, "printed_offline": True, "printed_at": clock.rfc3339(printed_at)}
        | ({"flag": flag} if flag else {})
    )
    entries = _entries(taken, job.id, printer_name, printed_at, flag, job.created_by)
    return Archived(job, event, _audit_entry(invocation, taken, job, flag), entries)


def commit(prints: list[Archived]) -> None:
    """The prints' jobs (each on the condition that it is new), events, audit entries and
    archive entries in one transaction; ConditionFailed(JOB_ABSENT) if a job exists already,
    and then nothing was written. A print of too many records for one transaction has its
    entries written first (the same ids and contents on every retry) and goes alone."""
    for archived in prints:
        if not archived.writes:
            archive.add_all(archived.entries)
    with UnitOfWork() as uow:
        for archived in prints:
            uow.add_audit(archived.audit)
            jobs.add(uow, archived.job)
            events.add(uow, archived.event)
            if archived.writes:
                archive.add(uow, archived.entries)


def _payload(
    taken: OfflinePrintIn, printer_name: str, printed_at: datetime, flag: str | None
) -> dict[str, Any]:
    labels_printed = len(taken.records)
    return {
        "label_id": taken.label_id,
        "label_version": taken.label_version,
        "printer": {"printer_id": taken.printer_id, "name": printer_name},
        "labels": labels_printed,
        "copies": taken.copies,
        "expected_labels": labels_printed * taken.copies,
        "printed_offline": True,
        "printed_at": clock.rfc3339(printed_at),
        "print_id": taken.id,
        "run_id": taken.run_id,
        "deployment_id": taken.deployment_id,
        "flow_id": taken.flow_id,
        "flow_version": taken.flow_version,
        "flag": flag,
    }


def _messages(
    taken: OfflinePrintIn, printed_at: datetime, outcome: str, reason: str | None
) -> tuple[Any, ...]:
    notes = [
        message(
            "info",
            f"Printed by the Runner without the service at {clock.rfc3339(printed_at)} "
            f"(offline print {taken.id}); synced now.",
        )
    ]
    if taken.outcome is None:
        notes.append(
            message(
                "warning",
                "The Runner stopped between sending the job and the printer's answer: the "
                "labels may or may not be on paper. Check before printing them again.",
            )
        )
    elif outcome == "failed":
        notes.append(message("error", f"The printer did not take it: {reason or 'failed'}."))
    return tuple(notes)


def _entries(
    taken: OfflinePrintIn,
    job_id: str,
    printer_name: str,
    printed_at: datetime,
    flag: str | None,
    subject: str,
) -> list[ArchiveRecord]:
    return [
        ArchiveRecord(
            id=entry_id_of(taken.id, index),
            job_id=job_id,
            record_index=index,
            label_id=taken.label_id,
            label_version=taken.label_version,
            printer=printer_name,
            printer_id=taken.printer_id,
            copies=taken.copies,
            variables=item.variables,
            serials=item.serials,
            actor="service",
            subject=subject,
            created_at=printed_at,
            printed_offline=True,
            printed_at=printed_at,
            flag=flag,
        )
        for index, item in enumerate(taken.records)
    ]


# --- auditing -----------------------------------------------------------------------------------


def _audit_entry(
    invocation: Invocation, taken: OfflinePrintIn, job: JobRecord, flag: str | None
) -> AuditRecord:
    """As an online print's (on the job), with what makes it an offline one."""
    values: dict[str, list[int]] = {}
    for item in taken.records:
        for counter, value in item.counter_values.items():
            values.setdefault(counter, []).append(value)
    return audit.record(
        invocation,
        job.id,
        details={
            "kind": "print",
            "runner_id": job.runner_id,
            "printer_id": job.printer_id,
            "label_id": taken.label_id,
            "label_version": taken.label_version,
            "printer": job.payload["printer"]["name"],
            "labels": len(taken.records),
            "copies": taken.copies,
            "serials": {name: [min(v), max(v)] for name, v in values.items()},
            "printed_offline": True,
            "printed_at": job.payload["printed_at"],
            "print_id": taken.id,
            "deployment_id": taken.deployment_id,
            "outcome": job.outcome,
            "flag": flag,
        },
    )


def audit_refusal(invocation: Invocation, taken: OfflinePrintIn, refusal: Refusal) -> None:
    """A refused print changes nothing; its entry is written on its own (on the deployment)."""
    entry = audit.record(
        invocation,
        taken.deployment_id,
        outcome="refused",
        details={"print_id": taken.id, "reason": refusal.reason, "detail": refusal.detail},
    )
    audit_log.append(entry)
