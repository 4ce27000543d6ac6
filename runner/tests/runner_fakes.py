"""Test doubles for the Runner's unit tests: the agent channel's report call, a job context
wired to a real journal, outbox and state directory, and the agent channel's flow calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from etikett_runner.channel import AgentChannel
from etikett_runner.context import JobContext
from etikett_runner.journal import CLAIMED, Journal
from etikett_runner.leases import Lease
from etikett_runner.outbox import Outbox
from etikett_runner.reporter import Reporter
from etikett_runner.state import StateDir
from etikett_runner.transport import Refused, ServerAway


class FakeService:
    """Records reports like the service does; can be away, and can cancel a job."""

    def __init__(self) -> None:
        self.away = False
        self.reports: list[tuple[str, dict[str, Any]]] = []
        self.status: dict[str, str] = {}
        self.delays: dict[str, float] = {}  # by reported status: a slow service
        self._lock = threading.Lock()

    def report(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.away:
            raise ServerAway("away")
        time.sleep(self.delays.get(str(body.get("status")), 0))
        with self._lock:
            self.reports.append((job_id, body))
            if self.status.get(job_id) != "cancelled" and body.get("status"):
                self.status[job_id] = body["status"]
            return {"id": job_id, "status": self.status.get(job_id, "running")}

    def cancel(self, job_id: str) -> None:
        with self._lock:
            self.status[job_id] = "cancelled"

    def statuses(self, job_id: str) -> list[str | None]:
        return [b.get("status") for b in self.bodies(job_id) if b.get("status")]

    def bodies(self, job_id: str) -> list[dict[str, Any]]:
        """The reports as the service records them: held-back ones (`earlier`) first."""
        with self._lock:
            requests = [b for j, b in self.reports if j == job_id]
        return [each for b in requests for each in [*b.get("earlier", []), b]]

    def requests(self, job_id: str) -> int:
        with self._lock:
            return sum(1 for j, _ in self.reports if j == job_id)

    def texts(self, job_id: str) -> list[str]:
        return [m["text"] for b in self.bodies(job_id) for m in b.get("messages", [])]


class Harness:
    def __init__(self, root: Path) -> None:
        self.state = StateDir(root)
        self.state.create()
        self.service = FakeService()
        self.journal = Journal(self.state.journal)
        channel: AgentChannel = self.service  # type: ignore[assignment]
        self.reporter = Reporter(channel, Outbox(self.state.outbox), lambda removed: None)
        self.stop = threading.Event()

    def context(
        self,
        job_id: str,
        kind: str,
        payload: dict[str, Any],
        data: bytes | None = None,
        *,
        claim: bool = True,
    ) -> JobContext:
        if claim:
            if data is not None:
                self.state.spool_write(job_id, data)
            self.journal.record(job_id, CLAIMED, kind=kind, receipt="r-1", payload=payload)
        return JobContext(
            job_id=job_id,
            kind=kind,
            payload=payload,
            lease=Lease(job_id, "r-1"),
            journal=self.journal,
            state=self.state,
            reporter=self.reporter,
            stop=self.stop,
        )


# --- deployed flows ----------------------------------------------------------------------


class FakeChannel:
    """The agent channel's flow calls, recorded; answers can be scripted per call."""

    def __init__(self) -> None:
        self.prints: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []
        self.statuses: list[tuple[str, dict[str, Any]]] = []
        self.wanted: list[dict[str, Any]] = []
        self.print_answers: list[Callable[[dict[str, Any]], Any]] = []
        self.bundle_key: str | None = None  # the public key the configuration names
        self.away = False
        self.lock = threading.Lock()

    def _gate(self) -> None:
        if self.away:
            raise ServerAway("away", reached=False)  # stopped: connections refused

    def config(self) -> dict[str, Any]:
        self._gate()
        config = {"runner_id": "run_1", "name": "site-pc", "group_id": "rgp_1"}
        return {**config, "bundle_public_key": self.bundle_key} if self.bundle_key else config

    def flows(self) -> list[dict[str, Any]]:
        self._gate()
        return list(self.wanted)

    def deployment_status(self, deployment_id: str, body: dict[str, Any]) -> None:
        self._gate()
        with self.lock:
            self.statuses.append((deployment_id, dict(body)))

    def flow_print(self, body: dict[str, Any]) -> dict[str, Any]:
        self._gate()
        with self.lock:
            self.prints.append(body)
            number = len(self.prints)
        if self.print_answers:
            answer = self.print_answers.pop(0)(body)
            if answer is not None:
                return dict(answer)
        return {"job_id": f"job_{number}", "status": "queued"}

    def flow_run(self, body: dict[str, Any]) -> dict[str, Any]:
        self._gate()
        with self.lock:
            self.runs.append(body)
        return {"id": body["id"]}


def refuse(status: int, code: str, **params: Any) -> Callable[[dict[str, Any]], Any]:
    def answer(body: dict[str, Any]) -> Any:
        raise Refused(status, code, "refused", params)

    return answer


def eventually(probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.02)
    return value


def spec(document: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "deployment_id": "dep_1",
        "flow_id": "flw_1",
        "version": 1,
        "document": document,
        "context": {"site": "A"},
        "printers": {"ship": "Zebra"},
        **extra,
    }


def statuses(channel: FakeChannel) -> list[tuple[str, str | None]]:
    with channel.lock:
        return [(b["status"], b["detail"]) for _, b in channel.statuses]
