"""One deployed flow version on the Runner with its triggers (folders, schedules, HTTP), and the
run of one trigger event through the engine; a flow that could not start (`Failed`). The host
(`flow_host`) starts, replaces and stops them."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etikett_runner.flow_effects import SiteEffects
from etikett_runner.flow_runs import Batch, EventFile, PendingRun, new_run_id, now
from etikett_runner.flow_triggers import FolderWatch, TriggerUnusable, schedule

if TYPE_CHECKING:
    from etikett_runner.flow_host import FlowHost

log = logging.getLogger(__name__)

TRACED_RECORDS = 3  # records whose trace goes with the run's report


def fingerprint(spec: dict[str, Any]) -> str:
    """What makes a flow start anew: its deployment, version and document. Context and
    printers change without a restart."""
    identity = [spec["deployment_id"], spec["flow_id"], spec["version"], spec["document"]]
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


class Deployed:
    """One deployed flow version with its triggers."""

    def __init__(self, host: FlowHost, spec: dict[str, Any]) -> None:
        from etikett_engine.flows.engine import FlowProgram

        self.host = host
        self.spec = spec
        self.flow_id: str = spec["flow_id"]
        self.deployment_id: str = spec["deployment_id"]
        self.version = int(spec["version"])
        self.key = fingerprint(spec)
        self.program = FlowProgram.compile(spec["document"])
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()  # one event at a time through the engine
        self.folders: list[Path] = []
        self._watches: list[FolderWatch] = []

    def start(self) -> None:
        """Start every trigger; TriggerUnusable says why one cannot run here."""
        problems = self.spec.get("problems") or []
        if problems:  # the service says why (a printer or the version is gone)
            raise TriggerUnusable("; ".join(str(p) for p in problems))
        self._check_printers()
        starts: list[tuple[str, Callable[[threading.Event], None]]] = []
        for node in self.program.triggers():
            fields = node.fields()
            if node.type == "trigger.folder":
                folder = self.host.data_dir / str(fields["path"])  # an absolute path stays
                watch = FolderWatch(
                    self, node.id, folder, fields, self.host.tuning.folder_seconds, self.host.roots
                )
                self._watches.append(watch)
                watch.check()  # inside the allowed roots, opened and held
                self.host.watch(watch.real, self)
                self.folders.append(watch.real)
                starts.append((f"folder {node.id}", watch.run))
            elif node.type == "trigger.schedule":
                every = float(fields["every_s"])
                starts.append((f"schedule {node.id}", schedule(self, node.id, every)))
            elif node.type == "trigger.http":
                if self.host.http is None:
                    raise TriggerUnusable(
                        "this Runner takes no HTTP triggers: start it with --listen [HOST:]PORT"
                    )
                secret = fields.get("secret")
                if secret is not None and secret not in (self.spec.get("credentials") or {}):
                    raise TriggerUnusable(  # never open without the secret it asks for
                        f"the HTTP trigger's secret {secret!r} was not delivered to this Runner "
                        "(it must be a `secret` credential that exists)"
                    )
                self.host.http.add(str(fields["path"]), self, node.id, secret)
            else:
                raise TriggerUnusable(f"{node.type} is not a trigger this Runner knows")
        for name, target in starts:
            thread = threading.Thread(
                target=self._guarded, args=(name, target), name=f"{self.flow_id} {name}"
            )
            thread.daemon = True
            thread.start()
            self._threads.append(thread)

    def _check_printers(self) -> None:
        assigned = self.spec.get("printers") or {}
        for node in self.program.document.nodes:
            if node.type == "action.print":
                alias = str(node.fields().get("printer"))
                if alias not in assigned:
                    raise TriggerUnusable(
                        f"the printer alias {alias!r} has no printer in {self.deployment_id}"
                    )

    def _guarded(self, name: str, target: Callable[[threading.Event], None]) -> None:
        while not self._stop.is_set():
            try:
                target(self._stop)
                return
            except Exception:
                log.exception(
                    "flow %s: the %s trigger failed; starting it again", self.flow_id, name
                )
                self._stop.wait(5.0)

    def close(self) -> None:
        self._stop.set()
        if self.host.http is not None:
            self.host.http.remove(self)
        for folder in self.folders:
            self.host.unwatch(folder, self)
        for thread in self._threads:
            thread.join(timeout=30)  # a file being run is journaled before the thread ends
        for watch in self._watches:
            watch.close()  # the folders a watch that never ran still holds

    def owns(self, claimed: Path) -> bool:
        return self.host.sender.owns(claimed)

    def run_event(
        self,
        node_id: str,
        records: list[dict[str, Any]],
        source: str,
        *,
        run_id: str | None = None,
        file: EventFile | None = None,
        problem: str | None = None,
        note: str | None = None,
    ) -> str:
        """Run one trigger event's records through the flow and journal the run for delivery;
        the run's id. `note`: a warning for the run's log (the event itself, not a record)."""
        from etikett_engine.flows.engine import RunEnv

        run_id = run_id or new_run_id()
        with self._lock:
            spec = self.spec
            run = PendingRun(
                id=run_id,
                deployment_id=self.deployment_id,
                flow_id=self.flow_id,
                version=self.version,
                trigger_node=node_id,
                source=source,
                started_at=now(),
                records=len(records),
                problem=problem,
                file=file,
            )
            effects = SiteEffects(
                self.host.data_dir, spec.get("credentials"), spec.get("credential_origins")
            )
            env = RunEnv(
                context=spec.get("context") or {}, runner=self.host.identity, run_id=run_id
            )
            values = self.program.env_values(env)
            for index, record in enumerate(records):
                effects.record_index = index
                result = self.program.run_record(
                    record,
                    node_id,
                    effects,
                    env=env,
                    record_index=index,
                    env_values=values,
                    trace=index < TRACED_RECORDS,
                )
                if result.trace:
                    run.traces.append(result.trace)
                if result.exhausted:
                    effects.withdraw(index)
                for error in result.errors:
                    run.fail(index, error.get("node_id"), str(error.get("message")))
            # A record that failed in one node still prints what other branches gave it.
            run.batches = [
                Batch(
                    printer=b.printer,
                    label=b.label,
                    copies=b.copies,
                    records=b.records,
                    indexes=b.indexes,
                    key=f"{run_id}:{number}",
                )
                for number, b in enumerate(effects.batches)
            ]
            run.messages = effects.messages
            if note is not None:
                run.messages.insert(
                    0, {"record": None, "node_id": node_id, "level": "warning", "message": note}
                )
        self.host.sender.submit(run)
        return run_id


class Failed:
    """A flow that could not start: nothing runs; tried again later or when it changes."""

    def __init__(self, spec: dict[str, Any], reason: str) -> None:
        self.spec = spec
        self.key = fingerprint(spec)
        self.deployment_id: str = spec["deployment_id"]
        self.reason = reason
        self.since = time.monotonic()

    def close(self) -> None:
        return None
