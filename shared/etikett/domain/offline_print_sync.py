"""Taking in a Runner's offline prints (postRunnerOfflinePrints): each checked on its own —
refused with a reason, or archived exactly once (offline_prints.py) — so one bad print never
holds back the others, and never leaves half of itself written."""

import hashlib
import logging
from datetime import datetime
from typing import Any

from ulid import ULID

from etikett import clock
from etikett.domain import audit, runner_flows
from etikett.domain.actors import Caller, Invocation
from etikett.domain.jobs import message, outcome_event
from etikett.domain.offline_prints import (
    OfflinePrintIn,
    OfflinePrintsAnswer,
    OfflinePrintsUpload,
    PrintSynced,
    printed_time,
)
from etikett.domain.print_targets import parse_reference
from etikett.store import archive, counters, events, jobs, labels, printers
from etikett.store import audit as audit_log
from etikett.store import deployments as deployment_store
from etikett.store.archive import ArchiveRecord
from etikett.store.conditions import ConditionName
from etikett.store.counters import BlockRecord
from etikett.store.jobs import JobRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import MAX_WRITES, ConditionFailed, UnitOfWork
from etikett_engine.errors import EtikettError

log = logging.getLogger(__name__)

OPERATION = "postRunnerOfflinePrints"
# The job, its audit entry and its event leave this many writes of a transaction for entries;
# a print of more records writes its entries first (by ids derived from the print's, so a retry
# writes the same ones again) and its job last.
_IN_ONE_TRANSACTION = MAX_WRITES - 3
UNKNOWN_OUTCOME = "offline_outcome_unknown"


