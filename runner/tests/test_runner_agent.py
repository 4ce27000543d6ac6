"""The run loop against a fake agent channel: it outlives a service outage, resumes jobs from
its journal, answers a redelivered finished job from the journal, and stops when removed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.agent import EXIT_OK, EXIT_REMOVED, Agent
from etikett_runner.channel import RunnerRemoved
from etikett_runner.journal import CLAIMED, DONE, Journal
from etikett_runner.leases import (
    EXTEND_AFTER_SECONDS,
    FIRST_EXTEND_AFTER_SECONDS,
    Lease,
    Leases,
)
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints, OfflineRecord, new_print_id
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.state import StateDir
from etikett_runner.transport import Refused, ServerAway
from etikett_runner.tuning import Tuning


class FakeAgentChannel:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.away_calls = 0  # this many calls fail as "service unavailable"
        self.removed = False
        self.queue: list[dict[str, Any]] = []
        self.heartbeats: list[dict[str, Any]] = []
        self.reports: list[tuple[str, dict[str, Any]]] = []
        self.claims = 0
        self.offline: list[str] = []  # offline prints uploaded

    def _gate(self) -> None:
        with self.lock:
            if self.removed:
                raise RunnerRemoved(401, "runner.removed", "gone")
            if self.away_calls > 0:
                self.away_calls -= 1
                raise ServerAway("connection refused")

    def heartbeat(self, beat: dict[str, Any]) -> dict[str, Any]:
        self._gate()
        with self.lock:
            self.heartbeats.append(beat)
        return {"runner_id": "run_1", "status": "online"}

    def config(self) -> dict[str, Any]:
        self._gate()
        return {
            "runner_id": "run_1",
            "name": "test-host",
            "group_id": "rgp_1",
            "printers": [],
            "context": {},
        }

    def release_claims(self) -> list[str]:
        self._gate()
        return []

    def flows(self) -> list[dict[str, Any]]:
        self._gate()
        return []

    def queue_access(self) -> dict[str, Any]:
        # A service without queue credentials: the Runner claims through the channel.
        raise Refused(409, "runner.queue_access_unavailable", "no RunnerQueueRole")

    def claim(self, wait_seconds: int, max_jobs: int) -> list[dict[str, Any]]:
        self._gate()
        with self.lock:
            self.claims += 1
            jobs, self.queue = self.queue[:max_jobs], self.queue[max_jobs:]
        if not jobs:
            time.sleep(0.05)
        return jobs

    def report(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._gate()
        with self.lock:
            self.reports.append((job_id, body))
        return {"id": job_id, "status": body.get("status") or "running"}

    def offline_prints(self, body: dict[str, Any]) -> dict[str, Any]:
        self._gate()
        with self.lock:
            self.offline.extend(p["id"] for p in body["prints"])
        return {"prints": [{"id": p["id"], "result": "accepted"} for p in body["prints"]]}

    def close(self) -> None:
        pass

    def final(self, job_id: str) -> dict[str, Any] | None:
        with self.lock:
            finals = [b for j, b in self.reports if j == job_id and b.get("final")]
        return finals[-1] if finals else None


TUNING = Tuning(heartbeat_seconds=0.1, claim_wait_seconds=0, shutdown_grace_seconds=2)


def start(state: StateDir, channel: FakeAgentChannel) -> tuple[threading.Event, list[int]]:
    stop = threading.Event()
    status: list[int] = []
    agent = Agent(state, channel, TUNING, hostname="test-host")  # type: ignore[arg-type]
    threading.Thread(target=lambda: status.append(agent.run(stop)), daemon=True).start()
    return stop, status


def eventually(probe: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.02)
    return value


@pytest.fixture
def state(tmp_path: Path) -> StateDir:
    folder = StateDir(tmp_path / "state")
    folder.create()
    return folder


def discovery_job(job_id: str, port: int, receipt: str = "r-1") -> dict[str, Any]:
    return {
        "job_id": job_id,
        "kind": "discovery",
        "receipt": receipt,
        "delivery": 1,
        "payload": {"targets": [f"127.0.0.1:{port}"]},
    }


def test_an_outage_means_waiting_and_trying_again_not_crashing(
    state: StateDir, caplog: pytest.LogCaptureFixture
) -> None:
    channel = FakeAgentChannel()
    channel.away_calls = 3  # the service is down when the Runner starts
    with PrinterSimulator(port=0) as printer:
        channel.queue.append(discovery_job("job_1", printer.port))
        stop, status = start(state, channel)
        final = eventually(lambda: channel.final("job_1"))
        assert final["status"] == "succeeded"
        assert final["result"]["findings"][0]["address"] == f"127.0.0.1:{printer.port}"
        channel.away_calls = 5  # down again for a while: heartbeats and claims back off
        heartbeats = len(channel.heartbeats)
        eventually(lambda: len(channel.heartbeats) > heartbeats + 2)
        stop.set()
        eventually(lambda: status)
    assert status == [EXIT_OK]
    assert heartbeats >= 1 and channel.heartbeats[0]["hostname"] == "test-host"
    assert "starting it again" not in caplog.text  # no loop died


def test_jobs_in_the_journal_resume_at_start(state: StateDir) -> None:
    with PrinterSimulator(port=0) as printer:
        journal = Journal(state.journal)
        payload = {"targets": [f"127.0.0.1:{printer.port}"]}
        journal.record("job_7", CLAIMED, kind="discovery", receipt="old", payload=payload)
        journal.close()
        channel = FakeAgentChannel()
        stop, status = start(state, channel)
        final = eventually(lambda: channel.final("job_7"))
        stop.set()
        eventually(lambda: status)
    assert final["status"] == "succeeded" and final["receipt"] == "old"


def test_a_finished_job_delivered_again_is_only_reported_again(state: StateDir) -> None:
    journal = Journal(state.journal)
    outcome = {"status": "confirmed", "final": True}
    journal.record("job_3", DONE, kind="raw", receipt="first", outcome=outcome)
    journal.close()
    channel = FakeAgentChannel()
    raw = {"printer": {"uri": "tcp://127.0.0.1:9"}, "expected_labels": 1}
    channel.queue.append(
        {"job_id": "job_3", "kind": "raw", "receipt": "second", "delivery": 2, "payload": raw}
    )
    stop, status = start(state, channel)
    final = eventually(lambda: (f := channel.final("job_3")) and f["receipt"] == "second" and f)
    stop.set()
    eventually(lambda: status)
    assert final == {"status": "confirmed", "final": True, "receipt": "second"}
    # Once at start (the journal did not know the service had it), once for the redelivery:
    # never anything but the recorded outcome, and never the printer.
    assert [(b["status"], b["receipt"]) for j, b in channel.reports if j == "job_3"] == [
        ("confirmed", "first"),
        ("confirmed", "second"),
    ]


def test_a_removed_runner_stops_with_its_own_exit_status(state: StateDir) -> None:
    channel = FakeAgentChannel()
    _stop, status = start(state, channel)
    eventually(lambda: channel.heartbeats)
    channel.removed = True
    assert eventually(lambda: status, timeout=10) == [EXIT_REMOVED]


def test_heartbeats_report_offline_prints_until_they_are_synced(state: StateDir) -> None:
    """Printed by an earlier process while the service was away: reported by the first
    heartbeat, uploaded once the service answers, and then reported as none left."""
    journal = OfflinePrints(state.root)
    taken = OfflinePrint(
        id=new_print_id(),
        run_id="frn_1",
        deployment_id="dep_1",
        flow_id="flw_1",
        flow_version=1,
        label_id="lbl_1",
        label_version=2,
        printer="line-1",
        printer_id="prn_1",
        copies=2,
        records=[OfflineRecord({"n": 1}), OfflineRecord({"n": 2})],
        printed_at="2026-11-27T10:00:00.000Z",
    )
    journal.record(taken)
    journal.settle(taken.id, "sent")
    channel = FakeAgentChannel()
    channel.away_calls = 1
    stop, status = start(state, channel)
    try:
        eventually(lambda: channel.offline == [taken.id])
        eventually(lambda: len(channel.heartbeats) >= 2)
        with channel.lock:
            beats = [b["offline"] for b in channel.heartbeats]
        assert beats[0] == {"unsynced_labels": 4, "oldest_unsynced_at": taken.printed_at}
        eventually(lambda: channel.heartbeats[-1]["offline"]["unsynced_labels"] == 0)
        assert OfflinePrints(state.root).unsynced() == []
    finally:
        stop.set()
    eventually(lambda: status)


def test_the_keeper_reports_a_job_soon_after_its_receipt_then_when_quiet_a_while() -> None:
    """A job is received hidden for 20 s: the keeper's first report comes 8 s after the receipt
    (its claim did not hide it longer), later ones after 40 quiet seconds."""
    kept = Leases()
    lease = kept.open("job_1", "r-1")
    assert lease is not None
    assert kept.quiet(EXTEND_AFTER_SECONDS) == []
    lease.reported_at = time.monotonic() - (FIRST_EXTEND_AFTER_SECONDS + 1)
    assert kept.quiet(EXTEND_AFTER_SECONDS) == [lease]
    stop = threading.Event()
    extended: list[str] = []

    def extend(each: Lease) -> dict[str, str]:
        extended.append(each.job_id)
        stop.set()
        return {"status": "running"}

    kept.keep(stop, extend, every=0.01)
    assert extended == ["job_1"] and lease.kept
    assert kept.quiet(EXTEND_AFTER_SECONDS) == []  # reported just now
    lease.reported_at = time.monotonic() - (FIRST_EXTEND_AFTER_SECONDS + 1)
    assert kept.quiet(EXTEND_AFTER_SECONDS) == []  # extended for two minutes: 40 s of quiet
    lease.reported_at = time.monotonic() - (EXTEND_AFTER_SECONDS + 1)
    assert kept.quiet(EXTEND_AFTER_SECONDS) == [lease]
