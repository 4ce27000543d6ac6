"""Many archive entries (a long data stream, an offline print's records) written in batches,
several at once: every entry lands, and a batch that fails fails the call."""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from pynamodb.exceptions import PutError

from etikett.store import archive, wire_items
from etikett.store.archive import ArchiveRecord
from unit.domain import aws_calls

pytestmark = pytest.mark.usefixtures("aws")

AT = dt.datetime(2026, 11, 28, 12, 0, tzinfo=dt.UTC)


def _entries(job_id: str, count: int) -> list[ArchiveRecord]:
    return [
        ArchiveRecord(
            id=f"arc_{job_id}_{index:04d}",
            job_id=job_id,
            record_index=index,
            label_id="lbl_1",
            label_version=1,
            printer="Line 1",
            printer_id="prn_1",
            copies=1,
            variables={"serial": index},
            serials={},
            actor="service",
            subject="usr_1",
            created_at=AT,
        )
        for index in range(count)
    ]


def test_every_entry_of_many_batches_lands(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _entries("job_many", 130)  # six batches: five of 25, one of 5
    calls = aws_calls.recorded(monkeypatch)
    archive.add_all(entries)
    assert calls.count("BatchWriteItem") == 6
    page = archive.page(200, None, label_id=None, job_id="job_many")
    assert [entry.id for entry in page.items] == [entry.id for entry in entries]
    assert page.items[129].variables == {"serial": 129}


def test_a_batch_that_fails_fails_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    write = vars(archive)["_write"]

    def failing(entries: list[ArchiveRecord]) -> None:
        if entries[0].record_index == 50:
            raise RuntimeError("throttled beyond the retries")
        write(entries)

    monkeypatch.setattr(archive, "_write", failing)
    with pytest.raises(RuntimeError, match="throttled"):
        archive.add_all(_entries("job_failing", 100))


def _leaving(monkeypatch: pytest.MonkeyPatch, kept: Callable[[int], int]) -> list[int]:
    """DynamoDB leaving puts unprocessed: the real BatchWriteItem gets the first `kept(puts)`
    puts of each call, the rest come back unprocessed. Returns each call's put count."""
    connection = archive._ArchiveItem._get_connection()
    real = connection.batch_write_item
    table = archive._ArchiveItem.Meta.table_name
    sizes: list[int] = []

    def batch_write_item(put_items: list[Any], **others: Any) -> dict[str, Any]:
        sizes.append(len(put_items))
        count = kept(len(put_items))
        answer = real(put_items=put_items[:count], **others) if count else {}
        left = [{"PutRequest": {"Item": item}} for item in put_items[count:]]
        return {**answer, "UnprocessedItems": {table: left} if left else {}}

    monkeypatch.setattr(connection, "batch_write_item", batch_write_item)
    return sizes


def _pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses before resends, each the top of its window (drawn as the window's end)."""
    pauses: list[float] = []
    monkeypatch.setattr(random, "uniform", lambda low, high: high)
    monkeypatch.setattr(time, "sleep", pauses.append)
    return pauses


def test_a_resend_waits_over_a_window_that_doubles_up_to_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        drawn.append((low, high))
        return 0.0

    monkeypatch.setattr(random, "uniform", uniform)
    assert [wire_items.resend_pause(resend) for resend in range(1, 8)] == [0.0] * 7
    assert drawn == [(0, 0.05), (0, 0.1), (0, 0.2), (0, 0.4), (0, 0.8), (0, 1.0), (0, 1.0)]


def test_puts_left_unprocessed_are_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _leaving(monkeypatch, lambda puts: min(puts, 10))  # ten a call get through
    pauses = _pauses(monkeypatch)
    entries = _entries("job_unprocessed", 60)
    for start in range(0, 60, archive.BATCH):  # one batch after another: the sizes in order
        archive.add_all(entries[start : start + archive.BATCH])
    assert sizes == [25, 15, 5, 25, 15, 5, 10]
    assert pauses == [0.05, 0.1, 0.05, 0.1]  # before each resend; none before a first send
    page = archive.page(100, None, label_id=None, job_id="job_unprocessed")
    assert [entry.id for entry in page.items] == [entry.id for entry in entries]


def test_puts_never_processed_fail_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _leaving(monkeypatch, lambda _: 0)
    pauses = _pauses(monkeypatch)
    with pytest.raises(PutError, match="25 put"):
        archive.add_all(_entries("job_refused", 25))
    attempts = archive._ArchiveItem.Meta.max_retry_attempts
    assert sizes == [25] * attempts
    assert pauses == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0][: attempts - 1]  # none after the last
    assert archive.page(10, None, label_id=None, job_id="job_refused").items == []
