"""Jobs handed to Runners: creation onto the Runner's queue, reading, listing and cancelling.
The Runner's side (claiming, reporting) is in `runner_agent`."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, Field

from etikett import clients, clock
from etikett.domain import audit, runner_queues, runners
from etikett.domain.actors import Invocation
from etikett.errors import Conflict, InvalidRequest, NotFound, ProblemCode
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store.base import cancellation_codes, transaction
from etikett.store.events import EventRecord
from etikett.store.jobs import JobMessage, JobRecord
from etikett.store.pages import Page, read_page
from etikett.store.runners import RunnerRecord

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
FINAL = frozenset({"confirmed", "succeeded", "failed", "cancelled"})
# Not `running`: a claimed job's bytes may be on their way to the printer.
CANCELLABLE = frozenset({"rendering", "queued", "held"})
# A print's outcomes (spec part 6); `running` and the others are statuses only.
PRINT_OUTCOMES = frozenset({"failed", "held", "sent", "confirmed"})
MAX_RAW_BYTES = 4 * 1024 * 1024


class JobMessageView(BaseModel):
    at: str
    level: Literal["info", "warning", "error"]
    text: str


class Job(BaseModel):
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


class RawJobRequest(BaseModel):
    model_config = {"extra": "forbid"}
    kind: Literal["raw"] = "raw"
    printer_id: str = Field(description="An adopted printer of this Runner.")
    data_base64: str = Field(
        min_length=4,
        max_length=MAX_RAW_BYTES * 4 // 3 + 4,
        description="The bytes to send to the printer, base64.",
    )
    expected_labels: int | None = Field(
        default=None,
        ge=0,
        le=100000,
        description="Labels these bytes print; lets the Runner confirm by the printer's counter.",
    )


def message(level: str, text: str) -> JobMessage:
    return JobMessage(at=clock.now(), level=level, text=text[:2000])


def outcome_event(job: JobRecord, status: str, reason: str | None) -> EventRecord | None:
    """The `print.<outcome>` event of a print job's new outcome (none for other kinds and
    statuses). Save it in the transaction that records the outcome (the outbox)."""
    if job.kind != "print" or status not in PRINT_OUTCOMES:
        return None
    payload = job.payload
    return EventRecord(
        id=new_id("evt"),
        kind=f"print.{status}",
        at=clock.now(),
        subject_id=job.id,
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
        status=record.status,  # type: ignore[arg-type]
        runner_id=record.runner_id,
        printer_id=record.printer_id,
        messages=[
            JobMessageView(at=clock.rfc3339(m.at), level=m.level, text=m.text)  # type: ignore[arg-type]
            for m in record.messages
        ],
        outcome=record.outcome,
        outcome_reason=record.outcome_reason,
        result=record.result,
        attempts=int(record.attempts),
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
        finished_at=clock.rfc3339(record.finished_at) if record.finished_at else None,
    )


def is_final(record: JobRecord) -> bool:
    """Final by status, or because the Runner said its last word (a final `sent`)."""
    return record.status in FINAL or record.finished_at is not None


def load(job_id: str) -> JobRecord:
    try:
        return JobRecord.get(job_id)
    except JobRecord.DoesNotExist:
        raise NotFound(f"No job {job_id}.", ProblemCode.JOB_NOT_FOUND, job_id=job_id) from None


def get(job_id: str) -> Job:
    return view(load(job_id))


def _store_data(job_id: str, data: bytes) -> str:
    """Large job bytes go to S3, not into the queue (256 KB) or the table (400 KB)."""
    key = f"jobs/{job_id}/data"
    clients.client("s3").put_object(
        Bucket=get_settings().required("assets_bucket"), Key=key, Body=data
    )
    return key


def _place_data(job_id: str, data: bytes) -> tuple[dict[str, Any], bytes | None]:
    """Where a job's bytes wait for the Runner: small ones in the queue message (returned, to
    be sent with it), others in S3 (named in the payload)."""
    if len(data) <= runner_queues.MESSAGE_DATA_BYTES:
        return {"data_bytes": len(data)}, data
    return {"data_key": _store_data(job_id, data), "data_bytes": len(data)}, None


def data_url(key: str) -> str:
    return str(
        clients.client("s3").generate_presigned_url(
            "get_object",
            Params={"Bucket": get_settings().required("assets_bucket"), "Key": key},
            ExpiresIn=3600,
        )
    )


def load_data(key: str) -> bytes:
    response = clients.client("s3").get_object(
        Bucket=get_settings().required("assets_bucket"), Key=key
    )
    return bytes(response["Body"].read())


def submit(
    invocation: Invocation,
    runner_id: str,
    kind: str,
    payload: dict[str, Any],
    *,
    printer_id: str | None = None,
    data: bytes | None = None,
    audit_details: dict[str, Any] | None = None,
    extra_writes: Any = None,
    note: str = "Queued for the Runner.",
    runner: RunnerRecord | None = None,
) -> Job:
    """A job on the Runner's queue. A Runner that is offline finds it when it comes back
    (the job is `held` until then). The job, its audit entry and `extra_writes(tx, record)`
    land in one transaction. `runner` is the Runner's record if the caller has read it."""
    runner = _admitted_runner(runner_id, runner)
    job_id = new_id("job")
    carried: bytes | None = None
    if data is not None:
        placed, carried = _place_data(job_id, data)
        payload = {**payload, **placed}
    now = clock.now()
    online = runners.status_of(runner, now) == "online"
    record = JobRecord(
        id=job_id,
        kind=kind,
        status="queued" if online else "held",
        runner_id=runner_id,
        printer_id=printer_id,
        payload=payload,
        created_at=now,
        updated_at=now,
        created_by=invocation.caller.subject if invocation.caller else "system",
        # `held` is one of a print's outcomes (spec part 6); other kinds only have a status.
        outcome="held" if not online and kind == "print" else None,
        outcome_reason=None if online else "runner_offline",
        outcome_at=now if not online and kind == "print" else None,
        messages=[
            message(
                "info",
                note
                if online
                else "The Runner is offline; the job waits in its queue until it is back.",
            )
        ],
    )
    _save_new(invocation, record, audit_details, extra_writes)
    assert runner.queue_url is not None
    runner_queues.send(runner.queue_url, job_id, carried)
    return view(record)


