"""The journal of offline prints: a print is journaled before it is sent, survives a restart with
its outcome (or its lack of one, after a crash), and leaves once the service accepted it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints, OfflineRecord, new_print_id


def _print(copies: int = 1, records: int = 2) -> OfflinePrint:
    return OfflinePrint(
        id=new_print_id(),
        run_id="frn_01JD0000000000000000000000",
        deployment_id="dep_1",
        flow_id="flw_1",
        flow_version=3,
        label_id="lbl_1",
        label_version=2,
        printer="line-1",
        printer_id="prn_1",
        copies=copies,
        records=[
            OfflineRecord({"sku": f"A{i}"}, {"serial": 100 + i}, {"ctr_1": 100 + i})
            for i in range(records)
        ],
        printed_at=f"2026-11-27T10:00:0{records}.000Z",
    )


def test_prints_survive_a_restart_with_their_outcome_or_without_one(tmp_path: Path) -> None:
    journal = OfflinePrints(tmp_path)
    settled, interrupted = _print(copies=2), _print(records=3)
    journal.record(settled)
    journal.settle(settled.id, "sent")
    journal.record(interrupted)  # the Runner dies before the printer answers

    again = OfflinePrints(tmp_path)
    pending = again.unsynced()
    assert [p.id for p in pending] == [settled.id, interrupted.id]
    assert (pending[0].outcome, pending[1].outcome) == ("sent", None)
    assert pending[0].records[1].counter_values == {"ctr_1": 101}
    assert again.status() == {"unsynced_labels": 4 + 3, "oldest_unsynced_at": settled.printed_at}
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600


def test_synced_prints_leave_and_the_journal_starts_afresh(tmp_path: Path) -> None:
    journal = OfflinePrints(tmp_path)
    first, second = _print(), _print()
    journal.record(first)
    journal.record(second)
    journal.mark_synced([first.id, "opr_unknown"])
    assert [p.id for p in OfflinePrints(tmp_path).unsynced()] == [second.id]
    journal.mark_synced([second.id])
    assert journal.path.read_bytes() == b""
    assert OfflinePrints(tmp_path).status() == {"unsynced_labels": 0, "oldest_unsynced_at": None}


def test_a_torn_last_line_is_ignored_and_a_print_is_journaled_once(tmp_path: Path) -> None:
    journal = OfflinePrints(tmp_path)
    taken = _print()
    journal.record(taken)
    with journal.path.open("ab") as handle:
        handle.write(b'{"kind": "outcome", "id": "')  # power cut mid-write
    journal = OfflinePrints(tmp_path)
    assert [p.id for p in journal.unsynced()] == [taken.id]
    later = _print()
    journal.record(later)  # not glued to the torn line
    assert [p.id for p in OfflinePrints(tmp_path).unsynced()] == [taken.id, later.id]
    with pytest.raises(ValueError):
        journal.record(taken)
