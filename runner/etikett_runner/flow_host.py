"""Deployed flows on the Runner. Every few seconds the host asks the service which flow versions
its group is to run (each with its effective context and printer aliases) and brings the running
set in line without a restart: a new version (or deployment) stops the old triggers and starts
the new ones, reporting `applying`, then `active` or `failed` with the reason; a change of
context or printers applies to the next event. A flow that could not start is tried again
every half minute and whenever its deployment changes.

Each flow is a `deployed_flow.Deployed`, whose trigger events run through the one engine
(`etikett_engine.flows`) here, on the site; their prints, reports and files go to the service
through `run_sender.RunSender`, exactly once."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from etikett_runner.bundles import SiteBundles
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.counter_blocks import CounterBlocks
from etikett_runner.counter_reserve import CounterReserve
from etikett_runner.deployed_flow import Deployed, Failed, fingerprint
from etikett_runner.flow_runs import (
    RunJournal,
)
from etikett_runner.flow_triggers import TriggerUnusable
from etikett_runner.http_triggers import HttpTriggers
from etikett_runner.offline_printing import OfflinePrinter
from etikett_runner.offline_prints import OfflinePrints
from etikett_runner.printers import Printers
from etikett_runner.roots import AllowedRoots
from etikett_runner.run_sender import RunSender
from etikett_runner.site_memory import SiteMemory
from etikett_runner.transport import Refused, ServerAway
from etikett_runner.tuning import Tuning

log = logging.getLogger(__name__)


class FlowHost:
    def __init__(
        self,
        channel: AgentChannel,
        state_root: Path,
        data_dir: Path,
        connectivity: Connectivity,
        on_removed: Callable[[RunnerRemoved], None],
        *,
        http: HttpTriggers | None = None,
        tuning: Tuning | None = None,
        roots: AllowedRoots | None = None,
        printers: Printers | None = None,
        offline_prints: OfflinePrints | None = None,
        counter_blocks: CounterBlocks | None = None,
        memory: SiteMemory | None = None,
    ) -> None:
        self.channel = channel
        self.memory = memory
        self.data_dir = data_dir
        # Where flows may watch and write: the data folder and the site's --watch-root folders.
        self.roots = roots or AllowedRoots.of(data_dir, (), state_root)
        self.connectivity = connectivity
        self.on_removed = on_removed
        self.http = http
        self.tuning = tuning or Tuning()
        self.identity: dict[str, Any] = {}
        self.bundles = SiteBundles(state_root)  # signed deployments, verified and kept
        # Printing while the service is away: values from reserved blocks, prints journaled.
        self.counter_blocks = counter_blocks or CounterBlocks(state_root)
        self.reserve = CounterReserve(self.counter_blocks, lambda body: channel.counter_block(body))
        self.offline = OfflinePrinter(
            self.bundles,
            self.counter_blocks,
            offline_prints or OfflinePrints(state_root),
            printers or Printers(),
            connectivity,
            self.tuning,
        )
        self._reserve_due = threading.Event()
        self.sender = RunSender(
            channel,
            RunJournal(state_root / "flow-runs"),
            connectivity,
            on_removed,
            self.roots,
            offline=self.offline,
            on_delivered=self._after_run,
        )
        self.running: dict[str, Deployed | Failed] = {}  # flow id → what runs
        self._reports: dict[str, dict[str, Any]] = {}  # deployment id → status not yet told
        self._folders: dict[Path, Deployed] = {}
        self._folder_lock = threading.Lock()
        self._wake = threading.Event()

    # --- the loop ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Until `stop`: deliver runs left from before, then keep the running flows in line
        with the service. Stopping stops every trigger (a file being run is journaled first)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.sender.load()
        sender = threading.Thread(target=self.sender.run, args=(stop,), name="flow runs")
        sender.daemon = True
        sender.start()
        if self.http is not None:
            self.http.start()
        try:
            if not self.refresh():
                self.start_kept()  # a start without the service: what it signed last time
            while not stop.is_set():
                try:
                    if self.refresh():
                        self.retry_failed()
                        self._reserve_due.set()
                    self.send_reports()
                    if self._reserve_due.is_set():
                        self._reserve_due.clear()
                        self.reserve_blocks()
                except Exception:  # never leave deployed flows unattended
                    log.exception("deployed flows: the update failed; again shortly")
                deadline = time.monotonic() + self._pause()
                while not stop.is_set() and not self._wake.is_set():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._wake.wait(min(remaining, 0.5))  # stop is looked at twice a second
                self._wake.clear()
        finally:
            for flow in self.running.values():
                flow.close()
            self.running.clear()
            if self.http is not None:
                self.http.close()
            sender.join(timeout=5)

    def wake(self) -> None:
        """Ask the service for deployed flows now (it sent a notice that they changed)."""
        self._wake.set()

    def _after_run(self) -> None:
        """A run was delivered (the service answers): top up the counter blocks soon, in this
        loop, never on the run's path."""
        self._reserve_due.set()
        self._wake.set()

    def reserve_blocks(self) -> int:
        """Reserve counter blocks for the bundles that allow offline printing (below their
        low-water mark only); the blocks granted."""
        if self.connectivity.down:
            return 0
        try:
            return self.reserve.refill(self.offline.payloads())
        except RunnerRemoved as removed:
            self.on_removed(removed)
            return 0

    def _pause(self) -> float:
        """Until the next look: soon while a status waits to be told or a flow to be retried."""
        pending = self._reports or any(isinstance(f, Failed) for f in self.running.values())
        return min(self.tuning.flows_seconds, 2.0) if pending else self.tuning.flows_seconds

    def refresh(self) -> bool:
        """Ask the service what to run and apply it; False if it could not be asked (what runs
        keeps running)."""
        try:
            if not self.identity:
                config = self.channel.config()
                self.identity = {
                    "id": config["runner_id"],
                    "name": config["name"],
                    "group_id": config["group_id"],
                }
                self.bundles.pin(config.get("bundle_public_key"))
            wanted = self.channel.flows()
        except ServerAway as away:
            self.connectivity.failed()
            log.debug("deployed flows: service away (%s)", away)
            return False
        except RunnerRemoved as removed:
            self.on_removed(removed)
            return False
        except Refused as refused:
            log.error("deployed flows: refused: %s", refused)
            return False
        self.connectivity.succeeded()
        self.apply(wanted)
        if self.memory is not None:
            self.memory.remember_flows(wanted)
        return True

    def start_kept(self) -> None:
        """Run the flows kept from the last answer (each checked against its signed bundle
        again), when the Runner starts while the service does not answer."""
        if self.memory is None or self.running:
            return
        kept, config = self.memory.flows(), self.memory.config()
        if not kept or config is None:
            return
        self.identity = {k: config[k] for k in ("runner_id", "name", "group_id") if k in config}
        self.identity["id"] = self.identity.pop("runner_id")
        log.warning("deployed flows: the service does not answer; %d kept flow(s) start", len(kept))
        self.apply(kept)

    def apply(self, wanted: list[dict[str, Any]]) -> None:
        # What runs is what the service signed; a refused bundle's flow cannot start (failed).
        wanted = [self.bundles.accept(spec, self.identity.get("id")) for spec in wanted]
        self.bundles.forget({str(spec["deployment_id"]) for spec in wanted})
        self.offline.use({str(s["deployment_id"]): s["signed"] for s in wanted if "signed" in s})
        specs = {spec["flow_id"]: spec for spec in wanted}
        for flow_id in list(self.running):
            spec = specs.get(flow_id)
            current = self.running[flow_id]
            if spec is None or fingerprint(spec) != current.key:
                self.running.pop(flow_id).close()
                log.info("flow %s (%s) stopped", flow_id, current.deployment_id)
            elif isinstance(current, Deployed):
                current.spec = spec  # context and printers: the next event uses them
        for flow_id, spec in specs.items():
            if flow_id in self.running:
                current = self.running[flow_id]
                if isinstance(current, Failed) and spec != current.spec:
                    self.running.pop(flow_id)
                    self._start(spec)  # its printers or context changed: try again now
                continue
            self._start(spec)

    def _start(self, spec: dict[str, Any], retry_of: Failed | None = None) -> None:
        """Start a flow and tell the service how it went (a retry that fails as before tells
        nothing new)."""
        flow_id, deployment_id = spec["flow_id"], spec["deployment_id"]
        if retry_of is None:
            self._report(deployment_id, "applying", None)
        flow: Deployed | None = None
        try:
            flow = Deployed(self, spec)
            flow.start()
        except TriggerUnusable as unusable:
            reason = str(unusable)
        except Exception as error:  # a flow the engine cannot run never stops the Runner
            log.exception("flow %s cannot start", flow_id)
            reason = f"the flow cannot start here: {error}"
        else:
            self.running[flow_id] = flow
            self._report(deployment_id, "active", None)
            log.info("flow %s version %s active (%s)", flow_id, spec["version"], deployment_id)
            return
        if flow is not None:
            flow.close()
        self.running[flow_id] = Failed(spec, reason)
        if retry_of is None or retry_of.reason != reason:
            log.warning("flow %s (%s) cannot run: %s", flow_id, deployment_id, reason)
            self._report(deployment_id, "failed", reason)

    def retry_failed(self) -> None:
        due = time.monotonic() - self.tuning.flow_retry_seconds
        for flow_id, current in list(self.running.items()):
            if isinstance(current, Failed) and current.since <= due:
                self.running.pop(flow_id)
                self._start(current.spec, retry_of=current)

    # --- folders watched -------------------------------------------------------------------

    def watch(self, folder: Path, flow: Deployed) -> None:
        key = folder  # where it really is
        with self._folder_lock:
            other = self._folders.get(key)
            if other is not None and other is not flow:
                raise TriggerUnusable(f"{folder} is watched by flow {other.flow_id} already")
            self._folders[key] = flow

    def unwatch(self, folder: Path, flow: Deployed) -> None:
        key = folder
        with self._folder_lock:
            if self._folders.get(key) is flow:
                del self._folders[key]

    # --- telling the service ----------------------------------------------------------------

    def _report(self, deployment_id: str, status: str, detail: str | None) -> None:
        self._reports[deployment_id] = {"status": status, "detail": detail}  # the latest counts
        self.send_reports()

    def send_reports(self) -> None:
        for deployment_id, body in list(self._reports.items()):
            try:
                self.channel.deployment_status(deployment_id, body)
            except RunnerRemoved as removed:
                self.on_removed(removed)
                return
            except ServerAway:
                self.connectivity.failed()
                return  # next round
            except Refused as refused:  # e.g. the deployment is gone: nothing to retry
                log.warning("deployment %s: status refused: %s", deployment_id, refused)
            if self._reports.get(deployment_id) is body:
                del self._reports[deployment_id]