class Refusal(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def job_id_of(print_id: str) -> str:
    return "job_" + print_id.removeprefix("opr_")


def entry_id_of(print_id: str, index: int) -> str:
    """The archive entry of a print's record `index`: a ULID of the print's time (entries sort
    where they were printed), then the index (a job's entries in record order), then the print's
    id hashed: the same id on every retry."""
    at = ULID.from_str(print_id.removeprefix("opr_")).bytes[:6]
    digest = hashlib.sha256(print_id.encode()).digest()[:7]
    return f"arc_{ULID.from_bytes(at + index.to_bytes(3, 'big') + digest)}"


def sync(runner: RunnerRecord, upload: OfflinePrintsUpload) -> OfflinePrintsAnswer:
    invocation = Invocation(
        Caller(actor="service", subject=f"runner:{runner.name}", roles=frozenset({"operator"})),
        OPERATION,
    )
    blocks: dict[str, list[BlockRecord]] = {}  # counter → this Runner's blocks, read once
    answers = [_one(invocation, runner, taken, blocks) for taken in upload.prints]
    return OfflinePrintsAnswer(prints=answers)


def _one(
    invocation: Invocation,
    runner: RunnerRecord,
    taken: OfflinePrintIn,
    blocks: dict[str, list[BlockRecord]],
) -> PrintSynced:
    job_id = job_id_of(taken.id)
    try:
        earlier = _earlier(runner, taken, job_id)
        if earlier is not None:
            return earlier
        flag, printer_name = _check(runner, taken, blocks)
        if not _archive(invocation, runner, taken, job_id, flag, printer_name):
            again = _earlier(runner, taken, job_id)  # a concurrent upload of it got there first
            if again is not None:
                return again
            raise Refusal("id_conflict", f"The job id {job_id} is taken.")
    except Refusal as refusal:
        _audit_refusal(invocation, taken, refusal)
        log.warning("offline print %s refused: %s", taken.id, refusal.reason)
        return PrintSynced(
            id=taken.id, result="refused", reason=refusal.reason, detail=refusal.detail
        )
    return PrintSynced(id=taken.id, result="accepted", job_id=job_id, flag=flag)


def _earlier(runner: RunnerRecord, taken: OfflinePrintIn, job_id: str) -> PrintSynced | None:
    """The answer for a print archived before (None: it was not)."""
    record = jobs.get(job_id)
    if record is None:
        return None
    if record.runner_id != runner.id or record.payload.get("print_id") != taken.id:
        raise Refusal("id_conflict", f"The job id {job_id} is another job's.")
    flag = record.payload.get("flag")
    return PrintSynced(id=taken.id, result="already", job_id=job_id, flag=flag)


# --- checking -----------------------------------------------------------------------------------


def _check(
    runner: RunnerRecord, taken: OfflinePrintIn, blocks: dict[str, list[BlockRecord]]
) -> tuple[Any, str]:
    """The print's flag (None: nothing to flag) and its printer's name; a Refusal if it cannot
    be archived at all."""
    record = deployment_store.get(taken.deployment_id)
    groups = {g for stage in record.stages for g in stage["group_ids"]} if record else set()
    if record is None or runner.group_id not in groups:
        raise Refusal(
            "deployment_not_in_group",
            f"{taken.deployment_id} is not a deployment to this Runner's group.",
        )
    if (taken.flow_id, taken.flow_version) != (record.flow_id, int(record.version)):
        raise Refusal(
            "flow_not_deployed",
            f"{record.id} deploys version {record.version} of {record.flow_id}, not version "
            f"{taken.flow_version} of {taken.flow_id}.",
        )
    _check_label(taken, record)
    printer_name = _check_printer(runner, taken)
    for index, item in enumerate(taken.records):
        for counter, value in item.counter_values.items():
            if not _reserved(runner, counter, value, blocks):
                raise Refusal(
                    "counter_value_not_reserved",
                    f"Record {index}: {value} of counters.{counter} is in no block this Runner "
                    "reserved.",
                )
    flag = None
    if not runner_flows.runs_in_group(runner, record):
        flag = "deployment_not_approved"
    elif not (record.offline or {}).get("allowed", False):
        flag = "offline_not_allowed"
    return flag, printer_name


def _check_label(taken: OfflinePrintIn, record: deployment_store.DeploymentRecord) -> None:
    named = set()
    for reference, alias in runner_flows.print_targets(record.flow_id, int(record.version)):
        try:
            label_id, version = parse_reference(reference)
        except EtikettError:
            continue
        if alias == taken.printer and label_id == taken.label_id:
            named.add(version)
    if not named or (None not in named and taken.label_version not in named):
        raise Refusal(
            "label_not_in_flow",
            f"Version {record.version} of {record.flow_id} prints no version "
            f"{taken.label_version} of {taken.label_id} to the alias {taken.printer!r}.",
        )
    stored = labels.get_version(taken.label_id, "label", taken.label_version)
    if stored is None:
        raise Refusal(
            "label_version_not_found",
            f"{taken.label_id} has no version {taken.label_version}.",
        )
    if stored.status == "draft":  # no bundle carries a draft; retired since is fine
        raise Refusal(
            "label_version_not_approved",
            f"Version {taken.label_version} of {taken.label_id} was never approved.",
        )


def _check_printer(runner: RunnerRecord, taken: OfflinePrintIn) -> str:
    """The printer's name; a printer deleted since it printed is named by its alias."""
    printer = printers.get(taken.printer_id)
    if printer is None:
        return taken.printer
    if printer.runner_id != runner.id:
        raise Refusal("printer_not_this_runners", f"{taken.printer_id} is not this Runner's.")
    return str(printer.name)


def _reserved(
    runner: RunnerRecord, counter: str, value: int, blocks: dict[str, list[BlockRecord]]
) -> bool:
    if counter not in blocks:
        blocks[counter] = counters.blocks_of(runner.id, counter)
    return any(
        block.first <= value <= block.first + block.step * (block.size - 1)
        and (value - block.first) % block.step == 0
        for block in blocks[counter]
    )


# --- archiving ----------------------------------------------------------------------------------


def _archive(
    invocation: Invocation,
    runner: RunnerRecord,
    taken: OfflinePrintIn,
    job_id: str,
    flag: str | None,
    printer_name: str,
) -> bool:
    """The job, its archive entries, audit entry and event; False if the job exists already."""
    now = clock.now()
    printed_at = printed_time(taken.printed_at)
    outcome = taken.outcome or "failed"
    reason = taken.outcome_reason if taken.outcome else UNKNOWN_OUTCOME
    outcome_at = printed_time(taken.outcome_at) if taken.outcome_at else printed_at
    job = JobRecord(
        id=job_id,
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
    subject = job.created_by
    entries = _entries(taken, job_id, printer_name, printed_at, flag, subject)
    small = len(entries) <= _IN_ONE_TRANSACTION
    if not small:
        archive.add_all(entries)  # the same ids and contents on every retry
    try:
        with UnitOfWork(_audit_entry(invocation, taken, job, flag)) as uow:
            jobs.add(uow, job)
            events.add(uow, event)
            if small:
                archive.add(uow, entries)
    except ConditionFailed as failed:
        if failed.name == ConditionName.JOB_ABSENT:
            return False
        raise
    return True


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
) -> audit_log.AuditRecord:
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


def _audit_refusal(invocation: Invocation, taken: OfflinePrintIn, refusal: Refusal) -> None:
    """A refused print changes nothing; its entry is written on its own (on the deployment)."""
    entry = audit.record(
        invocation,
        taken.deployment_id,
        outcome="refused",
        details={"print_id": taken.id, "reason": refusal.reason, "detail": refusal.detail},
    )
    audit_log.append(entry)
