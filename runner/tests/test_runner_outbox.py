"""The outbox and the reporter: undelivered reports are kept on disk and delivered in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from etikett_runner.channel import RunnerRemoved
from etikett_runner.outbox import Outbox
from etikett_runner.reporter import Reporter
from etikett_runner.transport import Refused, ServerAway


class FakeChannel:
    """The agent channel's `report`, with a switch for "the service is away"."""

    def __init__(self) -> None:
        self.away = False
        self.delivered: list[tuple[str, dict[str, Any]]] = []
        self.refuse: dict[str, Refused] = {}

    def report(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.away:
            raise ServerAway("connection refused")
        if job_id in self.refuse:
            raise self.refuse[job_id]
        self.delivered.append((job_id, body))
        return {"id": job_id, "status": body.get("status") or "running"}


def reporter(tmp_path: Path, channel: FakeChannel) -> tuple[Reporter, list[RunnerRemoved]]:
    removed: list[RunnerRemoved] = []
    return Reporter(channel, Outbox(tmp_path / "outbox"), removed.append), removed  # type: ignore[arg-type]


def test_outbox_keeps_order_across_a_restart(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "outbox")
    box.put("job_a", {"status": "sent"})
    box.put("job_b", {"status": "held"})
    box.put("job_a", {"status": "confirmed", "final": True})
    again = Outbox(tmp_path / "outbox")
    assert [(p.job_id, p.body["status"]) for p in again.pending()] == [
        ("job_a", "sent"),
        ("job_b", "held"),
        ("job_a", "confirmed"),
    ]
    assert again.has("job_a") and len(again) == 3
    later = again.put("job_c", {})
    assert later.seq > max(p.seq for p in again.pending() if p.job_id != "job_c")
    for item in again.pending():
        again.remove(item)
    assert len(again) == 0 and not again.has("job_a")
    assert list((tmp_path / "outbox").iterdir()) == []


def test_an_unreadable_report_is_moved_aside(tmp_path: Path) -> None:
    folder = tmp_path / "outbox"
    folder.mkdir()
    (folder / "0000000000000001-job_x.json").write_text("{not json")
    box = Outbox(folder)
    assert box.pending() == []
    assert (folder / "0000000000000001-job_x.json.unreadable").exists()


def test_reports_go_straight_through_when_the_service_answers(tmp_path: Path) -> None:
    channel = FakeChannel()
    rep, _ = reporter(tmp_path, channel)
    view = rep.report("job_1", {"status": "sent"})
    assert view == {"id": "job_1", "status": "sent"}
    assert len(rep.outbox) == 0


def test_reports_wait_in_the_outbox_while_the_service_is_away(tmp_path: Path) -> None:
    channel = FakeChannel()
    rep, _ = reporter(tmp_path, channel)
    channel.away = True
    assert rep.report("job_1", {"status": "sent"}) is None
    assert rep.report("job_1", {"status": "confirmed", "final": True}) is None
    assert rep.report("job_1", {}, durable=False) is None  # visibility extensions are not kept
    assert rep.flush() is False
    channel.away = False
    # A new report for the same job queues behind the kept ones: order is kept.
    assert rep.report("job_1", {"messages": []}) is None
    assert rep.report("job_2", {"status": "held"}) is not None  # other jobs are not held up
    assert rep.flush() is True
    assert [(j, b.get("status")) for j, b in channel.delivered] == [
        ("job_2", "held"),
        ("job_1", "sent"),
        ("job_1", "confirmed"),
        ("job_1", None),
    ]


def test_the_outbox_survives_a_restart_of_the_runner(tmp_path: Path) -> None:
    channel = FakeChannel()
    channel.away = True
    first, _ = reporter(tmp_path, channel)
    first.report("job_1", {"status": "failed", "reason": "unreachable", "final": True})
    channel.away = False
    second, _ = reporter(tmp_path, channel)  # a new process, the same state directory
    assert second.flush() is True
    assert channel.delivered == [
        ("job_1", {"status": "failed", "reason": "unreachable", "final": True})
    ]


def test_a_refused_kept_report_is_dropped_not_retried_forever(tmp_path: Path) -> None:
    channel = FakeChannel()
    rep, _ = reporter(tmp_path, channel)
    channel.away = True
    rep.report("job_1", {"status": "sent"})
    channel.away = False
    channel.refuse["job_1"] = Refused(409, "job.finished", "The job is already confirmed.")
    assert rep.flush() is True
    assert len(rep.outbox) == 0


def test_a_removed_runner_is_told_once_and_nothing_is_kept(tmp_path: Path) -> None:
    channel = FakeChannel()
    rep, removed = reporter(tmp_path, channel)
    channel.refuse["job_1"] = RunnerRemoved(401, "runner.removed", "gone")
    assert rep.report("job_1", {"status": "sent"}) is None
    assert [r.code for r in removed] == ["runner.removed"]
    assert len(rep.outbox) == 0
