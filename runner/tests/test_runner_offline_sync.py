"""The upload of offline prints (offline_sync): oldest first in chunks, resumed after a lost
answer or a restart from what the journal holds, each print taken once; a refused print kept
aside and never sent again; a print still being sent waits for its outcome. The channel is a
double with the service's semantics (each print id archived once); the service itself is in
tests/integration/runners/test_offline_sync.py."""

from __future__ import annotations

import datetime as dt
import stat
import threading
import time
from pathlib import Path
from typing import Any

from etikett_runner.channel import AgentChannel
from etikett_runner.connectivity import Connectivity
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints, OfflineRecord, new_print_id
from etikett_runner.offline_sync import OfflineSync
from etikett_runner.transport import Refused, ServerAway


class ArchivingChannel:
    """Answers uploads as the service does: each print id archived once (`already` after)."""

    def __init__(self) -> None:
        self.archived: list[str] = []  # in the order first taken
        self.uploads: list[list[str]] = []
        self.lose_answer_of: int | None = None  # this upload (0-based) is taken, its answer lost
        self.away = False
        self.refuse: dict[str, str] = {}  # print id → reason
        self.unreadable: set[str] = set()  # a 422 for any upload holding one of these
        self.status: int | None = None  # every upload refused with this status

    def offline_prints(self, body: dict[str, Any]) -> dict[str, Any]:
        ids = [p["id"] for p in body["prints"]]
        if self.away:
            raise ServerAway("connection refused")
        if self.status is not None:
            raise Refused(self.status, f"http.{self.status}", "no such route")
        if self.unreadable & set(ids):
            raise Refused(422, "request.invalid", "body.prints.0.copies: too many")
        assert len(ids) <= 100 and sum(len(p["records"]) for p in body["prints"]) <= 10_000
        self.uploads.append(ids)
        answers = []
        for print_id in ids:
            if print_id in self.refuse:
                answers.append(
                    {"id": print_id, "result": "refused", "reason": self.refuse[print_id]}
                )
            elif print_id in self.archived:
                answers.append({"id": print_id, "result": "already"})
            else:
                self.archived.append(print_id)
                answers.append({"id": print_id, "result": "accepted"})
        if self.lose_answer_of == len(self.uploads) - 1:
            raise ServerAway("read timeout")  # archived, but the Runner never hears it
        return {"prints": answers}


def _print(records: int = 1, printed_at: str = "2026-11-27T10:00:00.000Z") -> OfflinePrint:
    return OfflinePrint(
        id=new_print_id(),
        run_id="frn_1",
        deployment_id="dep_1",
        flow_id="flw_1",
        flow_version=1,
        label_id="lbl_1",
        label_version=2,
        printer="line-1",
        printer_id="prn_1",
        copies=1,
        records=[OfflineRecord({"n": i}, {}, {"lot": i}) for i in range(records)],
        printed_at=printed_at,
    )


def _sync(root: Path, channel: ArchivingChannel) -> tuple[OfflinePrints, OfflineSync]:
    """The journal and its uploader as a Runner process starts them."""
    journal = OfflinePrints(root)
    link: AgentChannel = channel  # type: ignore[assignment]
    uploader = OfflineSync(
        link, journal, root, Connectivity(threading.Event()), lambda _: None, orphan_grace=0
    )
    return journal, uploader


def test_a_sync_cut_off_by_a_lost_answer_and_a_restart_resumes_each_print_once(
    tmp_path: Path,
) -> None:
    journal = OfflinePrints(tmp_path)
    printed = [_print() for _ in range(230)]
    for taken in printed:
        journal.record(taken)
    for taken in printed[:200]:
        journal.settle(taken.id, "sent")  # the last 30: the process died before the answer
    channel = ArchivingChannel()
    channel.lose_answer_of = 1  # the second chunk is archived, but its answer is lost

    _, uploader = _sync(tmp_path, channel)
    assert uploader.sync() is False
    assert channel.uploads == [[p.id for p in printed[:100]], [p.id for p in printed[100:200]]]
    # Restarted: the journal knows the first chunk synced, not the second.
    journal, uploader = _sync(tmp_path, channel)
    assert [p.id for p in journal.unsynced()] == [p.id for p in printed[100:]]
    assert uploader.sync() is True
    assert channel.uploads[2] == [p.id for p in printed[100:200]]  # sent again: `already`
    assert channel.archived == [p.id for p in printed]  # each once, oldest first
    assert journal.unsynced() == []
    assert journal.status() == {"unsynced_labels": 0, "oldest_unsynced_at": None}
    assert OfflinePrints(tmp_path).unsynced() == []  # and so after the next restart


