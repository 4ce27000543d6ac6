"""Counters with a reset start again at `start` in each new UTC period (daily, monthly, yearly),
and takes racing across a period boundary never hand out a value twice. The time is the test's
(`etikett.clock.now` is set, never slept for); DynamoDB is moto's server over HTTP, provisioned
from template.yaml (support/stack.py)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from e2e.runners import eventually

from etikett import clock as etikett_clock
from etikett.domain.actors import Caller, Invocation
from etikett.domain.counters import counter_values, counters
from support.stack import Stack, local_stack

OPERATOR = Invocation(
    Caller(actor="human", subject="test-operator", roles=frozenset({"operator"})), "createCounter"
)


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type, misc]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        local_stack(tmp_path_factory.mktemp("counters"), monkeypatch) as running,
    ):
        yield running


class Clock:
    """What `etikett.clock.now` answers while a test runs: a moment the test sets.

    `turn(moment, together=n)` makes a period boundary a real race: the first n callers after
    the turn (each has read the counter as it was in the old period) wait for each other, then
    all go on at once with the new time."""

    def __init__(self) -> None:
        self.at = at(2026, 1, 1)
        self._lock = threading.Lock()
        self._held = 0
        self._gate = threading.Barrier(1)

    def turn(self, moment: datetime, *, together: int) -> None:
        with self._lock:
            self._gate = threading.Barrier(together)
            self._held = together
            self.at = moment

    def now(self) -> datetime:
        with self._lock:
            moment, gate, held = self.at, self._gate, self._held > 0
            self._held -= 1 if held else 0
        if held:
            gate.wait(60)  # the others' takes run first; slow on a loaded machine
        return moment


@pytest.fixture
def clock(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Clock:
    controlled = Clock()
    monkeypatch.setattr(etikett_clock, "now", controlled.now)
    return controlled


def _counter(reset: counters.Reset, start: int = 100, step: int = 5) -> str:
    name = f"c_{uuid.uuid4().hex[:12]}"
    counters.create(OPERATOR, counters.NewCounter(name=name, start=start, step=step, reset=reset))
    return name


@pytest.mark.parametrize(
    ("reset", "earlier", "last_moment", "next_period"),
    [
        ("daily", at(2026, 3, 31, 0, 0, 0), at(2026, 3, 31, 23, 59, 59), at(2026, 4, 1)),
        ("monthly", at(2026, 3, 1), at(2026, 3, 31, 23, 59, 59), at(2026, 4, 1)),
        ("yearly", at(2026, 1, 1), at(2026, 12, 31, 23, 59, 59), at(2027, 1, 1)),
    ],
)
def test_a_new_period_starts_again_at_start(
    clock: Clock,
    reset: counters.Reset,
    earlier: datetime,
    last_moment: datetime,
    next_period: datetime,
) -> None:
    clock.at = earlier
    name = _counter(reset)
    assert counter_values.take(name, 2) == [100, 105]
    clock.at = last_moment  # still the same period: the sequence goes on
    assert counter_values.peek(counter_values.load(name)) == 110
    assert counter_values.take(name, 1) == [110]
    clock.at = next_period
    assert counter_values.peek(counter_values.load(name)) == 100  # what a preview shows
    assert counter_values.take(name, 3) == [100, 105, 110]
    assert counter_values.take(name, 1) == [115]
    view = counters.get(name)
    assert (view.current, view.issued, view.reset) == (115, 7, reset)


def test_a_counter_without_reset_goes_on_across_years(clock: Clock) -> None:
    clock.at = at(2026, 12, 31, 23, 59, 59)
    name = _counter("never")
    assert counter_values.take(name, 1) == [100]
    clock.at = at(2028, 1, 1)
    assert counter_values.take(name, 2) == [105, 110]


def test_takes_racing_across_a_period_boundary_never_share_a_value(clock: Clock) -> None:
    clock.at = at(2026, 6, 30, 23, 59, 59)
    name = _counter("daily", start=1, step=1)
    blocks: list[list[int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def take_until_enough() -> None:
        try:
            while len(blocks) < 40:
                block = counter_values.take(name, 2)
                with lock:
                    blocks.append(block)
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=take_until_enough) for _ in range(6)]
    for thread in threads:
        thread.start()
    eventually(lambda: len(blocks) >= 12, 30, 0.005)
    clock.turn(at(2026, 7, 1), together=4)  # midnight, while the takes go on
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert all(block[1] == block[0] + 1 for block in blocks)  # each block is contiguous
    values = [value for block in blocks for value in block]
    record = counter_values.load(name)
    assert record.period == "2026-07-01" and int(record.issued) == len(values)
    # The new day restarted at 1 and ended at `current`; the old day ran from 1 to the rest:
    # each value is handed out once per day, none lost and none twice.
    new_day = int(record.current)
    old_day = len(values) - new_day
    assert old_day > 0 and new_day > 0
    assert Counter(values) == Counter(range(1, old_day + 1)) + Counter(range(1, new_day + 1))