def _admitted_runner(runner_id: str, record: RunnerRecord | None = None) -> RunnerRecord:
    runner = record if record is not None and record.pk == runner_id else None
    runner = runner or runners.load_runner(runner_id)
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
    extra_writes: Any,
) -> None:
    with transaction() as tx:
        tx.save(record, condition=JobRecord.id.does_not_exist())
        tx.save(
            audit.entry(
                invocation,
                record.id,
                details={
                    "kind": record.kind,
                    "runner_id": record.runner_id,
                    "printer_id": record.printer_id,
                    **(audit_details or {}),
                },
            )
        )
        if extra_writes is not None:
            extra_writes(tx, record)


def create(
    invocation: Invocation,
    runner_id: str,
    kind: str,
    payload: dict[str, Any],
    *,
    printer_id: str | None = None,
    audit_details: dict[str, Any] | None = None,
    extra_writes: Any = None,
) -> JobRecord:
    """A job whose printer data is still being prepared (`rendering`): its record, its audit
    entry and `extra_writes(tx, record)` in one transaction; `dispatch` queues it later."""
    _admitted_runner(runner_id)
    now = clock.now()
    record = JobRecord(
        id=new_id("job"),
        kind=kind,
        status="rendering",
        runner_id=runner_id,
        printer_id=printer_id,
        payload=payload,
        created_at=now,
        updated_at=now,
        created_by=invocation.caller.subject if invocation.caller else "system",
        messages=[message("info", "Accepted; rendering the labels.")],
    )
    _save_new(invocation, record, audit_details, extra_writes)
    return record


