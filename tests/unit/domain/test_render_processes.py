"""A long job's labels rendered by several processes at once come out byte for byte as one process
renders them, in record order; a record that cannot be rendered raises its own error, the first
in record order deciding, whichever process rendered it; a helper that dies fails the rendering
instead of leaving out its labels."""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from etikett.domain.printing import render_processes
from etikett.domain.printing.print_work import PrintWork
from etikett.domain.printing.render_processes import RenderProcessLost
from etikett_engine.errors import EtikettError

DOCUMENT: dict[str, Any] = {
    "size": {"width_mm": 40, "height_mm": 20},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string"}],
    "objects": [
        {"id": "title", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 9, "expression": "name"},
        # EAN-13 takes digits only: a record whose name has letters cannot be rendered.
        {
            "id": "code",
            "type": "barcode",
            "symbology": "ean13",
            "x_mm": 2,
            "y_mm": 8,
            "height_mm": 8,
            "expression": "name",
        },
    ],
}


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three processes for 30 records, taking batches of 4, quickly."""
    monkeypatch.setattr(render_processes, "MIN_RECORDS", 10)
    monkeypatch.setattr(render_processes, "BATCH_RECORDS", 4)


def _work(names: list[str]) -> PrintWork:
    return PrintWork.model_validate(
        {
            "document": DOCUMENT,
            "records": [{"name": name} for name in names],
            "serials": [{} for _ in names],
            "copies": 1,
            "language": "zpl",
            "now": "2026-05-04T10:00:00.000Z",
        }
    )


def _names(count: int) -> list[str]:
    # Twelve digits (EAN-13 adds the check digit); some records repeat, within and across slices.
    return [f"{400_000_000_000 + index % 23:012d}" for index in range(count)]


def test_three_processes_encode_what_one_does() -> None:
    work = _work(_names(37))
    alone = work.encode()
    assert render_processes.encode(work, 3) == alone
    assert render_processes.encode(work, 2) == alone
    assert alone.count(b"^XZ") == 37


def test_one_process_for_a_short_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer records than two slices' worth: nothing is forked."""
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        forks.append(1)
        return real_fork()

    # Counted for this test only (a fork hook would stay registered for the whole run).
    monkeypatch.setattr(os, "fork", counted_fork)
    work = _work(_names(19))
    assert render_processes.encode(work, 4) == work.encode()
    assert forks == []


@pytest.mark.parametrize("bad", [3, 15, 25, 36], ids=["own", "second", "third", "last"])
def test_a_record_that_cannot_render_raises_its_own_error(bad: int) -> None:
    names = _names(37)
    names[bad] = "not digits"
    work = _work(names)
    with pytest.raises(EtikettError) as alone:
        work.encode()
    with pytest.raises(EtikettError) as split:
        render_processes.encode(work, 3)
    assert type(split.value) is type(alone.value)
    assert (split.value.code, split.value.detail) == (alone.value.code, alone.value.detail)


def test_the_first_failing_record_decides() -> None:
    """Records 14 and 27 fail (the second and third slices), each in its own words: 14's error,
    as one process says."""
    names = _names(37)
    names[14], names[27] = "4000000000001", "not digits"  # a wrong check digit; letters
    work = _work(names)
    with pytest.raises(EtikettError) as alone:
        work.encode()
    with pytest.raises(EtikettError) as split:
        render_processes.encode(work, 3)
    assert "check digit '1'" in alone.value.detail
    assert split.value.detail == alone.value.detail


def test_a_helper_that_dies_fails_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper killed before answering (out of memory, say): no job with labels left out."""

    def die(*_: object) -> None:
        os._exit(9)

    monkeypatch.setattr(render_processes, "_help", die)
    with pytest.raises(RenderProcessLost, match="ended without answering"):
        render_processes.encode(_work(_names(30)), 3)


def test_a_long_job_reports_its_progress(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The function's own labels every PROGRESS_EVERY, then all labels so far as each helper
    answers: the log says how far a long job is, as with one process."""
    monkeypatch.setattr(render_processes, "PROGRESS_EVERY", 5)
    with caplog.at_level(logging.INFO, logger="etikett.activity"):
        render_processes.encode(_work(_names(30)), 3, "job_x")
    lines = [record.getMessage() for record in caplog.records]
    own = [
        re.fullmatch(r"job job_x: rendering in 3 processes, by this one: (\d+) of 30", line)
        for line in lines[:-2]
    ]
    assert all(own), lines
    assert [int(found[1]) for found in own if found] == list(range(5, 5 * len(own) + 1, 5))
    helpers = [re.fullmatch(r"job job_x: rendering (\d+) of 30", line) for line in lines[-2:]]
    assert all(helpers), lines
    done = [int(found[1]) for found in helpers if found]
    assert done[0] <= done[1] == 30


def test_a_slower_process_takes_fewer_batches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every process takes the next batch when it is done with one: the helpers, slowed down
    here, render fewer records than the function's process, every record is rendered once, and
    the bytes are still those of one process."""
    function = os.getpid()
    rendered = tmp_path / "rendered"
    real_labels = PrintWork.labels

    def labels(self: PrintWork) -> Any:
        label = real_labels(self)

        def noted(index: int) -> bytes:
            if os.getpid() != function:
                time.sleep(0.03)
            with rendered.open("a") as notes:  # small appends: whole lines from each process
                notes.write(f"{os.getpid()} {index}\n")
            return label(index)

        return noted

    work = _work(_names(60))
    alone = work.encode()
    monkeypatch.setattr(PrintWork, "labels", labels)
    rendered.write_text("")
    assert render_processes.encode(work, 3) == alone
    notes = [line.split() for line in rendered.read_text().splitlines()]
    assert sorted(int(index) for _, index in notes) == list(range(60))
    by_process = Counter(pid for pid, _ in notes)
    assert len(by_process) == 3
    assert by_process[str(function)] > max(
        count for pid, count in by_process.items() if pid != str(function)
    ), by_process
