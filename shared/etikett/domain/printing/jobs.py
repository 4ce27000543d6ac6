"""Jobs handed to Runners: creation onto the Runner's queue, reading, listing and cancelling.
The Runner's side (claiming, reporting) is in `runner_agent`; raw jobs are in `raw_jobs`."""

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import Field

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.runners import runner_records, runner_wakes
from etikett.ids import new_id
from etikett.store import events, jobs, runner_queues
from etikett.store.events import EventRecord
from etikett.store.jobs import JobMessage, JobRecord
from etikett.store.pages import Page
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import ConditionFailed, UnitOfWork
from etikett_engine.errors import Conflict, NotFound, ProblemCode
from etikett_engine.model import Model

JobStatus = Literal[
    "rendering",
    "queued",
    "running",
    "held",
    "sent",
    "confirmed",
    "succeeded",
    "failed",
    "cancelled",
]
ALL_STATUSES: tuple[str, ...] = get_args(JobStatus)
FINAL = frozenset({"confirmed", "succeeded", "failed", "cancelled"})
# Not `running`: a claimed job's bytes may be on their way to the printer.
CANCELLABLE = frozenset({"rendering", "queued", "held"})
# A print's outcomes (spec part 6); `running` and the others are statuses only.
PRINT_OUTCOMES = frozenset({"failed", "held", "sent", "confirmed"})


class JobMessageView(Model):
    at: str
    level: Literal["info", "warning", "error"]
    text: str


class Job(Model):
    id: str
    kind: Literal["discovery", "raw", "print"]
    status: JobStatus
    runner_id: str
    printer_id: str | None = None
    messages: list[JobMessageView]
    outcome: str | None = Field(
        description="The last outcome recorded (a print's: held, sent, confirmed, failed); "
        "it stays while the job is running."
    )
    outcome_reason: str | None = None
    result: dict[str, Any] | None = None
    attempts: int
    created_at: str
    updated_at: str
    finished_at: str | None = None
    waiting: str | None = Field(
        default=None,
        description="Why a job that is not finished does not move on, when the service knows: "
        "`printer held (paper_out)` while its printer reports a condition that holds it.",
    )
    printed_offline: bool = Field(
        default=False,
        description="A print a Runner made while the service was unreachable, synced since: "
        "it ran before the service knew of it (docs/concepts/offline-sites.md).",
    )
    printed_at: str | None = Field(
        default=None, description="When the Runner printed it offline; else null."
    )
    flag: str | None = Field(
        default=None,
        description="What the sync of an offline print found wrong but kept "
        "(`deployment_not_approved`, `offline_not_allowed`).",
    )


# What a printer reports when it is fine (or has not said): nothing holds the jobs behind it.
_PRINTER_FINE = frozenset({"ready", "unknown", "printing", "idle"})


def message(level: str, text: str) -> JobMessage:
    return JobMessage(at=clock.now(), level=level, text=text[:2000])


def outcome_event(
    job: JobRecord, status: str, reason: str | None, *, at: datetime | None = None
) -> EventRecord | None:
    """The `print.<outcome>` event of a print job's new outcome (none for other kinds and
    statuses). Save it in the transaction that records the outcome (the outbox)."""
    if job.kind != "print" or status not in PRINT_OUTCOMES:
        return None
    payload = job.payload
    return events.new_event(
        f"print.{status}",
        job.id,
        at=at or clock.now(),
        data={
            "job_id": job.id,
            "label_id": payload.get("label_id"),
            "label_version": payload.get("label_version"),
            "printer": payload.get("printer", {}).get("name"),
            "labels": payload.get("labels"),
            "copies": payload.get("copies"),
            "outcome": status,
            "reason": reason,
        },
    )


def view(record: JobRecord) -> Job:
    return Job(
        id=record.id,
        kind=record.kind,
        status=record.status,
        runner_id=record.runner_id,
        printer_id=record.printer_id,
        messages=[
            JobMessageView(at=clock.rfc3339(m.at), level=m.level, text=m.text)
            for m in record.messages
        ],
        outcome=record.outcome,
        outcome_reason=record.outcome_reason,
        result=record.result,
        attempts=record.attempts,
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
        finished_at=clock.rfc3339(record.finished_at) if record.finished_at else None,
        printed_offline=bool(record.payload.get("printed_offline")),
        printed_at=record.payload.get("printed_at"),
        flag=record.payload.get("flag"),
    )


def is_final(record: JobRecord) -> bool:
    """Final by status, or because the Runner said its last word (a final `sent`)."""
    return record.status in FINAL or record.finished_at is not None


