"""Counter blocks on the Runner: the journal is written before anything has effects — a block's
id before it is asked for (a lost answer is asked again by the same id), each value before it is
used — so a restart or a crash never hands out a value twice, and values of another reset
period are not used."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.counter_blocks import CounterBlocks, NoValueLeft


class FakeService:
    """Grants blocks by id as the service does: the same id gives the same block."""

    def __init__(self) -> None:
        self.next = 1
        self.granted: dict[str, dict[str, Any]] = {}
        self.asked: list[str] = []
        self.lose_answer = False

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(body["block_id"])
        if body["block_id"] not in self.granted:
            size = body["size"]
            block = {**body, "first": self.next, "step": 1, "period": ""}
            self.granted[body["block_id"]] = block
            self.next += size
        if self.lose_answer:
            self.lose_answer = False
            raise ConnectionError("the answer was lost")
        return self.granted[body["block_id"]]


def test_values_come_from_blocks_and_a_restart_never_reuses_one(tmp_path: Path) -> None:
    service = FakeService()
    blocks = CounterBlocks(tmp_path)
    with pytest.raises(NoValueLeft):
        blocks.take("serial", "")
    assert blocks.refill("serial", 5, 2, service.ask)
    assert not blocks.refill("serial", 5, 2, service.ask)  # above the low-water mark
    assert [blocks.take("serial", "") for _ in range(3)] == [1, 2, 3]
    assert stat.S_IMODE((tmp_path / "counter-blocks.jsonl").stat().st_mode) == 0o600

    # A crash after a value was journaled (its label maybe never printed): it is not reused.
    after_crash = CounterBlocks(tmp_path)
    assert after_crash.left("serial") == 2
    assert after_crash.take("serial", "") == 4
    assert after_crash.refill("serial", 5, 2, service.ask)  # one left: below low water
    assert [after_crash.take("serial", "") for _ in range(6)] == [5, 6, 7, 8, 9, 10]
    with pytest.raises(NoValueLeft):
        after_crash.take("serial", "")
    assert CounterBlocks(tmp_path).left("serial") == 0


def test_a_lost_answer_is_asked_again_by_the_same_block_id(tmp_path: Path) -> None:
    service = FakeService()
    service.lose_answer = True
    with pytest.raises(ConnectionError):
        CounterBlocks(tmp_path).refill("serial", 5, 1, service.ask)
    restarted = CounterBlocks(tmp_path)  # even across a restart
    assert restarted.refill("serial", 5, 1, service.ask)
    assert len(set(service.asked)) == 1 and len(service.asked) == 2
    assert service.next == 6  # one block granted, not two
    assert restarted.left("serial") == 5


def test_values_of_another_reset_period_are_not_used_and_torn_lines_are_ignored(
    tmp_path: Path,
) -> None:
    service = FakeService()
    blocks = CounterBlocks(tmp_path)
    blocks.refill("daily", 3, 1, service.ask)
    with pytest.raises(NoValueLeft):
        blocks.take("daily", "2026-11-28")  # the block's period was "" (the grant's)
    with (tmp_path / "counter-blocks.jsonl").open("ab") as journal:
        journal.write(b'{"kind": "use", "counter": "dai')  # a crash mid-line
    assert CounterBlocks(tmp_path).take("daily", "") == 1
    # the value taken after the torn line is journaled on a line of its own: not taken again
    assert CounterBlocks(tmp_path).take("daily", "") == 2
