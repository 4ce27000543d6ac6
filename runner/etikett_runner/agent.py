"""The run loop of an enrolled Runner: heartbeats, configuration, long-polling its own job queue
(directly, with credentials for that queue alone: queue.py), executing jobs on worker threads,
delivering kept reports, extending jobs in flight, reading idle printers' status, running
deployed flows (`flow_host`) and uploading what they printed while the service was away
(`offline_sync`). Network trouble means backing off and trying again, never
exiting; only a stop request or the service refusing this Runner (removed) ends the loop."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from etikett_runner import __version__, jobs, reach
from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.context import JobContext, message
from etikett_runner.counter_blocks import CounterBlocks
from etikett_runner.flow_host import FlowHost
from etikett_runner.http_triggers import HttpTriggers
from etikett_runner.journal import CLAIMED, Journal
from etikett_runner.leases import Lease, Leases
from etikett_runner.offline_prints import OfflinePrints
from etikett_runner.offline_sync import OfflineSync
from etikett_runner.outbox import Outbox
from etikett_runner.printers import Printers, PrinterTarget
from etikett_runner.queue import NoDirectAccess, RunnerQueue
from etikett_runner.reporter import Reporter
from etikett_runner.roots import AllowedRoots
from etikett_runner.site_memory import SiteMemory
from etikett_runner.state import StateDir
from etikett_runner.transport import Refused, ServerAway
from etikett_runner.tuning import Tuning
from etikett_runner.zebra import NoAnswer, PrinterConnection, PrinterUnreachable

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_REMOVED = 78  # EX_CONFIG: the service no longer accepts this Runner; re-enroll it


class Agent:
    def __init__(
        self,
        state: StateDir,
        channel: AgentChannel,
        tuning: Tuning | None = None,
        hostname: str | None = None,
        *,
        data_dir: Path | None = None,
        http: HttpTriggers | None = None,
        roots: AllowedRoots | None = None,
    ) -> None:
        self.state = state
        self.channel = channel
        self.tuning = tuning or Tuning()
        self.hostname = hostname or socket.gethostname()
        self.stop = threading.Event()
        self.removed: RunnerRemoved | None = None
        self.journal = Journal(state.journal)
        self.outbox = Outbox(state.outbox)
        self.connectivity = Connectivity(self.stop)
        self.reporter = Reporter(
            channel,
            self.outbox,
            self._on_removed,
            self.connectivity,
            on_final_delivered=self.journal.mark_reported,
        )
        self.leases = Leases()
        self.printers = Printers()
        # What this Runner printed while the service was away (one journal per process).
        self.offline_prints = OfflinePrints(state.root)
        # None: the service hands out no queue credentials (claims through the channel)
        self.queue: RunnerQueue | None = RunnerQueue(channel, state.root / "received.json")
        self._beat_now = threading.Event()  # a printer's status changed: tell the service
        self._pool = ThreadPoolExecutor(max_workers=self.tuning.workers, thread_name_prefix="job")
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()
        self.runner_id: str | None = None
        self._released = False  # claims of an earlier process released (at the first contact)
        # What the service last said, to start without it (an outage at boot).
        self.memory = SiteMemory(state.root)
        self.flows = FlowHost(
            channel,
            state.root,
            data_dir or state.root / "data",
            self.connectivity,
            self._on_removed,
            http=http,
            tuning=self.tuning,
            roots=roots,
            printers=self.printers,
            offline_prints=self.offline_prints,
            counter_blocks=CounterBlocks(state.root),
            memory=self.memory,
        )
        # Uploads the journal of offline prints whenever the service answers.
        self.offline_sync = OfflineSync(
            channel, self.offline_prints, state.root, self.connectivity, self._on_removed
        )

    # --- lifecycle ------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> int:
        """Until `stop` is set (or the Runner is removed); answers the exit status."""
        watcher = threading.Thread(target=self._forward_stop, args=(stop,), daemon=True)
        watcher.start()
        try:
            if not self._first_contact():
                return self._exit_status()
            self._resume_unfinished()
            for name, target in (
                ("heartbeat", self._heartbeat_loop),
                ("claim", self._claim_loop),
                ("outbox", lambda: self.reporter.run(self.stop)),
                ("keeper", lambda: self.leases.keep(self.stop, self._extend)),
                ("monitor", self._monitor_loop),
                ("flows", lambda: self.flows.run(self.stop)),
                ("offline-sync", lambda: self.offline_sync.run(self.stop)),
            ):
                thread = threading.Thread(
                    target=self._supervised, args=(name, target), name=name, daemon=True
                )
                thread.start()
                self._threads.append(thread)
            while not self.stop.wait(1.0):  # a timeout keeps the main thread taking signals
                pass
            return self._exit_status()
        finally:
            self.stop.set()
            self._shutdown()

    def _supervised(self, name: str, loop: Any) -> None:
        """Run a loop until stop; a bug in it is logged and the loop started again, never left
        dead (a Runner without heartbeats or claims would look alive to the service manager)."""
        backoff = Backoff(base=1.0, cap=60.0)
        while not self.stop.is_set():
            try:
                loop()
                return
            except Exception:
                delay = backoff.next()
                log.exception("the %s loop failed; starting it again in %.1f s", name, delay)
                self.stop.wait(delay)

    def _forward_stop(self, stop: threading.Event) -> None:
        while not self.stop.is_set():
            if stop.wait(0.5):
                log.info("stopping")
                self.stop.set()

    def _exit_status(self) -> int:
        return EXIT_REMOVED if self.removed is not None else EXIT_OK

    def _on_removed(self, refusal: RunnerRemoved) -> None:
        if self.removed is None:
            self.removed = refusal
            log.error(
                "the service no longer accepts this Runner (%s: %s); stopping. Remove %s and "
                "enroll again with a new token to bring it back.",
                refusal.code,
                refusal.detail,
                self.state.root,
            )
        self.stop.set()

    def _shutdown(self) -> None:
        # Jobs see `stop` at their next check and leave their journal state for the next start.
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.reporter.wake()  # its loop sleeps until woken
        self.offline_sync.wake()
        deadline = time.monotonic() + self.tuning.shutdown_grace_seconds
        while len(self.leases) and time.monotonic() < deadline:
            time.sleep(0.05)
        for thread in self._threads:
            if thread.name != "claim":  # a long poll in flight is not waited for
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        # Kept reports stay in the outbox for the next start: no waiting on a server that is away.
        self.channel.close()
        with self._start_lock:
            self.journal.close()

    # --- talking to the service -----------------------------------------------------------------

    def _call(self, what: str, call: Any, *args: Any) -> Any:
        """One call; None if the service is away or refused it (logged)."""
        try:
            answer = call(*args)
        except ServerAway as exc:
            first = self.connectivity.failed()
            log.log(
                logging.WARNING if first else logging.DEBUG,
                "%s: service unavailable (%s)",
                what,
                exc,
            )
        except RunnerRemoved as exc:
            self._on_removed(exc)
        except Refused as exc:
            hint = (
                f" ({self.channel.base} is not the mutual-TLS endpoint: give --agent-url)"
                if exc.code == "runner.certificate_required"
                else ""
            )
            log.error("%s: refused: %s%s", what, exc, hint)
        else:
            self.connectivity.succeeded()
            return answer
        return None

    def _first_contact(self) -> bool:
        """Until the service answers; or at once, if it does not and the Runner kept what it
        needs to print offline (`site_memory`): its loops go on trying the service."""
        backoff = Backoff(base=1.0, cap=60.0)
        while not self.stop.is_set():
            answer = self._call("heartbeat", self.channel.heartbeat, self._beat())
            if answer is not None:
                self.runner_id = answer.get("runner_id")
                log.info(
                    "connected as %s (etikett-runner %s on %s)",
                    self.runner_id,
                    __version__,
                    self.hostname,
                )
                self._refresh_config()
                self._release_earlier_claims()
                self._released = True
                return True
            kept = self.memory.config() if self.connectivity.down else None  # away, not refused
            if kept is not None and not self.stop.is_set():
                away = self.memory.away_seconds()
                self.connectivity.away_since_start(away)
                self.runner_id = str(kept["runner_id"])
                self._apply_config(kept)
                log.warning(
                    "the service does not answer; starting as %s from what was kept (last "
                    "reached %.0f min ago): deployed flows run, and print offline where allowed",
                    self.runner_id,
                    away / 60,
                )
                return True
            self.connectivity.pause(backoff.next())
        return False

    def _release_earlier_claims(self) -> None:
        """A process killed during its long poll leaves jobs claimed that it never received;
        the service makes them claimable again (the journal tells which ones ran here)."""
        released = self._call("releasing earlier claims", self.channel.release_claims)
        if released:
            log.info("jobs claimed before this start, claimable again: %s", ", ".join(released))

    def _beat(self) -> dict[str, Any]:
        return {
            "hostname": self.hostname[:255],
            "version": __version__,
            "printers": self.printers.statuses(),
            "offline": self.offline_prints.status(),
        }

    def _refresh_config(self) -> bool:
        """False if the configuration could not be fetched (asked again at the next beat)."""
        config = self._call("configuration", self.channel.config)
        if config is None:
            return False
        self._apply_config(config)
        self.memory.remember_config(config)
        return True

    def _apply_config(self, config: dict[str, Any]) -> None:
        ports = config.get("printer_ports")
        reach.allow_group_ports(ports if isinstance(ports, list) else [])
        reach.allow_storage(config.get("data_origin"))
        targets = []
        for item in config.get("printers", []):
            try:
                targets.append(PrinterTarget.from_payload(item))
            except ValueError as exc:
                log.warning("configuration: printer %s ignored: %s", item.get("printer_id"), exc)
        self.printers.configure(targets)

    def _heartbeat_loop(self) -> None:
        """Beat every `heartbeat_seconds` (or as often as the service asks, if that is more
        often), and soon after a printer's status changed; an idle Runner beats rarely, since
        its waiting happens at its queue (docs/scale.md)."""
        next_config = time.monotonic() + self.tuning.config_seconds
        backoff = Backoff(base=2.0, cap=max(self.tuning.heartbeat_seconds, 2.0))
        sent = self.printers.statuses()
        due = time.monotonic() + self._beat_interval()
        while not self.stop.is_set():
            self._beat_now.wait(min(5.0, max(0.05, due - time.monotonic())))
            if self.stop.is_set():
                return
            statuses = self.printers.statuses()
            if time.monotonic() < due and statuses == sent and not self._beat_now.is_set():
                continue
            self._beat_now.clear()
            if self._call("heartbeat", self.channel.heartbeat, self._beat()) is None:
                due = time.monotonic() + backoff.next()  # soon: the service counts us offline
                continue
            sent = statuses
            backoff.reset()
            due = time.monotonic() + self._beat_interval()
            if not self._released:  # started without the service: what the first contact does
                self._released = True
                self._refresh_config()
                self._release_earlier_claims()
            if time.monotonic() >= next_config:
                next_config = time.monotonic() + self.tuning.config_seconds
                if not self._refresh_config():
                    next_config = time.monotonic()  # without it, large jobs cannot be fetched

    def _beat_interval(self) -> float:
        asked = self.queue.heartbeat_seconds if self.queue is not None else None
        interval = self.tuning.heartbeat_seconds
        return max(min(interval, asked) if asked else interval, 0.1)

    def _extend(self, lease: Lease) -> dict[str, Any] | None:
        return self.reporter.report(lease.job_id, {"receipt": lease.receipt}, durable=False)

    # --- jobs -----------------------------------------------------------------------------------

    def _claim_loop(self) -> None:
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
            if self.queue is not None:
                self.queue.settled()  # journaled now: a restart finds them there

    def _wait_for_work(self) -> list[dict[str, Any]]:
        """Jobs claimed after waiting at the Runner's own queue; through the agent channel's
        long poll only where the service hands out no queue credentials."""
        # One job at a time: jobs carry their bytes inline (up to ~5.6 MB as base64), and
        # several in one answer would pass Lambda's 6 MB response limit.
        if self.queue is not None:
            try:
                received = self.queue.receive(self.tuning.claim_wait_seconds, 1)
            except NoDirectAccess:
                log.info("the service hands out no queue credentials; claiming through it")
                self.queue = None
            else:
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

    def _on_notice(self, notice: str) -> None:
        """The service changed what this Runner is to do (printers, context, deployments)."""
        log.info("notice from the service: %s", notice)
        if notice == "config":
            self._refresh_config()
            self.flows.wake()

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

    def _resume_unfinished(self) -> None:
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

    # --- idle printers --------------------------------------------------------------------------

    def _monitor_loop(self) -> None:
        """Read the status of configured printers no job has looked at lately (for heartbeats)."""
        while not self.stop.wait(5.0):
            for target in self.printers.configured():
                if self.stop.is_set():
                    return
                assert target.printer_id is not None
                seen = self.printers.seen(target.printer_id)
                if seen and time.monotonic() - seen.at < self.tuning.status_poll_seconds:
                    continue
                lock = self.printers.try_exclusive(target.address)
                if lock is None:
                    continue  # a job is using it and reports its status
                try:
                    self.printers.note(target, self._read_status(target))
                finally:
                    lock.release()

    def _read_status(self, target: PrinterTarget) -> str:
        try:
            with PrinterConnection(target.address, 2.0, 2.0) as conn:
                return conn.state().status if target.language == "zpl" else "reachable"
        except PrinterUnreachable:
            return "unreachable"
        except NoAnswer:
            return "not_answering"


def _json(body: dict[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"))