def test_chunks_hold_at_most_100_prints_and_10000_records(tmp_path: Path) -> None:
    channel = ArchivingChannel()
    journal, uploader = _sync(tmp_path, channel)
    for records in (6000, 3000, 2000, 1):
        taken = _print(records=records)
        journal.record(taken)
        journal.settle(taken.id, "sent")
    assert uploader.sync() is True
    assert [len(upload) for upload in channel.uploads] == [2, 2]


def test_a_refused_print_is_kept_aside_with_its_reason_and_never_sent_again(
    tmp_path: Path,
) -> None:
    channel = ArchivingChannel()
    journal, uploader = _sync(tmp_path, channel)
    good, stolen, unreadable, later = _print(), _print(), _print(), _print()
    for taken in (good, stolen, unreadable, later):
        journal.record(taken)
        journal.settle(taken.id, "sent")
    channel.refuse[stolen.id] = "counter_value_not_reserved"
    channel.unreadable.add(unreadable.id)

    assert uploader.sync() is True
    assert channel.archived == [good.id, later.id]
    assert journal.unsynced() == []
    kept = uploader.refused()
    assert [(k["print"]["id"], k["reason"]) for k in kept] == [
        (stolen.id, "counter_value_not_reserved"),
        (unreadable.id, "request.invalid"),
    ]
    assert stat.S_IMODE(uploader.refused_path.stat().st_mode) == 0o600
    sent = len(channel.uploads)
    assert uploader.sync() is True and len(channel.uploads) == sent  # nothing left to send


def test_an_upload_refused_for_another_reason_keeps_the_prints(tmp_path: Path) -> None:
    """A service without the route (404) says nothing about the prints: they wait."""
    channel = ArchivingChannel()
    journal, uploader = _sync(tmp_path, channel)
    taken = _print()
    journal.record(taken)
    journal.settle(taken.id, "sent")
    channel.status = 404
    assert uploader.sync() is False
    channel.away, channel.status = True, None
    assert uploader.sync() is False
    assert [p.id for p in journal.unsynced()] == [taken.id] and uploader.refused() == []
    channel.away = False
    assert uploader.sync() is True and channel.archived == [taken.id]


def test_a_print_still_being_sent_waits_for_its_outcome_and_holds_back_later_ones(
    tmp_path: Path,
) -> None:
    channel = ArchivingChannel()
    journal, uploader = _sync(tmp_path, channel)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    sending, after = _print(printed_at=now), _print(printed_at=now)
    journal.record(sending)  # this process journaled it; the printer has not answered yet
    journal.record(after)
    journal.settle(after.id, "sent")
    assert uploader.sync() is True and channel.uploads == []
    journal.settle(sending.id, "failed", "printer_unreachable")
    assert uploader.sync() is True
    assert channel.uploads == [[sending.id, after.id]]


def test_the_uploader_runs_until_stopped_and_syncs_once_the_service_is_back(
    tmp_path: Path,
) -> None:
    channel = ArchivingChannel()
    channel.away = True
    journal = OfflinePrints(tmp_path)
    taken = _print()
    journal.record(taken)
    journal.settle(taken.id, "sent")
    stop = threading.Event()
    connectivity = Connectivity(stop)
    link: AgentChannel = channel  # type: ignore[assignment]
    uploader = OfflineSync(link, journal, tmp_path, connectivity, lambda _: None, interval=0.05)
    thread = threading.Thread(target=uploader.run, args=(stop,), daemon=True)
    thread.start()
    try:
        channel.away = False
        connectivity.succeeded()  # another call got through: the backoff ends at once
        deadline = dt.datetime.now() + dt.timedelta(seconds=10)
        while journal.unsynced() and dt.datetime.now() < deadline:
            stop.wait(0.02)
        assert journal.unsynced() == [] and channel.archived == [taken.id]
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_a_print_left_without_an_outcome_by_an_earlier_process_waits_a_grace_period(
    tmp_path: Path,
) -> None:
    """The flow host may settle it from its own journals when its runs load; only then does
    it go as one whose outcome nobody knows."""
    journal = OfflinePrints(tmp_path)
    orphan = _print()
    journal.record(orphan)  # the process died before the printer answered
    channel = ArchivingChannel()
    journal = OfflinePrints(tmp_path)  # restarted
    link: AgentChannel = channel  # type: ignore[assignment]
    uploader = OfflineSync(
        link, journal, tmp_path, Connectivity(threading.Event()), lambda _: None, orphan_grace=0.3
    )
    assert uploader.sync() is True and channel.uploads == []
    time.sleep(0.35)
    assert uploader.sync() is True and channel.uploads == [[orphan.id]]
