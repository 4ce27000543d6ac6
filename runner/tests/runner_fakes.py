"""Test doubles for the Runner's unit tests: the agent channel's report call, and a job context
wired to a real journal, outbox and state directory."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from etikett_runner.channel import AgentChannel
from etikett_runner.context import JobContext
from etikett_runner.journal import CLAIMED, Journal
from etikett_runner.leases import Lease
from etikett_runner.outbox import Outbox
from etikett_runner.reporter import Reporter
from etikett_runner.state import StateDir
from etikett_runner.transport import ServerAway


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
        with self._lock:
            return [b.get("status") for j, b in self.reports if j == job_id and b.get("status")]

    def bodies(self, job_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [b for j, b in self.reports if j == job_id]

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
