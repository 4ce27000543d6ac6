"""The run loop of an enrolled Runner: heartbeats, configuration, taking jobs in from its own
queue and running them on worker threads (`intake`), delivering kept reports, extending jobs in
flight, reading idle printers' status, running deployed flows (`flow_host`) and uploading what
they printed while the service was away (`offline_sync`). Network trouble means backing off and
trying again, never exiting; only a stop request or the service refusing this Runner (removed)
ends the loop."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

from etikett_runner import __version__, reach
from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.counter_blocks import CounterBlocks
from etikett_runner.flow_host import FlowHost
from etikett_runner.http_triggers import HttpTriggers
from etikett_runner.intake import JobIntake
from etikett_runner.journal import Journal
from etikett_runner.leases import Lease, Leases
from etikett_runner.offline_prints import OfflinePrints
from etikett_runner.offline_sync import OfflineSync
from etikett_runner.outbox import Outbox
from etikett_runner.printers import Printers, PrinterTarget
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
        self.intake = JobIntake(
            state=state,
            channel=channel,
            tuning=self.tuning,
            journal=self.journal,
            outbox=self.outbox,
            reporter=self.reporter,
            leases=self.leases,
            printers=self.printers,
            connectivity=self.connectivity,
            stop=self.stop,
            on_removed=self._on_removed,
            on_notice=self._on_notice,
        )
        self._beat_now = threading.Event()  # a printer's status changed: tell the service
        self._threads: list[threading.Thread] = []
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
            self.intake.resume_unfinished()
            for name, target in (
                ("heartbeat", self._heartbeat_loop),
                ("claim", self.intake.run),
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
        self.intake.shutdown()
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
        self.intake.close_journal()

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
        queue = self.intake.queue
        asked = queue.heartbeat_seconds if queue is not None else None
        interval = self.tuning.heartbeat_seconds
        return max(min(interval, asked) if asked else interval, 0.1)

    def _on_notice(self, notice: str) -> None:
        """The service changed what this Runner is to do (printers, context, deployments)."""
        log.info("notice from the service: %s", notice)
        if notice == "config":
            self._refresh_config()
            self.flows.wake()

    def _extend(self, lease: Lease) -> dict[str, Any] | None:
        return self.reporter.report(lease.job_id, {"receipt": lease.receipt}, durable=False)

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
