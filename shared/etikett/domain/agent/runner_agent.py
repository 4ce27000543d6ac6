"""The Runner's side of the conversation (the agent channel): who is calling, heartbeats,
claiming jobs from its queue, reporting messages and outcomes, and its effective configuration.

A Runner is identified by its client certificate, never by a user token. Only the certificate
whose serial its record holds is accepted, so a removed Runner is refused at once.
"""

import base64
import contextlib
import re
from datetime import datetime, timedelta
from typing import Any

from etikett import clock
from etikett.domain import activity
from etikett.domain.actors import Invocation
from etikett.domain.agent.runner_messages import MAX_WAIT_SECONDS as MAX_WAIT_SECONDS
from etikett.domain.agent.runner_messages import Claimed as Claimed
from etikett.domain.agent.runner_messages import ClaimedJob as ClaimedJob
from etikett.domain.agent.runner_messages import ClaimReceived as ClaimReceived
from etikett.domain.agent.runner_messages import ClaimRequest as ClaimRequest
from etikett.domain.agent.runner_messages import Heartbeat as Heartbeat
from etikett.domain.agent.runner_messages import HeartbeatAnswer as HeartbeatAnswer
from etikett.domain.agent.runner_messages import JobReport as JobReport
from etikett.domain.agent.runner_messages import QueueAccess as QueueAccess
from etikett.domain.agent.runner_messages import Released as Released
from etikett.domain.agent.runner_messages import ReportedMessage as ReportedMessage
from etikett.domain.agent.runner_messages import RunnerConfig as RunnerConfig
from etikett.domain.audit import audit
from etikett.domain.printers import printer_records
from etikett.domain.printing import jobs
from etikett.domain.runners import certificates, runner_context, runner_records
from etikett.ids import id_pattern
from etikett.settings import get_settings
from etikett.store import agent_reads, events, runner_queues
from etikett.store import jobs as job_store
from etikett.store import printers as printer_store
from etikett.store import runners as runner_store
from etikett.store.conditions import ConditionName
from etikett.store.jobs import JobRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import CertificateRefused, Conflict, Forbidden, NotFound, ProblemCode
from etikett_engine.printer_reach import PRINTER_PORTS

INLINE_DATA_BYTES = 1_000_000  # larger job data is fetched from S3 (responses stop at 6 MB)


def _removed() -> CertificateRefused:
    return CertificateRefused(
        "The Runner of this certificate was removed.", ProblemCode.RUNNER_REMOVED
    )


JOB_ID = re.compile(id_pattern("job"))


def identify(certificate_pem: str) -> RunnerRecord:
    presented = certificates.verify_client_certificate(certificate_pem)
    return _admitted(presented, runner_store.get_runner(presented.runner_id))


def identify_for_job(certificate_pem: str, job_id: str) -> tuple[RunnerRecord, JobRecord | None]:
    """The Runner, and the job it reports on read with it (None: not found, or not an id)."""
    presented = certificates.verify_client_certificate(certificate_pem)
    if not JOB_ID.fullmatch(job_id):
        return _admitted(presented, runner_store.get_runner(presented.runner_id)), None
    runner, job = agent_reads.runner_with_job(presented.runner_id, job_id)
    return _admitted(presented, runner), job


def _admitted(
    presented: certificates.PresentedCertificate, runner: RunnerRecord | None
) -> RunnerRecord:
    if runner is None:
        raise _removed()
    if runner.state != "active" or runner.certificate_serial != presented.serial:
        raise CertificateRefused(
            "This certificate is no longer the Runner's.", ProblemCode.RUNNER_CERTIFICATE_REVOKED
        )
    return runner


def _seen(runner: RunnerRecord, **fields: Any) -> None:
    """Record what a request of the Runner tells, if the Runner still exists (a Runner removed
    since `identify` is never brought back)."""
    if not runner_store.touch_runner(runner.id, **fields):
        raise _removed()