def load(job_id: str) -> JobRecord:
    record = jobs.get(job_id)
    if record is None:
        raise NotFound(f"No job {job_id}.", ProblemCode.JOB_NOT_FOUND, job_id=job_id)
    return record


def get(job_id: str) -> Job:
    record = load(job_id)
    return view(record).model_copy(update={"waiting": waiting(record)})


def waiting(record: JobRecord) -> str | None:
    """A job claimed or queued behind a printer that its Runner reports held (out of paper,
    head open, paused, …) waits for that printer; the job's own status cannot say so."""
    if is_final(record) or record.printer_id is None or record.status not in ("queued", "running"):
        return None
    # Loaded here, not at the print_renderer function's cold start.
    from etikett.store import printers

    printer = printers.get(record.printer_id)
    if printer is None or printer.status is None or printer.status in _PRINTER_FINE:
        return None
    return f"printer held ({printer.status})"


def _place_data(job_id: str, data: bytes) -> tuple[dict[str, Any], bytes | None]:
    """Where a job's bytes wait for the Runner: small ones in the queue message (returned, to
    be sent with it), others in S3 (named in the payload)."""
    if len(data) <= runner_queues.MESSAGE_DATA_BYTES:
        return {"data_bytes": len(data)}, data
    return {"data_key": jobs.store_data(job_id, data), "data_bytes": len(data)}, None


# More writes for a new job's transaction: (the unit of work, the job) → None.
ExtraWrites = Callable[[UnitOfWork, JobRecord], None]


def submit(
    invocation: Invocation,
    runner_id: str,
    kind: str,
    payload: dict[str, Any],
    *,
    printer_id: str | None = None,
    data: bytes | None = None,
    audit_details: dict[str, Any] | None = None,
    extra_writes: ExtraWrites | None = None,
    note: str = "Queued for the Runner.",
    runner: RunnerRecord | None = None,
) -> Job:
    """A job on the Runner's queue. A Runner that is offline finds it when it comes back
    (the job is `held` until then). The job, its audit entry and `extra_writes(uow, record)`
    land in one transaction. `runner` is the Runner's record if the caller has read it."""
    runner = _admitted_runner(runner_id, runner)
    job_id = new_id("job")
    carried: bytes | None = None
    if data is not None:
        placed, carried = _place_data(job_id, data)
        payload = {**payload, **placed}
    now = clock.now()
    online = runner_records.status_of(runner, now) == "online"
    held_print = not online and kind == "print"  # `held` is one of a print's outcomes
    record = JobRecord(
        id=job_id,
        kind=kind,
        status="queued" if online else "held",
        runner_id=runner_id,
        printer_id=printer_id,
        payload=payload,
        messages=(
            message(
                "info",
                note
                if online
                else "The Runner is offline; the job waits in its queue until it is back.",
            ),
        ),
        outcome="held" if held_print else None,
        outcome_reason=None if online else "runner_offline",
        outcome_at=now if held_print else None,
        result=None,
        attempts=0,
        created_at=now,
        created_by=invocation.caller.subject if invocation.caller else "system",
        updated_at=now,
        finished_at=None,
    )
    _save_new(invocation, record, audit_details, extra_writes)
    assert runner.queue_url is not None
    runner_wakes.wake_if_asleep(runner)  # first: the woken Runner's long poll meets the message
    runner_queues.send(runner.queue_url, job_id, carried, kind=kind, payload=payload)
    return view(record)


def _admitted_runner(runner_id: str, record: RunnerRecord | None = None) -> RunnerRecord:
    runner = record if record is not None and record.id == runner_id else None
    runner = runner or runner_records.load_runner(runner_id)
    if runner.state != "active" or not runner.queue_url:
        raise Conflict(
            f"Runner {runner_id} is not admitted yet.",
            ProblemCode.RUNNER_NOT_ACTIVE,
            runner_id=runner_id,
        )
    return runner


def _save_new(
    invocation: Invocation,
    record: JobRecord,
    audit_details: dict[str, Any] | None,
    extra_writes: ExtraWrites | None,
) -> None:
    details = {
        "kind": record.kind,
        "runner_id": record.runner_id,
        "printer_id": record.printer_id,
        **(audit_details or {}),
    }
    with UnitOfWork(audit.record(invocation, record.id, details=details)) as uow:
        jobs.add(uow, record)
        if extra_writes is not None:
            extra_writes(uow, record)


