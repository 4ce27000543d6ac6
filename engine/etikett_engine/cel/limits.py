"""What one CEL evaluation may cost, and the budget that holds it to that while it runs.

cel-python has no cost tracker, so the limits live here:
- when an expression is compiled: its length (`source`) and how deeply comprehensions nest
  (`depth`), since the work of `a.map(x, b.map(y, ...))` multiplies with each level;
- before it runs: the size of the variables it reads (`variables`);
- while it runs, one `Budget` per evaluation: every comprehension step, and every operation that
  builds or scans values (`+`, comparisons, `in`, `contains`, `matches`, the label helpers),
  charges the sizes it touches (`work`); no value it builds, nor its result, may be
  larger than `size`; and the clock is read at every charge (`time`).

Sizes are weights: a string or bytes counts its length, a list or map one per element plus its
elements' weights, anything else one. A value's weight is measured once and remembered for the
evaluation, so many references to one list cost what they are (`l.map(x, l)` is as large as it
looks) without measuring the list again.

The budget is reached through the operations themselves (`etikett_engine.cel.charged`). An exceeded
limit raises `Exceeded` and the budget remembers it: CEL swallows some errors (`||`, `exists`),
but the evaluation still ends with the limit's problem.

Imports nothing heavy: the engine is what the Runner installs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    source: int = 4000  # characters of an expression
    depth: int = 3  # comprehensions inside comprehensions
    variables: int = 1_000_000  # weight of the variables an evaluation reads
    size: int = 1_000_000  # weight of any value built, and of the result
    work: int = 2_000_000  # units: one per element or character touched, STEP per step
    seconds: float = 1.0  # wall clock of one evaluation


LIMITS = Limits()
STEP = 10  # one comprehension step (binding a variable, calling its body) in work units

_WHAT = {
    "source": "characters",
    "depth": "nested comprehensions",
    "variables": "as the weight of the variables it reads (characters and elements)",
    "size": "as the weight of a value it builds (characters and elements)",
    "work": "units of work (elements and characters touched, comprehension steps)",
    "seconds": "seconds",
}


class Exceeded(Exception):
    """A limit was exceeded; `limit` names it (source, depth, variables, size, work, time)."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message


def exceeded(limit: str, amount: float | None = None) -> Exceeded:
    key = "seconds" if limit == "time" else limit
    bound = getattr(LIMITS, key)
    found = f" ({amount:g})" if amount is not None else ""
    return Exceeded(
        limit, f"the expression exceeds its {limit} limit of {bound:g} {_WHAT[key]}{found}"
    )


def check_source(source: str) -> None:
    if len(source) > LIMITS.source:
        raise exceeded("source", len(source))


def check_depth(depth: int) -> None:
    if depth > LIMITS.depth:
        raise exceeded("depth", depth)


def check_variables(values: Mapping[str, Any]) -> None:
    """The plain (JSON) values an evaluation reads, before they are converted for CEL."""
    total = 0
    stack: list[Any] = list(values.values())
    while stack:
        value = stack.pop()
        if isinstance(value, str | bytes):
            total += len(value) + 1
        elif isinstance(value, Mapping):
            total += 1
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            total += 1
            stack.extend(value)
        else:
            total += 1
        if total > LIMITS.variables:
            raise exceeded("variables")


# ---------------------------------------------------------------------------------------------
# The budget of one evaluation
# ---------------------------------------------------------------------------------------------


class Budget:
    """Evaluations in this thread charge the budget while a `with budget:` block runs (it is
    its own context manager, not a generator: it runs around every evaluation, a few
    microseconds matter)."""

    __slots__ = ("_outer", "_weights", "deadline", "failure", "work")

    def __init__(self) -> None:
        self.work = 0
        self.deadline = time.monotonic() + LIMITS.seconds
        self.failure: Exceeded | None = None
        # id -> (weight, value): the value is kept so its id cannot be reused meanwhile.
        self._weights: dict[int, tuple[int, Any]] = {}
        self._outer: Budget | None = None

    def __enter__(self) -> Budget:
        self._outer = getattr(_local, "budget", None)
        _local.budget = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        _local.budget = self._outer

    def fail(self, error: Exceeded) -> Exceeded:
        if self.failure is None:
            self.failure = error
        return self.failure

    def charge(self, units: int) -> None:
        if self.failure is not None:
            raise self.failure  # once exceeded, every further charge ends the evaluation again
        self.work += units
        if self.work > LIMITS.work:
            raise self.fail(exceeded("work"))
        if time.monotonic() >= self.deadline:
            raise self.fail(exceeded("time"))

    def weight(self, value: Any) -> int:
        """The value's weight; measuring a value not seen before charges what it visits."""
        if isinstance(value, str | bytes):
            return len(value) + 1
        if not isinstance(value, list | tuple | Mapping):
            return 1
        known = self._weights.get(id(value))
        if known is not None:
            return known[0]
        return self._measure(value)

    def _measure(self, root: Any) -> int:
        weights = self._weights
        stack: list[tuple[Any, bool]] = [(root, False)]
        visited = 0
        while stack:
            node, children_done = stack.pop()
            if children_done:
                total = 1 + sum(self._known(child) for child in _children(node))
                weights[id(node)] = (total, node)
                continue
            if id(node) in weights:
                continue
            stack.append((node, True))
            for child in _children(node):
                visited += 1
                if isinstance(child, list | tuple | Mapping) and id(child) not in weights:
                    stack.append((child, False))
            if visited > 4096:
                self.charge(visited)
                visited = 0
        self.charge(visited)
        return weights[id(root)][0]

    def _known(self, value: Any) -> int:
        if isinstance(value, str | bytes):
            return len(value) + 1
        if isinstance(value, list | tuple | Mapping):
            return self._weights[id(value)][0]
        return 1

    def built(self, value: Any, weight: int | None = None) -> Any:
        """`value` was built by this evaluation: no larger than `size`, and its weight is work."""
        measured = self.weight(value) if weight is None else weight
        if measured > LIMITS.size:
            raise self.fail(exceeded("size", measured))
        if weight is not None and isinstance(value, list | tuple | Mapping):
            self._weights[id(value)] = (weight, value)
        self.charge(measured)
        return value

    def touch(self, *values: Any) -> None:
        """An operation that scans these values."""
        self.charge(sum(self.weight(value) for value in values))


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        yield from node.keys()
        yield from node.values()
    else:
        yield from node


_local = threading.local()


def current() -> Budget | None:
    budget: Budget | None = getattr(_local, "budget", None)
    return budget