def heartbeat(runner: RunnerRecord, beat: Heartbeat) -> HeartbeatAnswer:
    """Recorded at least every 10 minutes (see runner_queue_access) and when printer states
    change; what it says is the Runner's "online since"."""
    now = clock.now()
    fields: dict[str, Any] = {"last_seen_at": now}
    if beat.hostname:
        fields["hostname"] = beat.hostname
    if beat.version:
        fields["version"] = beat.version
    if runner_records.status_of(runner, now) != "online":
        fields["online_since"] = now  # back after being offline (or for the first time)
    if beat.offline is not None:
        fields["offline_report"] = beat.offline.model_dump(mode="json")
    _seen(runner, **fields)
    if beat.printers:
        printer_records.update_status(runner.id, beat.printers)
    return HeartbeatAnswer(runner_id=runner.id, server_time=clock.rfc3339(now), status="online")


def claim(runner: RunnerRecord, request: ClaimRequest) -> Claimed:
    """Long-poll the Runner's queue. A job already finished or cancelled is dropped from the
    queue here, so a redelivery never reaches a printer twice from this side."""
    if not runner.queue_url:
        return Claimed(jobs=[])
    began = clock.now()
    if _seen_long_ago(runner, began):
        _seen(runner, last_seen_at=began)
    try:
        received = runner_queues.receive(runner.queue_url, request.wait_seconds, request.max_jobs)
    except runner_queues.QueueGone:
        raise _removed() from None  # removed while this poll waited: its queue went with it
    return claim_each(runner, began, received)


def claim_each(
    runner: RunnerRecord, began: datetime, received: list[runner_queues.Received]
) -> Claimed:
    """Claim received messages for the Runner process whose wait began at `began` (from the
    channel's long poll, or from the Runner's own poll: runner_queue_access)."""
    assert runner.queue_url is not None
    claimed: list[ClaimedJob] = []
    for item in received:
        try:
            job = _claim_as_queued(runner, began, item) or _claim_one(
                runner, began, item.job_id, item.receipt, item.delivery, item.data_base64
            )
        except _Outlived:
            # The process that asked is gone (a newer one started meanwhile): nobody would read
            # this answer, so the jobs go back to the queue for the new process at once.
            for each in received:
                runner_queues.release(runner.queue_url, each.receipt)
            return Claimed(jobs=[])
        except Exception:
            # The Runner will hear of none of this poll's claims (e.g. DynamoDB throttled an
            # update beyond the retries): they go back to the queue now, not after the
            # visibility timeout. The Runner checks a job it gets again against its journal.
            for each in received:
                with contextlib.suppress(Exception):
                    runner_queues.release(runner.queue_url, each.receipt)
            raise
        if job is not None:
            claimed.append(job)
    return Claimed(jobs=claimed)


def _claim_as_queued(
    runner: RunnerRecord, began: datetime, item: runner_queues.Received
) -> ClaimedJob | None:
    """A first delivery whose message carries the job's kind and payload as queued: claimed in
    one conditional write, without reading the job first (a claim is on every print's path).
    None when the job is not as queued (held, cancelled, another Runner's, gone) or the
    message does not carry it: `_claim_one` reads the job and decides."""
    if item.delivery != 1 or item.kind is None or item.payload is None:
        return None
    now = clock.now()
    changes: dict[str, Any] = {
        "attempts": 1,
        "receipt": item.receipt,
        "receipt_at": now,
        "status": "running",
        "updated_at": now,
    }
    refusals = {
        ConditionName.RUNNER_OUTLIVED: _Outlived(),
        ConditionName.JOB_QUEUED: _NotAsQueued(),
    }
    try:
        with UnitOfWork(errors=refusals) as uow:
            runner_store.check_process_since(
                uow, runner.id, began, name=ConditionName.RUNNER_OUTLIVED
            )
            job_store.update(
                uow,
                item.job_id,
                changes,
                messages=[jobs.message("info", "Claimed by the Runner.")],
                status_in={"queued"},
                runner_id=runner.id,
                name=ConditionName.JOB_QUEUED,
            )
    except _NotAsQueued:
        return None
    activity.job_claimed(item.job_id, item.kind, runner.id, 1)
    return _handed_out(item.job_id, item.kind, item.payload, item.receipt, 1, item.data_base64)


class _NotAsQueued(Conflict):
    """The job is no longer as its message says (queued for this Runner)."""

    def __init__(self) -> None:
        super().__init__("The job is not queued.", ProblemCode.RESOURCE_CONFLICT)


