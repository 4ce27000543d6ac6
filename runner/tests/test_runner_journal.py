"""The job journal: states survive a restart, a torn line is ignored, old jobs are dropped."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from etikett_runner.journal import CLAIMED, DONE, SENT, STARTED, Journal


def test_states_merge_and_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.record("job_1", CLAIMED, kind="raw", receipt="r1", payload={"printer": {"uri": "u"}})
    journal.record("job_1", STARTED, odometer=41, expected=2)
    journal.record("job_1", SENT)
    journal.record("job_2", CLAIMED, kind="discovery", receipt="r2")
    journal.record("job_2", DONE, outcome={"status": "succeeded", "final": True})
    journal.close()

    again = Journal(path)
    first = again.get("job_1")
    assert first is not None
    assert (first.state, first.kind, first.receipt) == (SENT, "raw", "r1")
    assert (first.odometer, first.expected) == (41, 2)
    assert first.payload == {"printer": {"uri": "u"}}
    second = again.get("job_2")
    assert second is not None and second.finished
    assert second.outcome == {"status": "succeeded", "final": True}
    assert [r.job_id for r in again.unfinished()] == ["job_1"]


def test_every_line_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    journal.record("job_1", CLAIMED)
    journal.record("job_1", STARTED, odometer=0, expected=1)
    assert len(synced) == 2


def test_a_line_cut_off_by_a_crash_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.record("job_1", CLAIMED, receipt="r")
    journal.record("job_1", STARTED, odometer=5, expected=1)
    journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"job_id":"job_1","state":"se')  # the crash hit mid-write

    again = Journal(path)
    record = again.get("job_1")
    assert record is not None and record.state == STARTED and record.odometer == 5
    again.record("job_1", SENT)  # appends cleanly after the rewrite
    again.close()
    assert Journal(path).get("job_1").state == SENT  # type: ignore[union-attr]


def test_garbage_lines_do_not_stop_loading(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b'not json\n{"job_id":"job_9","state":"claimed","at":1}\n[]\n')
    journal = Journal(path)
    assert journal.get("job_9") is not None


def test_compaction_keeps_unfinished_and_recent_jobs(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    now = [1_000_000.0]
    journal = Journal(path, clock=lambda: now[0])
    journal.record("old", DONE, outcome={"status": "confirmed"})
    journal.record("stuck", CLAIMED, receipt="r")
    now[0] += 20 * 24 * 3600
    journal.record("recent", DONE, outcome={"status": "failed"})
    journal.close()

    again = Journal(path, clock=lambda: now[0])
    assert again.get("old") is None
    assert again.get("stuck") is not None  # unfinished jobs are never dropped
    assert again.get("recent") is not None
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["job_id"] for line in lines)


def test_receipt_updates_for_jobs_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.record("job_1", CLAIMED, receipt="first")
    journal.note_receipt("job_1", "second")
    journal.record("job_2", DONE, receipt="x", outcome={})
    journal.note_receipt("job_2", "ignored")  # finished: nothing to extend
    journal.close()
    again = Journal(path)
    assert again.get("job_1").receipt == "second"  # type: ignore[union-attr]
    assert again.get("job_2").receipt == "x"  # type: ignore[union-attr]


def test_the_journal_is_private(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    Journal(path).record("job_1", CLAIMED)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_unknown_states_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Journal(tmp_path / "j.jsonl").record("job_1", "printed")


def test_finished_jobs_keep_only_their_outcome_and_go_once_reported(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    now = [1_000_000.0]
    journal = Journal(path, clock=lambda: now[0])
    journal.record("job_1", CLAIMED, receipt="r", payload={"printer": {"uri": "tcp://x:9100"}})
    journal.record("job_1", DONE, outcome={"status": "confirmed", "final": True})
    journal.record("job_2", DONE, outcome={"status": "failed", "final": True})
    assert journal.get("job_1").payload == {}  # type: ignore[union-attr]
    assert [r.job_id for r in journal.unreported()] == ["job_1", "job_2"]
    journal.mark_reported("job_1")
    assert [r.job_id for r in journal.unreported()] == ["job_2"]
    journal.close()
    now[0] += 3 * 24 * 3600  # reported jobs are kept two days, unreported ones 15
    again = Journal(path, clock=lambda: now[0])
    assert again.get("job_1") is None
    assert again.get("job_2") is not None and not again.get("job_2").reported  # type: ignore[union-attr]


def test_a_long_running_journal_is_compacted_as_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = Journal(path, compact_every=50)
    for number in range(100):
        journal.record(f"job_{number}", CLAIMED, receipt="r")
        journal.record(f"job_{number}", DONE, outcome={"status": "succeeded"})
    lines = path.read_text().splitlines()
    assert len(lines) == 100  # 200 lines appended, rewritten to one line per job
    journal.close()
    again = Journal(path)
    assert len(again) == 100 and all(again.get(f"job_{n}").finished for n in range(100))  # type: ignore[union-attr]
