"""Taking jobs in: waiting at the Runner's own queue (or, where the service hands out no queue
credentials, the agent channel's long poll), claiming what arrived, and handing each job to a
worker once — new, in flight here already, or known from the journal — and resuming what a
restart interrupted."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from etikett_runner import jobs
from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.context import JobContext, message
from etikett_runner.journal import CLAIMED, Journal
from etikett_runner.leases import Lease, Leases
from etikett_runner.outbox import Outbox
from etikett_runner.printers import Printers
from etikett_runner.queue import NoDirectAccess, RunnerQueue
from etikett_runner.reporter import Reporter
from etikett_runner.state import StateDir
from etikett_runner.transport import Refused, ServerAway
from etikett_runner.tuning import Tuning
from etikett_runner.wake import Wakefulness

log = logging.getLogger(__name__)


class JobIntake:
    """The claim loop and the workers it feeds (`tuning.workers` at most at once)."""

    def __init__(
        self,
        *,
        state: StateDir,
        channel: AgentChannel,
        tuning: Tuning,
        journal: Journal,
        outbox: Outbox,
        reporter: Reporter,
        leases: Leases,
        printers: Printers,
        connectivity: Connectivity,
        stop: threading.Event,
        on_removed: Callable[[RunnerRemoved], None],
        on_notice: Callable[[str], None],
    ) -> None:
        self.state = state
        self.channel = channel
        self.tuning = tuning
        self.journal = journal
        self.outbox = outbox
        self.reporter = reporter
        self.leases = leases
        self.printers = printers
        self.connectivity = connectivity
        self.stop = stop
        self._on_removed = on_removed
        self._on_notice = on_notice
        # None: the service hands out no queue credentials (claims through the channel)
        self.queue: RunnerQueue | None = RunnerQueue(channel, state.root / "received.json")
        self._pool = ThreadPoolExecutor(max_workers=tuning.workers, thread_name_prefix="job")
        # While idle, the queue is looked at when a wake comes (where the service offers wakes).
        self.wakefulness = Wakefulness(channel, stop)
        self._looked = 0  # messages the last look at the queue found
        self._start_lock = threading.Lock()

    def shutdown(self) -> None:
        """Jobs see `stop` at their next check and leave their journal state for the next
        start; the journal closes once no job is being started."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.wakefulness.close()

    def close_journal(self) -> None:
        with self._start_lock:
            self.journal.close()

    def run(self) -> None:
        """Claim until stop (or the Runner is removed)."""
        backoff = Backoff(base=1.0, cap=60.0)
        while not self.stop.is_set():
            free = self.tuning.workers - len(self.leases)
            if free <= 0:
                self.stop.wait(0.2)
                continue
            try:
                claimed = self._wait_for_work()
            except ServerAway as exc:
                first = self.connectivity.failed()
                delay = backoff.next()
                log.log(
                    logging.WARNING if first else logging.DEBUG,
                    "claim: service unavailable (%s); again in %.1f s",
                    exc,
                    delay,
                )
                self.connectivity.pause(delay)
                continue
            except RunnerRemoved as exc:
                self._on_removed(exc)
                return
            except Refused as exc:
                delay = backoff.next()
                log.error("claim refused: %s; again in %.1f s", exc, delay)
                self.stop.wait(delay)
                continue
            backoff.reset()
            self.connectivity.succeeded()
            for job in claimed:
                self._accept(job)
            self.wakefulness.received(self._looked)  # after the jobs started: not in their way
            if self.queue is not None:
                self.queue.settled()  # journaled now: a restart finds them there

    def _wait_for_work(self) -> list[dict[str, Any]]:
        """Jobs claimed after waiting at the Runner's own queue; through the agent channel's
        long poll only where the service hands out no queue credentials."""
        # One job at a time: jobs carry their bytes inline (up to ~5.6 MB as base64), and
        # several in one answer would pass Lambda's 6 MB response limit.
        if self.queue is not None:
            self.wakefulness.await_work()
            if self.stop.is_set():
                return []
            try:
                received = self.queue.receive(self.tuning.claim_wait_seconds, 1)
            except NoDirectAccess:
                log.info("the service hands out no queue credentials; claiming through it")
                self.queue = None
            else:
                self.wakefulness.offer(self.queue.wake)
                self._looked = len(received)
                return self._claim_received(received)
        return self.channel.claim(self.tuning.claim_wait_seconds, 1)

    def _claim_received(self, received: list[Any]) -> list[dict[str, Any]]:
        assert self.queue is not None
        jobs_, carried = [], {}
        for item in received:
            if item.notice is not None:
                self.queue.delete(item.receipt)
                self._on_notice(item.notice)
                continue
            body = dict(item.body)
            data = body.pop("data_base64", None)  # kept here: the service need not see it again
            if isinstance(data, str):
                carried[str(body.get("job_id"))] = data
            jobs_.append({"receipt": item.receipt, "delivery": item.delivery, "body": _json(body)})
        if not jobs_:
            self.queue.settled()
            return []
        try:
            claimed = self.channel.claim_received(jobs_)
        except (ServerAway, Refused):
            self.queue.give_back([job["receipt"] for job in jobs_])
            self.queue.settled()
            raise
        for job in claimed:
            if not job.get("data_base64") and str(job.get("job_id")) in carried:
                job["data_base64"] = carried[str(job.get("job_id"))]
        return claimed

    def _accept(self, job: dict[str, Any]) -> None:
        """A job from the queue: new, in flight here already, or known from the journal."""
        job_id, kind = str(job.get("job_id", "")), str(job.get("kind", ""))
        receipt = job.get("receipt")
        given = job.get("payload")
        payload: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
        log.info("job %s (%s) claimed, delivery %s", job_id, kind, job.get("delivery"))
        try:
            self.state.spool_path(job_id)
        except ValueError:
            log.error("job id %r is not usable; job ignored", job_id)
            return
        record = self.journal.get(job_id)
        if record is not None and record.finished:
            # Executed before; the service may not have the outcome yet: tell it again.
            log.info("job %s: delivered again after it ended; reporting its outcome again", job_id)
            if self.reporter.report(job_id, {**(record.outcome or {}), "receipt": receipt}):
                self.journal.mark_reported(job_id)
            return
        with self._start_lock:
            if self.journal.closed:  # claimed while shutting down: it comes back from the queue
                return
            lease = self.leases.open(job_id, receipt)
            if lease is None:
                self.journal.note_receipt(job_id, str(receipt))
                return  # in flight here; the newer receipt is used from now on
            if record is None:
                data = job.get("data_base64")
                if data:
                    try:
                        self.state.spool_write(job_id, base64.b64decode(data, validate=True))
                    except (binascii.Error, ValueError):
                        self.leases.close(job_id)
                        self._fail_unreadable(job_id, receipt)
                        return
                if job.get("data_url"):  # large: fetched by the job itself, not the claim loop
                    payload = {**payload, "data_url": str(job["data_url"])}
                self.journal.record(job_id, CLAIMED, kind=kind, receipt=receipt, payload=payload)
            else:
                self.journal.note_receipt(job_id, str(receipt))
                if job.get("data_url") and record.payload:  # a fresh URL for the redelivery
                    payload = {**record.payload, "data_url": str(job["data_url"])}
        self._submit(lease, kind, payload or (record.payload if record else {}))

    def _fail_unreadable(self, job_id: str, receipt: Any) -> None:
        body = {
            "receipt": receipt,
            "status": "failed",
            "reason": "bad_data",
            "final": True,
            "messages": [message("error", "The job's bytes are not valid base64.")],
        }
        self.reporter.report(job_id, body)

    def resume_unfinished(self) -> None:
        # Outcomes written to the journal just before a crash, neither delivered nor kept.
        for record in self.journal.unreported():
            if record.outcome and not self.outbox.has(record.job_id):
                body = {**record.outcome, "receipt": record.receipt}
                if self.reporter.report(record.job_id, body):
                    self.journal.mark_reported(record.job_id)
        for record in self.journal.unfinished():
            with self._start_lock:
                lease = self.leases.open(record.job_id, record.receipt)
            if lease is None:
                continue
            log.info("job %s: resuming (%s before the restart)", record.job_id, record.state)
            self._submit(lease, record.kind or "", record.payload)

    def _submit(self, lease: Lease, kind: str, payload: dict[str, Any]) -> None:
        ctx = JobContext(
            job_id=lease.job_id,
            kind=kind,
            payload=payload,
            lease=lease,
            journal=self.journal,
            state=self.state,
            reporter=self.reporter,
            stop=self.stop,
        )

        def work() -> None:
            try:
                jobs.execute(ctx, self.printers, self.tuning)
            finally:
                self.leases.close(lease.job_id)

        try:
            self._pool.submit(work)
        except RuntimeError:  # shutting down: the journal keeps the job for the next start
            self.leases.close(lease.job_id)


def _json(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"))