def _claim_one(
    runner: RunnerRecord,
    began: datetime,
    job_id: str,
    receipt: str,
    delivery: int,
    carried: str | None,
) -> ClaimedJob | None:
    """One received message as a claimed job; None when it is not to be handed out (unknown,
    another Runner's, or finished: then it leaves the queue). The claim is written only while
    the process whose poll began at `began` is the Runner's current one (else `_Outlived`)."""
    assert runner.queue_url is not None
    try:
        record = jobs.load(job_id)
    except NotFound:
        runner_queues.acknowledge(runner.queue_url, receipt)
        return None
    if record.runner_id != runner.id or jobs.is_final(record):
        runner_queues.acknowledge(runner.queue_url, receipt)
        return None
    now = clock.now()
    note = (
        "Claimed by the Runner."
        if delivery == 1
        else (f"Delivered again (delivery {delivery}); the Runner checks its journal.")
    )
    changes: dict[str, Any] = {
        "attempts": delivery,
        "receipt": receipt,
        "receipt_at": now,  # received just now: hidden for the queue's visibility timeout
        "updated_at": now,
    }
    if record.status in ("queued", "held") and record.outcome_reason == "runner_offline":
        # Back online. A print keeps its outcome (held, runner_offline) until the Runner
        # reports the next one: what was announced stays what the archive shows.
        changes["status"] = "running"
        if record.outcome is None:
            changes["outcome_reason"] = None
    elif record.status == "queued":
        changes["status"] = "running"
    with UnitOfWork(errors={ConditionName.RUNNER_OUTLIVED: _Outlived()}) as uow:
        runner_store.check_process_since(uow, runner.id, began, name=ConditionName.RUNNER_OUTLIVED)
        job_store.update(uow, record, changes, messages=[jobs.message("info", note)])
    activity.job_claimed(job_id, record.kind, runner.id, delivery)
    return _handed_out(job_id, record.kind, record.payload, receipt, delivery, carried)


def _handed_out(
    job_id: str,
    kind: str,
    payload: dict[str, Any],
    receipt: str,
    delivery: int,
    carried: str | None,
) -> ClaimedJob:
    """The claimed job as the Runner gets it. The bytes: carried by the message, or in S3 (in
    the answer up to INLINE_DATA_BYTES, else as a URL for the Runner to fetch)."""
    key = payload.get("data_key")
    small = isinstance(key, str) and int(payload.get("data_bytes", 0)) <= (INLINE_DATA_BYTES)
    if carried is None and small and isinstance(key, str):
        carried = base64.b64encode(job_store.load_data(key)).decode()
    return ClaimedJob(
        job_id=job_id,
        kind=kind,
        receipt=receipt,
        delivery=delivery,
        payload={k: v for k, v in payload.items() if k != "data_key"},
        data_base64=carried,
        data_url=job_store.data_url(key) if isinstance(key, str) and not small else None,
    )


RELEASE_LOOKBACK = 200  # the Runner's newest jobs looked at


class _Outlived(Conflict):
    """A newer process of the Runner started while this long poll waited."""

    def __init__(self) -> None:
        super().__init__(
            "A newer process of this Runner started meanwhile.", ProblemCode.RESOURCE_CONFLICT
        )


SEEN_WITHIN = timedelta(seconds=5)


def _seen_long_ago(runner: RunnerRecord, now: datetime) -> bool:
    """Whether a long poll should record the Runner as seen: not when a request of it did so
    moments ago (back-to-back polls would write it each time; its status needs much less)."""
    offline_after = timedelta(seconds=get_settings().runner_offline_seconds)
    within = min(SEEN_WITHIN, offline_after / 4)
    return runner.last_seen_at is None or now - runner.last_seen_at >= within


def release(runner: RunnerRecord) -> Released:
    """A Runner process that just started: claims an earlier process of it made may never have
    reached it (it died during the long poll), and would stay invisible for the queue's
    visibility timeout. Every unfinished job's latest claim becomes claimable again now, and a
    long poll of the earlier process still waiting hands back what it receives later (see
    `claim`). The Runner checks each delivery against its journal: nothing is sent twice."""
    _seen(runner, process_started_at=clock.now())
    if not runner.queue_url:
        return Released(job_ids=[])
    released = []
    for record in job_store.newest_of_runner(runner.id, RELEASE_LOOKBACK):
        if record.receipt and not jobs.is_final(record):
            runner_queues.release(runner.queue_url, record.receipt)
            released.append(record.id)
    return Released(job_ids=released)


