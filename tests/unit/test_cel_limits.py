"""CEL is bounded before and while it runs: the source's length and comprehension nesting when it
is compiled; while it runs, the work it does (comprehension steps, and operations by the sizes
they touch), the size of every value it builds, its time and its result. A runaway expression
fails fast in bounded memory with `cel.limit_exceeded` (422), in flows as that record's error."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from etikett_engine import cel
from etikett_engine.cel import CelInvalid, CelLimitExceeded, evaluate
from etikett_engine.cel import limits as cel_limits
from etikett_engine.errors import ProblemCode
from etikett_engine.flows.engine import FlowProgram

HUNDRED = "[" + ", ".join(str(i) for i in range(100)) + "]"


def _refused(source: str, values: dict[str, Any] | None = None) -> CelLimitExceeded:
    with pytest.raises(CelLimitExceeded) as raised:
        evaluate(source, values or {})
    error = raised.value
    assert error.code is ProblemCode.CEL_LIMIT_EXCEEDED and error.status == 422
    assert error.params["expression"] == source[:200]
    return error


@pytest.fixture
def bounded_memory() -> Iterator[None]:
    """Fails the test when evaluation allocates more than 64 MB at its peak. (How fast a limit
    stops an expression is the `time` limit's business, tested below, not a stopwatch's.)"""
    tracemalloc.start()
    try:
        yield
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"


def test_a_nested_comprehension_that_would_need_gigabytes_fails_fast(bounded_memory: None) -> None:
    """10**6 strings of 2,000 characters (2 GB) from a 100-element list."""
    source = f"{HUNDRED}.map(a, {HUNDRED}.map(b, {HUNDRED}.map(c, s + s)))"
    error = _refused(source, {"s": "x" * 1000})
    assert error.params["limit"] in ("work", "size", "time")


def test_nested_comparisons_over_a_large_variable_fail_fast(bounded_memory: None) -> None:
    """Each `==` compares 20,000 items: the work counts what an operation touches (and on a
    slow machine the clock may stop it first)."""
    error = _refused("items.map(x, items == items)", {"items": list(range(20_000))})
    assert error.params["limit"] in ("work", "time")


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> cel_limits.Limits:
    """Limits a tenth of the real ones or less, and the clock out of the way, so each test
    meets the limit it is about quickly and for certain."""
    limits = cel_limits.Limits(size=10_000, work=200_000, variables=100_000, seconds=120)
    monkeypatch.setattr(cel_limits, "LIMITS", limits)
    return limits


def test_too_many_comprehension_steps(small: cel_limits.Limits) -> None:
    error = _refused("items.map(a, items.map(b, a + b))", {"items": list(range(300))})
    assert error.params["limit"] == "work"
    assert "work limit of 200000" in error.params["message"]


def test_work_counts_the_characters_an_operation_touches(small: cel_limits.Limits) -> None:
    """Cheap per character, but not free: 100 steps each scanning 5,000 characters."""
    source = "items.filter(x, s.contains('y'))"
    error = _refused(source, {"items": list(range(100)), "s": "z" * 5000})
    assert error.params["limit"] == "work"
    assert evaluate(source, {"items": list(range(10)), "s": "z" * 5000}) == []


def test_a_value_may_not_grow_past_its_size(small: cel_limits.Limits) -> None:
    error = _refused("s + s", {"s": "y" * 6000})
    assert error.params["limit"] == "size"
    error = _refused("l + l", {"l": list(range(6000))})
    assert error.params["limit"] == "size"
    assert evaluate("size(s + s)", {"s": "y" * 4000}) == 8000


def test_the_real_size_limit_holds_a_megabyte() -> None:
    assert evaluate("size(s + s)", {"s": "y" * 400_000}) == 800_000
    assert _refused("s + s", {"s": "y" * 600_000}).params["limit"] == "size"


def test_a_limit_error_cannot_be_swallowed(bounded_memory: None) -> None:
    """`||` and `exists` skip errors in CEL; an exceeded limit still ends the evaluation."""
    source = f"{HUNDRED}.exists(a, {HUNDRED}.map(b, {HUNDRED}.map(c, s + s)) == [] || true)"
    _refused(source, {"s": "x" * 1000})


def test_the_result_is_bounded(small: cel_limits.Limits) -> None:
    """Many references to one value: cheap to build, huge as a result (or to compare)."""
    error = _refused("items.map(x, items)", {"items": list(range(200))})
    assert error.params["limit"] == "size"


def test_the_variables_are_bounded(small: cel_limits.Limits) -> None:
    error = _refused("size(items)", {"items": list(range(200_000))})
    assert error.params["limit"] == "variables"
    error = _refused("size(m)", {"m": {"a": "x" * 100_000}})
    assert error.params["limit"] == "variables"
    assert evaluate("size(items)", {"items": list(range(1000)), "unread": "x" * 200_000}) == 1000


def test_the_source_and_nesting_are_bounded_when_compiled() -> None:
    long = "1 + " * 1000 + "1"
    with pytest.raises(CelLimitExceeded) as raised:
        cel.check(long)
    assert raised.value.params["limit"] == "source"
    deep = "[1].map(a, [1].map(b, [1].map(c, [1].map(d, a + b + c + d))))"
    with pytest.raises(CelLimitExceeded) as raised:
        cel.check(deep)
    assert raised.value.params["limit"] == "depth"
    # A limit error is a CEL problem for everyone who handles those (lint, label checks).
    assert isinstance(raised.value, CelInvalid)


def test_time_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel_limits, "LIMITS", cel_limits.Limits(seconds=0.0))
    error = _refused("[1, 2, 3].map(x, x + 1)")
    assert error.params["limit"] == "time"


def test_ordinary_expressions_are_untouched() -> None:
    values = {"lot": "a-17", "qty": 3, "items": [1, 2, 3], "names": {"a": "x"}}
    assert evaluate('upper(lot) + "-" + pad(qty, 4)', values) == "A-17-0003"
    assert evaluate("items.map(i, i * qty).filter(i, i > 3)", values) == [6, 9]
    assert evaluate("items.exists(i, i == 2) && 'a' in names", values) is True
    assert evaluate("[[1, 2], [3]].map(l, l.map(i, i + 1))", values) == [[2, 3], [4]]
    assert evaluate("size(lot + lot) == 8 && lot.startsWith('a')", values) is True


def test_a_flow_record_fails_alone_with_a_clear_message() -> None:
    program = FlowProgram.compile(
        {
            "nodes": [
                {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["s"]},
                {"id": "s", "type": "logic.set", "values": {"all": "record.items.map(x, record)"}},
            ]
        }
    )
    from unit.flows.test_engine import Recorder

    big = {"items": list(range(5000))}
    result = program.run([{"items": [1]}, big, {"items": [2, 3]}], "in", Recorder())
    assert result.outcome == "partial" and result.failed_records == 1
    assert result.errors[0]["record"] == 1
    assert "limit" in result.errors[0]["message"]
