"""Counters: named serials taken a block at a time in one atomic update, never handed out twice,
starting again each period when they reset, refused once deactivated."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from etikett import clock
from etikett.domain.counters import counter_values, counters
from etikett.domain.counters.counters import NewCounter
from etikett.ids import new_id
from etikett.store import counters as counter_store
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain.callers import human, operations, trail

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _name() -> str:
    return f"c_{new_id('x')[-10:].lower()}"


def _create(**more: Any) -> str:
    name = more.pop("name", None) or _name()
    counters.create(human("createCounter", "operator"), NewCounter(name=name, **more))
    return name


class Clock:
    """`etikett.clock.now` as the test sets it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at = dt.datetime(2026, 3, 31, 23, 59, tzinfo=dt.UTC)
        monkeypatch.setattr(clock, "now", lambda: self.at)


def test_a_new_counter_has_issued_nothing_and_is_audited() -> None:
    name = _create(start=10, step=5, format="0000")
    counter = counters.get(name)
    assert (counter.current, counter.issued, counter.active) == (None, 0, True)
    (entry,) = trail(name)
    assert entry.operation_id == "createCounter"
    assert entry.details == {
        "name": name,
        "start": 10,
        "step": 5,
        "format": "0000",
        "reset": "never",
    }


def test_a_name_is_taken_once() -> None:
    name = _create(start=1)
    error = _refused(ProblemCode.COUNTER_EXISTS, lambda: _create(name=name, start=500))
    assert error.params["name"] == name
    assert counters.get(name).start == 1
    assert operations(name) == ["createCounter"]


def test_values_are_taken_in_blocks_one_after_the_other() -> None:
    name = _create(start=100, step=5)
    assert counter_values.take(name, 3) == [100, 105, 110]
    assert counter_values.take(name, 1) == [115]
    counter = counters.get(name)
    assert (counter.current, counter.issued) == (115, 4)
    assert counter_values.peek(counter_store.get(name)) == 120  # type: ignore[arg-type]


def test_a_take_that_raced_a_period_change_reads_again_and_gives_nothing_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two takes read the counter in March; one moves it into April first: the other finds its
    condition failed, reads again, and continues April's sequence."""
    now = Clock(monkeypatch)
    name = _create(start=1, reset="monthly")
    assert counter_values.take(name, 2) == [1, 2]
    now.at = dt.datetime(2026, 4, 1, 0, 1, tzinfo=dt.UTC)
    read = counter_store.get
    calls = []

    def read_then_lose_the_race(counter: str) -> Any:
        stale = read(counter)
        if not calls:
            calls.append(counter)
            assert counter_values.take(counter, 3) == [1, 2, 3]  # the other take, in April
        return stale

    monkeypatch.setattr(counter_store, "get", read_then_lose_the_race)
    assert counter_values.take(name, 2) == [4, 5]
    monkeypatch.setattr(counter_store, "get", read)
    assert counters.get(name).issued == 7


@pytest.mark.parametrize(
    ("reset", "later"),
    [
        ("daily", dt.datetime(2026, 4, 1, 0, 0, tzinfo=dt.UTC)),
        ("monthly", dt.datetime(2026, 4, 1, 0, 0, tzinfo=dt.UTC)),
        ("yearly", dt.datetime(2027, 1, 1, 0, 0, tzinfo=dt.UTC)),
    ],
)
def test_a_resetting_counter_starts_again_each_utc_period(
    monkeypatch: pytest.MonkeyPatch, reset: str, later: dt.datetime
) -> None:
    now = Clock(monkeypatch)
    name = _create(start=7, reset=reset)
    assert counter_values.take(name, 2) == [7, 8]
    now.at = later - dt.timedelta(seconds=1)  # the same period still
    assert counter_values.take(name, 1) == [9]
    now.at = later
    assert counter_values.peek(counter_store.get(name)) == 7  # type: ignore[arg-type]
    assert counter_values.take(name, 2) == [7, 8]
    assert counters.get(name).issued == 5


def test_a_counter_that_never_resets_keeps_counting_across_years(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = Clock(monkeypatch)
    name = _create()
    counter_values.take(name, 2)
    now.at = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    assert counter_values.take(name, 1) == [3]


def test_a_deactivated_counter_gives_no_values() -> None:
    name = _create()
    counter_values.take(name, 1)
    deactivated = counters.deactivate(human("postCounterDeactivate", "operator"), name)
    assert not deactivated.active and deactivated.issued == 1
    error = _refused(ProblemCode.COUNTER_INACTIVE, lambda: counter_values.take(name, 1))
    assert error.status == 409
    counters.deactivate(human("postCounterDeactivate", "operator"), name)  # again: no change
    assert operations(name) == ["createCounter", "postCounterDeactivate"]
    assert trail(name)[-1].details == {"issued": 1}


def test_a_counter_deactivated_while_a_take_read_it_gives_no_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = _create()
    read = counter_store.get

    def read_then_see_it_deactivated(counter: str) -> Any:
        stale = read(counter)
        monkeypatch.setattr(counter_store, "get", read)
        counters.deactivate(human("postCounterDeactivate"), counter)
        return stale

    monkeypatch.setattr(counter_store, "get", read_then_see_it_deactivated)
    _refused(ProblemCode.COUNTER_INACTIVE, lambda: counter_values.take(name, 1))
    assert counters.get(name).issued == 0


def test_missing_counters_are_counter_not_found() -> None:
    _refused(ProblemCode.COUNTER_NOT_FOUND, lambda: counter_values.take("c_missing", 1))
    _refused(ProblemCode.COUNTER_NOT_FOUND, lambda: counters.deactivate(human("x"), "c_missing"))


def test_formats_pad_or_compute_and_must_compile() -> None:
    assert counter_values.formatted("000000", 42) == "000042"
    assert counter_values.formatted('"SN-" + string(value * 2)', 21) == "SN-42"
    assert counter_values.formatted(None, 7) == 7
    with pytest.raises(ValidationError):
        NewCounter(name="bad", format="value +")
    with pytest.raises(ValidationError):
        NewCounter(name="9starts-with-a-digit")


def test_a_label_previews_its_counters_next_values_without_taking_them() -> None:
    name = _create(start=40, format="0000")
    counter_values.take(name, 2)
    document = LabelDocument.model_validate(
        {
            "size": {"width_mm": 50, "height_mm": 20},
            "objects": [
                {
                    "id": "sn",
                    "type": "text",
                    "x_mm": 1,
                    "y_mm": 1,
                    "expression": f"counters.{name} + counters.c_not_made_yet",
                }
            ],
        }
    )
    assert counter_values.referenced(document.expressions()) == sorted([name, "c_not_made_yet"])
    assert counter_values.next_values(document) == {name: "0042", "c_not_made_yet": 1}
    assert counters.get(name).issued == 2


def test_counters_list_by_name_across_pages() -> None:
    made = {_create() for _ in range(5)}
    seen: list[str] = []
    cursor = None
    while True:
        page = counters.list_counters(2, cursor)
        seen += [c.name for c in page.items]
        if (cursor := page.next_cursor) is None:
            break
    assert made <= set(seen) and seen == sorted(seen) and len(seen) == len(set(seen))
