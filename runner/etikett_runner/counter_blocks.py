"""Counter values on site: blocks of each counter that the service reserved for this Runner,
and the values taken from them, in a journal in the state directory (`counter-blocks.jsonl`,
0600), so that a value is never used twice — not across restarts, not after a crash.

Every step is journaled (written and fsynced) before it has effects: the id of a block before
it is asked for (a retry after a lost answer asks by the same id and gets the same block), the
block once granted, and each value before the label carrying it is printed. A value journaled
and then lost to a crash before its label printed is never taken again: it becomes a gap,
which the archive shows as a value with no label (docs/concepts/offline-sites.md)."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from etikett_runner.files import append_json_line, journal_lines


class NoValueLeft(RuntimeError):
    """No reserved value of this counter is left: the label waits for the service."""


@dataclass
class _Block:
    block_id: str
    counter: str
    first: int
    size: int
    step: int
    period: str
    used: int = 0  # values taken from the front of the block
    reset: str = "never"  # the counter's reset (never, daily, monthly, yearly), as granted
    format: str | None = None  # how its values print ("000000", or a CEL of `value`)

    @property
    def left(self) -> int:
        return self.size - self.used


@dataclass
class _Counter:
    blocks: list[_Block] = field(default_factory=list)
    asked: str | None = None  # a block id journaled as asked for and not yet granted


class CounterBlocks:
    def __init__(self, state_root: Path) -> None:
        self.path = state_root / "counter-blocks.jsonl"
        self._lock = threading.Lock()
        self._counters: dict[str, _Counter] = {}
        self._replay()

    # --- the journal ---------------------------------------------------------------------------

    def _replay(self) -> None:
        blocks: dict[str, _Block] = {}
        for line in journal_lines(self.path):
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash was never acted on
            counter = self._counters.setdefault(str(entry.get("counter")), _Counter())
            if entry.get("kind") == "ask":
                counter.asked = entry["block_id"]
            elif entry.get("kind") == "block":
                block = _Block(**{k: entry[k] for k in _Block.__dataclass_fields__ if k in entry})
                blocks[block.block_id] = block
                counter.blocks.append(block)
                counter.asked = None
            elif entry.get("kind") == "use" and entry.get("block_id") in blocks:
                block = blocks[entry["block_id"]]
                block.used = max(block.used, int(entry["index"]) + 1)

    def _append(self, entry: dict[str, Any]) -> None:
        append_json_line(self.path, entry)

    # --- values ------------------------------------------------------------------------------

    def left(self, counter: str, period: str | None = None) -> int:
        """Values of `counter` left (of the reset `period` only, if named)."""
        with self._lock:
            blocks = self._counters.get(counter, _Counter()).blocks
            return sum(b.left for b in blocks if period is None or b.period == period)

    def shape(self, counter: str) -> tuple[str, str | None] | None:
        """The counter's reset and format as its newest block was granted; None if no block
        of it was ever reserved here."""
        with self._lock:
            blocks = self._counters.get(counter, _Counter()).blocks
            return (blocks[-1].reset, blocks[-1].format) if blocks else None

    def take(self, counter: str, period: str) -> int:
        """The next reserved value of `counter` for the reset `period` it is printed in,
        journaled as used before it is returned; NoValueLeft if none."""
        with self._lock:
            for block in self._counters.get(counter, _Counter()).blocks:
                if block.left and block.period == period:
                    index = block.used
                    use = {"kind": "use", "counter": counter, "block_id": block.block_id}
                    self._append({**use, "index": index})
                    block.used = index + 1
                    return block.first + block.step * index
        raise NoValueLeft(f"no reserved value of {counter} is left")

    def refill(
        self,
        counter: str,
        size: int,
        low_water: int,
        ask: Callable[[dict[str, Any]], Any],
        period: str | None = None,
    ) -> bool:
        """While online: when fewer than `low_water` values of `counter` are left (of the
        reset `period` now, if named: a daily counter's values of yesterday do not count),
        reserve a block of `size` through `ask` (the agent channel's `counter_block`); the id
        is journaled first and reused until a block is granted. True if a block came."""
        with self._lock:
            state = self._counters.setdefault(counter, _Counter())
            blocks = state.blocks
            if sum(b.left for b in blocks if period is None or b.period == period) >= low_water:
                return False
            if state.asked is None:
                state.asked = f"blk_{secrets.token_hex(12)}"
                self._append({"kind": "ask", "counter": counter, "block_id": state.asked})
            block_id = state.asked
        granted = ask({"block_id": block_id, "counter": counter, "size": size})
        with self._lock:
            if state.asked != block_id or granted["block_id"] != block_id:
                return False
            block = _Block(
                block_id=block_id,
                counter=counter,
                first=int(granted["first"]),
                size=int(granted["size"]),
                step=int(granted["step"]),
                period=str(granted["period"]),
                reset=str(granted.get("reset") or "never"),
                format=None if granted.get("format") is None else str(granted["format"]),
            )
            self._append({"kind": "block", **block.__dict__})
            state.blocks.append(block)
            state.asked = None
        return True
