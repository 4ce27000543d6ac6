"""The Runner's side of the conversation (the agent channel): who is calling, heartbeats,
claiming jobs from its queue, reporting messages and outcomes, and its effective configuration.

A Runner is identified by its client certificate, never by a user token. Only the certificate
whose serial its record holds is accepted, so a removed Runner is refused at once.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, Field
from pynamodb.exceptions import UpdateError

from etikett import clock
from etikett.domain import audit, certificates, jobs, printers, runner_queues, runners
from etikett.domain.actors import Invocation
from etikett.errors import CertificateRefused, Conflict, Forbidden, NotFound, ProblemCode
from etikett.store.base import transaction
from etikett.store.jobs import JobRecord
from etikett.store.printers import PrinterRecord
from etikett.store.runners import RUNNER_SK, RunnerRecord

MAX_WAIT_SECONDS = 20  # API Gateway answers within 30 s
INLINE_DATA_BYTES = 1_000_000  # larger job data is fetched from S3 (responses stop at 6 MB)


class Heartbeat(BaseModel):
    model_config = {"extra": "forbid"}
    hostname: str | None = Field(default=None, max_length=255)
    version: str | None = Field(default=None, max_length=64)
    printers: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=100,
        description="[{printer_id, status}] as the Runner last read them.",
    )


class HeartbeatAnswer(BaseModel):
    runner_id: str
    server_time: str
    status: str


class ClaimRequest(BaseModel):
    model_config = {"extra": "forbid"}
    wait_seconds: int = Field(default=MAX_WAIT_SECONDS, ge=0, le=MAX_WAIT_SECONDS)
    max_jobs: int = Field(default=1, ge=1, le=10)


class ClaimedJob(BaseModel):
    job_id: str
    kind: str
    receipt: str = Field(description="Return it with every report of this job.")
    delivery: int = Field(description="How often the queue has delivered this job (1 = first).")
    payload: dict[str, Any]
    data_base64: str | None = None
    data_url: str | None = Field(
        default=None,
        description="Large data: a presigned GET URL (valid 1 h) instead of data_base64.",
    )


class Claimed(BaseModel):
    jobs: list[ClaimedJob]


class ReportedMessage(BaseModel):
    model_config = {"extra": "forbid"}
    level: Literal["info", "warning", "error"] = "info"
    text: str = Field(max_length=2000)


class JobReport(BaseModel):
    model_config = {"extra": "forbid"}
    receipt: str | None = Field(default=None, max_length=4096)
    status: Literal["running", "held", "sent", "confirmed", "succeeded", "failed"] | None = None
    reason: str | None = Field(
        default=None, max_length=200, description="Why held or failed: paper_out, head_open, …"
    )
    final: bool = Field(default=False, description="No further reports will follow.")
    result: dict[str, Any] | None = None
    messages: list[ReportedMessage] = Field(default_factory=list, max_length=50)


class RunnerConfig(BaseModel):
    runner_id: str
    name: str
    group_id: str
    context: dict[str, Any]
    printers: list[dict[str, Any]]
    poll_wait_seconds: int = MAX_WAIT_SECONDS


def _removed() -> CertificateRefused:
    return CertificateRefused(
        "The Runner of this certificate was removed.", ProblemCode.RUNNER_REMOVED
    )


def identify(certificate_pem: str) -> RunnerRecord:
    presented = certificates.verify_client_certificate(certificate_pem)
    try:
        runner = RunnerRecord.get(presented.runner_id, RUNNER_SK)
    except RunnerRecord.DoesNotExist:
        raise _removed() from None
    if runner.state != "active" or runner.certificate_serial != presented.serial:
        raise CertificateRefused(
            "This certificate is no longer the Runner's.", ProblemCode.RUNNER_CERTIFICATE_REVOKED
        )
    return runner


def _seen(runner: RunnerRecord, actions: list[Any]) -> None:
    """Record what a request of the Runner tells, if the Runner still exists: an unconditional
    update would bring back a Runner removed since `identify` as an item without its state."""
    try:
        runner.update(actions=actions, condition=RunnerRecord.pk.exists())
    except UpdateError as error:
        if error.cause_response_code == "ConditionalCheckFailedException":
            raise _removed() from None
        raise


def heartbeat(runner: RunnerRecord, beat: Heartbeat) -> HeartbeatAnswer:
    now = clock.now()
    actions = [RunnerRecord.last_seen_at.set(now)]
    if beat.hostname:
        actions.append(RunnerRecord.hostname.set(beat.hostname))
    if beat.version:
        actions.append(RunnerRecord.version.set(beat.version))
    _seen(runner, actions)
    if beat.printers:
        printers.update_status(runner.pk, beat.printers)
    return HeartbeatAnswer(runner_id=runner.pk, server_time=clock.rfc3339(now), status="online")


def claim(runner: RunnerRecord, request: ClaimRequest) -> Claimed:
    """Long-poll the Runner's queue. A job already finished or cancelled is dropped from the
    queue here, so a redelivery never reaches a printer twice from this side."""
    if not runner.queue_url:
        return Claimed(jobs=[])
    _seen(runner, [RunnerRecord.last_seen_at.set(clock.now())])
    try:
        received = runner_queues.receive(runner.queue_url, request.wait_seconds, request.max_jobs)
    except runner_queues.QueueGone:
        raise _removed() from None  # removed while this poll waited: its queue went with it
    claimed: list[ClaimedJob] = []
    for job_id, receipt, delivery, carried in received:
        try:
            record = jobs.load(job_id)
        except NotFound:
            runner_queues.acknowledge(runner.queue_url, receipt)
            continue
        if record.runner_id != runner.pk or jobs.is_final(record):
            runner_queues.acknowledge(runner.queue_url, receipt)
            continue
        now = clock.now()
        note = (
            "Claimed by the Runner."
            if delivery == 1
            else (f"Delivered again (delivery {delivery}); the Runner checks its journal.")
        )
        actions = [
            JobRecord.attempts.set(delivery),
            JobRecord.updated_at.set(now),
            JobRecord.messages.set(JobRecord.messages.append([jobs.message("info", note)])),
        ]
        if record.status in ("queued", "held") and record.outcome_reason == "runner_offline":
            # Back online. A print keeps its outcome (held, runner_offline) until the Runner
            # reports the next one: what was announced stays what the archive shows.
            actions.append(JobRecord.status.set("running"))
            if record.outcome is None:
                actions.append(JobRecord.outcome_reason.remove())
        elif record.status == "queued":
            actions.append(JobRecord.status.set("running"))
        record.update(actions=actions)
        # The bytes: carried by the message, or in S3 (in the answer up to INLINE_DATA_BYTES,
        # else as a URL for the Runner to fetch).
        key = record.payload.get("data_key")
        small = key and int(record.payload.get("data_bytes", 0)) <= INLINE_DATA_BYTES
        if carried is None and small:
            carried = base64.b64encode(jobs.load_data(key)).decode()
        claimed.append(
            ClaimedJob(
                job_id=job_id,
                kind=record.kind,
                receipt=receipt,
                delivery=delivery,
                payload={k: v for k, v in record.payload.items() if k != "data_key"},
                data_base64=carried,
                data_url=jobs.data_url(key) if key and not small else None,
            )
        )
    return Claimed(jobs=claimed)


def report(
    invocation: Invocation, runner: RunnerRecord, job_id: str, report: JobReport
) -> jobs.Job:
    """Record messages and an outcome. Repeating a final report is harmless (the Runner retries
    reports it could not deliver); contradicting a final outcome is refused."""
    record = jobs.load(job_id)
    if record.runner_id != runner.pk:
        raise Forbidden(
            "The job belongs to another Runner.", ProblemCode.JOB_OTHER_RUNNER, job_id=job_id
        )
    now = clock.now()
    if jobs.is_final(record):
        if report.receipt and runner.queue_url:
            runner_queues.acknowledge(runner.queue_url, report.receipt)
        if (
            report.status is None
            or report.status == record.status
            or (record.status == "cancelled")
        ):
            return jobs.view(record)
        raise Conflict(
            f"The job is already {record.status}.",
            ProblemCode.JOB_FINISHED,
            job_id=job_id,
            status=record.status,
        )
    actions: list[Any] = [JobRecord.updated_at.set(now)]
    notes = [jobs.message(m.level, m.text) for m in report.messages]
    status = report.status
    if status is not None:
        final = report.final or status in jobs.FINAL
        if status == "succeeded" and record.kind == "discovery":
            findings = (report.result or {}).get("findings", [])
            result = {"findings": printers.record_findings(runner.pk, job_id, list(findings))}
            actions.append(JobRecord.result.set(result))
        elif report.result is not None:
            actions.append(JobRecord.result.set(report.result))
        actions.append(JobRecord.status.set(status))
        if status != "running":  # a status, not an outcome: the last outcome stays
            actions += [
                JobRecord.outcome.set(status),
                JobRecord.outcome_at.set(now),
                JobRecord.outcome_reason.set(report.reason)
                if report.reason
                else JobRecord.outcome_reason.remove(),
            ]
        if final:
            actions.append(JobRecord.finished_at.set(now))
        changed = status != record.status or report.reason != record.outcome_reason
        if status == "held" and report.reason and changed:  # the Runner re-reports while held
            notes.append(jobs.message("warning", f"Held: {report.reason}."))
    else:
        final = report.final
    if notes:
        actions.append(JobRecord.messages.set(JobRecord.messages.append(notes)))
    event = None
    if status is not None and (status != record.status or report.reason != record.outcome_reason):
        event = jobs.outcome_event(record, status, report.reason)
    with transaction() as tx:
        if event is not None:
            tx.save(event)
        tx.update(
            record,
            actions=actions,
            condition=JobRecord.status.is_in(*({"queued", "running", "held", "sent"})),
        )
        if final:
            tx.save(
                audit.entry(
                    invocation,
                    job_id,
                    details={"outcome": status, "reason": report.reason, "runner_id": runner.pk},
                )
            )
    if runner.queue_url and report.receipt:
        if final:
            runner_queues.acknowledge(runner.queue_url, report.receipt)
        else:
            runner_queues.extend(runner.queue_url, report.receipt)
    return jobs.get(job_id)


def configuration(runner: RunnerRecord) -> RunnerConfig:
    assigned = [
        printers.target(p)
        for p in PrinterRecord.by_name.query(
            "printer", filter_condition=PrinterRecord.runner_id == runner.pk
        )
    ]
    return RunnerConfig(
        runner_id=runner.pk,
        name=runner.name,
        group_id=runner.group_id,
        context=runners.effective_context(runner),
        printers=assigned,
    )
