"""The Runner's side of the conversation (the agent channel): heartbeats, reporting messages and
outcomes, and its effective configuration. Who is calling is `admission`; claiming jobs from
its queue is `claims`."""

from datetime import datetime, timedelta
from typing import Any

from etikett import clock
from etikett.domain import activity
from etikett.domain.actors import Invocation
from etikett.domain.agent.admission import seen, still_admitted
from etikett.domain.agent.runner_messages import (
    Heartbeat,
    HeartbeatAnswer,
    JobReport,
    ReportedMessage,
    RunnerConfig,
)
from etikett.domain.audit import audit
from etikett.domain.deployments import bundles
from etikett.domain.printers import printer_records
from etikett.domain.printing import jobs
from etikett.domain.runners import runner_context, runner_records
from etikett.settings import get_settings
from etikett.store import events, runner_queues
from etikett.store import jobs as job_store
from etikett.store import printers as printer_store
from etikett.store import runners as runner_store
from etikett.store.events import EventRecord
from etikett.store.jobs import JobMessage, JobRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, Forbidden, ProblemCode
from etikett_engine.printer_reach import PRINTER_PORTS


def heartbeat(runner: RunnerRecord, beat: Heartbeat, *, checked: bool = False) -> HeartbeatAnswer:
    """Recorded at least every 10 minutes (see runner_queue_access) and when printer states
    change; what it says is the Runner's "online since". `checked`: `runner` may be as a warm
    function admitted it a while ago, and an online Runner's beat is one write that checks it
    (active, this certificate, online); else it is read first."""
    now = clock.now()
    fields: dict[str, Any] = {"last_seen_at": now}
    if beat.hostname:
        fields["hostname"] = beat.hostname
    if beat.version:
        fields["version"] = beat.version
    if beat.offline is not None:
        fields["offline_report"] = beat.offline.model_dump(mode="json")
    awake_seconds = get_settings().runner_awake_seconds if beat.awake else None
    if awake_seconds is not None:
        fields["awake_until"] = now + timedelta(seconds=awake_seconds)
    online_after = now - timedelta(seconds=get_settings().runner_offline_seconds)
    serial = runner.certificate_serial or ""
    if not (checked and runner_store.beat_while_online(runner.id, serial, online_after, **fields)):
        if checked:
            runner = still_admitted(runner)  # revoked or removed: refused
        if runner_records.status_of(runner, now) != "online":
            fields["online_since"] = now  # back after being offline (or for the first time)
        seen(runner, **fields)
    if beat.printers:
        printer_records.update_status(runner.id, beat.printers)
    return HeartbeatAnswer(
        runner_id=runner.id,
        server_time=clock.rfc3339(now),
        status="online",
        awake_seconds=awake_seconds,
    )


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
    steps = _Steps(record, now)
    for earlier in report.earlier:  # held back on the Runner a moment: recorded first, in order
        steps.take(changes, earlier.status, earlier.reason, earlier.messages, earlier.at)
    steps.take(changes, report.status, report.reason, report.messages, None)
    notes = steps.notes
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
        if final:
            changes["finished_at"] = now
    else:
        final = report.final
    if extend and not final and report.receipt == record.receipt:
        changes["receipt_at"] = now
    entry = None
    if final:
        details = {"outcome": status, "reason": report.reason, "runner_id": runner.id}
        entry = audit.record(invocation, job_id, details=details)
    with UnitOfWork(entry) as uow:
        for event in steps.events:
            events.add(uow, event)
        job_store.update(
            uow, record, changes, messages=notes, status_in={"queued", "running", "held", "sent"}
        )
    for step_status, reason in steps.outcomes:
        activity.job_outcome(job_id, step_status, reason, runner.id)
    if runner.queue_url and report.receipt:
        if final:
            runner_queues.acknowledge(runner.queue_url, report.receipt)
        elif extend:
            runner_queues.extend(runner.queue_url, report.receipt)
    return jobs.view(job_store.updated(record, changes, notes))


class _Steps:
    """The reports of one request applied in order (held-back ones first): the job's changes,
    its notes, and an event and an activity entry for each change of status or reason."""

    def __init__(self, record: JobRecord, now: datetime) -> None:
        self.record = record
        self.now = now
        self.status = record.status
        self.reason = record.outcome_reason
        self.notes: list[JobMessage] = []
        self.events: list[EventRecord] = []
        self.outcomes: list[tuple[str, str | None]] = []

    def take(
        self,
        changes: dict[str, Any],
        status: str | None,
        reason: str | None,
        messages: list[ReportedMessage],
        at: datetime | None,
    ) -> None:
        # A held-back report keeps its own time, within the job's life (a Runner's clock may
        # be off): its event and notes say when it happened, not when it arrived.
        when = self.now if at is None else min(max(at, self.record.created_at), self.now)
        self.notes.extend(JobMessage(at=when, level=m.level, text=m.text) for m in messages)
        if status is None:
            return
        changed = status != self.status or reason != self.reason
        changes["status"] = status
        if status != "running":  # a status, not an outcome: the last outcome stays
            changes |= {"outcome": status, "outcome_at": when, "outcome_reason": reason}
        if status == "held" and reason and changed:  # the Runner re-reports while held
            self.notes.append(JobMessage(at=when, level="warning", text=f"Held: {reason}."))
        if changed:
            event = jobs.outcome_event(self.record, status, reason, at=when)
            if event is not None:
                self.events.append(event)
            self.outcomes.append((status, reason))
        self.status, self.reason = status, reason


# A report extends its job's visibility (to the queue's 120 s) only when the last extension, or
# the claim, is older than this. A Runner receives a job hidden for 20 s; its keeper reports a job
# within 10 s of its receipt and then at least every 40 s, so a job in progress stays hidden with
# time to spare, and the `sent` report moments after a claim costs no queue call.
EXTEND_AFTER = timedelta(seconds=5)


def _hidden_long_enough(record: JobRecord, receipt: str | None, now: datetime) -> bool:
    """Whether the receipt a report names was hidden (claimed or extended) moments ago."""
    return (
        receipt is not None
        and receipt == record.receipt
        and record.receipt_at is not None
        and now - record.receipt_at < EXTEND_AFTER
    )


def configuration(runner: RunnerRecord) -> RunnerConfig:

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