def report(
    invocation: Invocation,
    runner: RunnerRecord,
    job_id: str,
    report: JobReport,
    *,
    read: JobRecord | None = None,
) -> jobs.Job:
    """Record messages and an outcome. Repeating a final report is harmless (the Runner retries
    reports it could not deliver); contradicting a final outcome is refused. `read`: the job as
    read with the Runner (else it is read here)."""
    record = read if read is not None and read.id == job_id else jobs.load(job_id)
    if record.runner_id != runner.id:
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
    changes: dict[str, Any] = {"updated_at": now}
    notes = [jobs.message(m.level, m.text) for m in report.messages]
    extend = bool(runner.queue_url and report.receipt) and not _hidden_long_enough(
        record, report.receipt, now
    )
    status = report.status
    if status is not None:
        final = report.final or status in jobs.FINAL
        if status == "succeeded" and record.kind == "discovery":
            # Loaded by the reports of discovery jobs, not by every call of the agent channel.
            from etikett.domain.agent import discovery

            findings = (report.result or {}).get("findings", [])
            changes["result"] = {
                "findings": discovery.record_findings(runner.id, job_id, list(findings))
            }
        elif report.result is not None:
            changes["result"] = report.result
        changes["status"] = status
        if status != "running":  # a status, not an outcome: the last outcome stays
            changes |= {"outcome": status, "outcome_at": now, "outcome_reason": report.reason}
        if final:
            changes["finished_at"] = now
        changed = status != record.status or report.reason != record.outcome_reason
        if status == "held" and report.reason and changed:  # the Runner re-reports while held
            notes.append(jobs.message("warning", f"Held: {report.reason}."))
    else:
        final = report.final
    if extend and not final and report.receipt == record.receipt:
        changes["receipt_at"] = now
    event = None
    if status is not None and (status != record.status or report.reason != record.outcome_reason):
        event = jobs.outcome_event(record, status, report.reason)
    entry = None
    if final:
        details = {"outcome": status, "reason": report.reason, "runner_id": runner.id}
        entry = audit.record(invocation, job_id, details=details)
    with UnitOfWork(entry) as uow:
        if event is not None:
            events.add(uow, event)
        job_store.update(
            uow, record, changes, messages=notes, status_in={"queued", "running", "held", "sent"}
        )
    if status is not None and (status != record.status or report.reason != record.outcome_reason):
        activity.job_outcome(job_id, status, report.reason, runner.id)
    if runner.queue_url and report.receipt:
        if final:
            runner_queues.acknowledge(runner.queue_url, report.receipt)
        elif extend:
            runner_queues.extend(runner.queue_url, report.receipt)
    return jobs.view(job_store.updated(record, changes, notes))


# A report extends its job's visibility only when the last extension (or the claim) is older
# than this: a quarter of the queue's timeout. The Runner reports or extends a job at least every
# 45 s (its keeper), so a job in progress stays hidden with more than half the timeout to spare,
# and the `sent` report right after a claim costs no queue call.
EXTEND_AFTER = timedelta(seconds=runner_queues.VISIBILITY_SECONDS / 4)


def _hidden_long_enough(record: JobRecord, receipt: str | None, now: datetime) -> bool:
    """Whether the receipt a report names was hidden (claimed or extended) moments ago."""
    return (
        receipt is not None
        and receipt == record.receipt
        and record.receipt_at is not None
        and now - record.receipt_at < EXTEND_AFTER
    )


def configuration(runner: RunnerRecord) -> RunnerConfig:
    from etikett.domain.deployments import bundles

    assigned = [printer_records.target(p) for p in printer_store.of_runner(runner.id)]
    return RunnerConfig(
        runner_id=runner.id,
        name=runner.name,
        group_id=runner.group_id,
        context=runner_context.effective_context(runner),
        printers=assigned,
        printer_ports=sorted(runner_records.printer_ports(runner.group_id) - PRINTER_PORTS),
        data_origin=job_store.data_origin(),
        bundle_public_key=bundles.public_key_pem(),
    )