def create(
    invocation: Invocation,
    runner_id: str,
    kind: str,
    payload: dict[str, Any],
    *,
    printer_id: str | None = None,
    audit_details: dict[str, Any] | None = None,
    extra_writes: ExtraWrites | None = None,
) -> JobRecord:
    """A job whose printer data is still being prepared (`rendering`): its record, its audit
    entry and `extra_writes(uow, record)` in one transaction; `dispatch` queues it later."""
    _admitted_runner(runner_id)
    now = clock.now()
    record = JobRecord(
        id=new_id("job"),
        kind=kind,
        status="rendering",
        runner_id=runner_id,
        printer_id=printer_id,
        payload=payload,
        messages=(message("info", "Accepted; rendering the labels."),),
        outcome=None,
        outcome_reason=None,
        outcome_at=None,
        result=None,
        attempts=0,
        created_at=now,
        created_by=invocation.caller.subject if invocation.caller else "system",
        updated_at=now,
        finished_at=None,
    )
    _save_new(invocation, record, audit_details, extra_writes)
    return record


def dispatch(record: JobRecord, data: bytes, *, on_held: ExtraWrites | None = None) -> None:
    """Store the job's printer data and put the job on its Runner's queue. A Runner that is
    offline finds it there when it is back; until then the job is `held` (runner_offline).
    Nothing is read back: the renderer that calls it answers no one."""
    runner = runner_records.load_runner(record.runner_id)
    placed, carried = _place_data(record.id, data)
    online = runner_records.status_of(runner) == "online"
    note = (
        "Rendered; queued for the Runner."
        if online
        else "Rendered; the Runner is offline, so the job waits in its queue until it is back."
    )
    now = clock.now()
    changes: dict[str, Any] = {
        "updated_at": now,
        "payload": {**record.payload, **placed},
        "status": "queued" if online else "held",
    }
    if not online:
        changes |= {"outcome": "held", "outcome_reason": "runner_offline", "outcome_at": now}
    with UnitOfWork() as uow:
        jobs.update(uow, record, changes, messages=[message("info", note)], status_in={"rendering"})
        if not online and on_held is not None:
            on_held(uow, record)
    if runner.queue_url:
        queued = changes["payload"]
        runner_wakes.wake_if_asleep(runner)  # first: its long poll meets the message
        runner_queues.send(runner.queue_url, record.id, carried, kind=record.kind, payload=queued)


def fail(record: JobRecord, reason: str, text: str) -> None:
    """End a job that has not ended as `failed`; a print job's `print.failed` event is written
    in the same transaction. A job that ended meanwhile is left as it is."""
    now = clock.now()
    event = outcome_event(record, "failed", reason)
    changes = {
        "status": "failed",
        "outcome": "failed",
        "outcome_reason": reason,
        "outcome_at": now,
        "finished_at": now,
        "updated_at": now,
    }
    open_statuses = set(ALL_STATUSES) - FINAL
    try:
        with UnitOfWork() as uow:
            jobs.update(
                uow,
                record,
                changes,
                messages=[message("error", text)],
                status_in=open_statuses,
                open_only=True,
            )
            if event is not None:
                events.add(uow, event)
    except ConditionFailed:
        return


def end_open_jobs_of(runner_id: str) -> None:
    """Nobody will run a removed Runner's open jobs: end them, so nothing waits forever."""
    for record in jobs.of_runner(runner_id):
        if not is_final(record):
            fail(record, "runner_removed", "The Runner was removed before the job ended.")


def list_for_runner(runner_id: str, limit: int, cursor: str | None) -> Page[Job]:
    runner_records.load_runner(runner_id)
    found = jobs.page_for_runner(runner_id, limit, cursor)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def cancel(invocation: Invocation, job_id: str) -> Job:
    """Cancels a job whose bytes have not reached a printer; the Runner drops it when it sees it."""
    record = load(job_id)
    if record.status == "cancelled":
        return view(record)
    if record.status not in CANCELLABLE:
        raise Conflict(
            f"The job is {record.status}; only jobs not yet sent can be cancelled.",
            ProblemCode.JOB_NOT_CANCELLABLE,
            job_id=job_id,
            status=record.status,
        )
    now = clock.now()
    caller = invocation.caller
    changes: dict[str, Any] = {"status": "cancelled", "updated_at": now, "finished_at": now}
    # A cancelled print failed (reason `cancelled`): recorded on the job, and announced.
    event = outcome_event(record, "failed", "cancelled")
    if event is not None:
        changes |= {"outcome": "failed", "outcome_reason": "cancelled", "outcome_at": now}
    note = message("warning", f"Cancelled by {caller.subject if caller else '?'}.")
    with UnitOfWork(audit.record(invocation, job_id, details={"before": record.status})) as uow:
        jobs.update(uow, record, changes, messages=[note], status_in=CANCELLABLE)
        if event is not None:
            events.add(uow, event)
    return get(job_id)