def dispatch(record: JobRecord, data: bytes, *, on_held: Any = None) -> Job:
    """Store the job's printer data and put the job on its Runner's queue. A Runner that is
    offline finds it there when it is back; until then the job is `held` (runner_offline)."""
    runner = runners.load_runner(record.runner_id)
    placed, carried = _place_data(record.id, data)
    online = runners.status_of(runner) == "online"
    note = (
        "Rendered; queued for the Runner."
        if online
        else "Rendered; the Runner is offline, so the job waits in its queue until it is back."
    )
    actions: list[Any] = [
        JobRecord.updated_at.set(clock.now()),
        JobRecord.payload.set({**record.payload, **placed}),
        JobRecord.status.set("queued" if online else "held"),
        JobRecord.messages.set(JobRecord.messages.append([message("info", note)])),
    ]
    if not online:
        actions += [
            JobRecord.outcome.set("held"),
            JobRecord.outcome_reason.set("runner_offline"),
            JobRecord.outcome_at.set(clock.now()),
        ]
    with transaction() as tx:
        tx.update(record, actions=actions, condition=JobRecord.status == "rendering")
        if not online and on_held is not None:
            on_held(tx, record)
    if runner.queue_url:
        runner_queues.send(runner.queue_url, record.id, carried)
    return get(record.id)


def fail(record: JobRecord, reason: str, text: str) -> None:
    """End a job that has not ended as `failed`; a print job's `print.failed` event is written
    in the same transaction. A job that ended meanwhile is left as it is."""
    now = clock.now()
    event = outcome_event(record, "failed", reason)
    try:
        with transaction() as tx:
            tx.update(
                record,
                actions=[
                    JobRecord.status.set("failed"),
                    JobRecord.outcome.set("failed"),
                    JobRecord.outcome_reason.set(reason),
                    JobRecord.outcome_at.set(now),
                    JobRecord.finished_at.set(now),
                    JobRecord.updated_at.set(now),
                    JobRecord.messages.set(JobRecord.messages.append([message("error", text)])),
                ],
                condition=JobRecord.finished_at.does_not_exist() & ~JobRecord.status.is_in(*FINAL),
            )
            if event is not None:
                tx.save(event)
    except Exception as error:
        if "ConditionalCheckFailed" in cancellation_codes(error):
            return
        raise


def submit_raw(invocation: Invocation, runner_id: str, request: RawJobRequest) -> Job:
    from etikett.domain import printers

    printer = printers.load(request.printer_id)
    if printer.runner_id != runner_id:
        raise InvalidRequest.field("body.printer_id", f"the printer belongs to {printer.runner_id}")
    try:
        data = base64.b64decode(request.data_base64, validate=True)
    except ValueError:
        raise InvalidRequest.field("body.data_base64", "not valid base64") from None
    payload = {"printer": printers.target(printer), "expected_labels": request.expected_labels}
    return submit(
        invocation,
        runner_id,
        "raw",
        payload,
        printer_id=printer.pk,
        data=data,
        audit_details={"bytes": len(data)},
    )


def list_for_runner(runner_id: str, limit: int, cursor: str | None) -> Page[Job]:
    runners.load_runner(runner_id)

    def query(**page: object) -> object:
        return JobRecord.by_runner.query(runner_id, scan_index_forward=False, **page)

    return read_page(query, {"id", "runner_id"}, limit, cursor, view)


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
    actions = [
        JobRecord.status.set("cancelled"),
        JobRecord.updated_at.set(now),
        JobRecord.finished_at.set(now),
        JobRecord.messages.set(
            JobRecord.messages.append(
                [message("warning", f"Cancelled by {caller.subject if caller else '?'}.")]
            )
        ),
    ]
    # A cancelled print failed (reason `cancelled`): recorded on the job, and announced.
    event = outcome_event(record, "failed", "cancelled")
    if event is not None:
        actions += [
            JobRecord.outcome.set("failed"),
            JobRecord.outcome_reason.set("cancelled"),
            JobRecord.outcome_at.set(now),
        ]
    with transaction() as tx:
        tx.update(record, actions=actions, condition=JobRecord.status.is_in(*CANCELLABLE))
        tx.save(audit.entry(invocation, job_id, details={"before": record.status}))
        if event is not None:
            tx.save(event)
    return get(job_id)
