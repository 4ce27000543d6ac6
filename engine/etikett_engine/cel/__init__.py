"""CEL expressions of labels and forms: check, evaluate with typed variables, label helpers.

Built on cel-python (`celpy`), imported and set up on first use only: its parser takes about
0.3 s to build, which a Lambda cold start that never evaluates an expression should not pay.
Every evaluation is bounded by `etikett_engine.cel.limits` (size, work, time): an exceeded limit is
`CelLimitExceeded` (422 `cel.limit_exceeded`).

The package, one purpose a module, from the bottom up: `limits` (what an evaluation may cost, its
budget), `library` (celpy, loaded on first use), `charged` (celpy's operations, charged to the
budget), `errors` (the problems and their messages), `values` (JSON/Python values as CEL's and
back), `helpers` (the label helpers), `programs` (compiled expressions), `fields` (which fields
of a name an expression reads, for flow lint). This module is what the rest of the service uses:
`check`, `evaluate`, `Expression` and the names re-exported below.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from etikett_engine.cel import limits, programs
from etikett_engine.cel.errors import (
    CelInvalid,
    CelLimitExceeded,
    clean,
    eval_message,
    python_error_message,
)
from etikett_engine.cel.helpers import FUNCTIONS
from etikett_engine.cel.programs import Bindings
from etikett_engine.cel.values import coerce, to_cel, to_python, type_name

if TYPE_CHECKING:
    from etikett_engine.dsl.label import VariableType

__all__ = [
    "FUNCTIONS",
    "Bindings",
    "CelInvalid",
    "CelLimitExceeded",
    "Expression",
    "VariableType",
    "check",
    "coerce",
    "evaluate",
    "macro_depth",
    "to_cel",
    "type_name",
]

_ALWAYS_KNOWN = frozenset({"now", "counters"})


def __getattr__(name: str) -> Any:
    # VariableType is re-exported lazily: etikett_engine.dsl.label imports pydantic (~0.2 s).
    if name == "VariableType":
        from etikett_engine.dsl.label import VariableType

        return VariableType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check(
    source: str,
    declared: Mapping[str, VariableType] | None = None,
    *,
    extra_names: Iterable[str] = (),
) -> None:
    """Compile only. Raises CelInvalid for syntax errors, unknown functions and names other
    than the declared variables, `now`, `counters` and extra_names (with their position)."""
    program = programs.program(source)
    known = _ALWAYS_KNOWN | programs.TYPE_IDENTS | set(declared or ()) | set(extra_names)
    for ref in program.problems:  # in source order: the first problem is reported
        if ref.kind == "name" and ref.name in known:
            continue
        message = {
            "name": f"undeclared name {ref.name!r}",
            "function": f"unknown function {ref.name!r}",
            "macro_variable": f"the first argument of {ref.name}() must be a plain name",
        }[ref.kind]
        raise CelInvalid(source, message, ref.line, ref.column)


def evaluate(
    source: str,
    values: Mapping[str, Any],
    declared: Mapping[str, VariableType] | None = None,
    *,
    now: dt.datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> Any:
    """Evaluate against the values (converted as declared), `now` and `counters`.

    Returns a plain Python value (str, int, float, bool, UTC datetime, timedelta, bytes, list,
    dict or None). Raises CelInvalid for syntax and evaluation errors and for a value that does
    not fit its declared type.
    """
    expression = Expression(source)
    declared = declared or {}
    needed = expression.names
    try:
        limits.check_variables({k: v for k, v in values.items() if k in needed})
    except limits.Exceeded as exceeded:
        raise CelLimitExceeded.of(source, exceeded) from None
    bound: dict[str, Any] = {}
    for name, value in values.items():
        # Only what the expression reads is converted: labels declare many variables.
        if name in needed and name not in _ALWAYS_KNOWN:
            try:
                bound[name] = to_cel(value, declared.get(name))
            except (TypeError, ValueError) as ex:
                raise CelInvalid(source, f"variable {name!r}: {ex}") from ex
    # `now` and `counters` are reserved: the keyword arguments supply them, never `values`.
    if "now" in needed:
        bound["now"] = to_cel(now or dt.datetime.now(dt.UTC))
    if "counters" in needed:
        bound["counters"] = to_cel(dict(counters or {}))
    return expression.run(bound)


class Expression:
    """One expression, compiled once, run many times on values already converted by to_cel
    (a flow converts a record once per node, not once per expression)."""

    __slots__ = ("_program", "names", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._program = programs.program(source)
        self.names: frozenset[str] = self._program.names

    def run(self, bound: Mapping[str, Any]) -> Any:
        """The plain Python value; CelInvalid for evaluation errors (never another exception),
        CelLimitExceeded when it exceeded what one evaluation may cost."""
        source = self.source
        with limits.Budget() as budget:
            try:
                result = self._program.run(bound)
                weight = budget.weight(result)  # the result too is no larger than `size`
                if weight > limits.LIMITS.size:
                    raise budget.fail(limits.exceeded("size", weight))
            except Exception as ex:
                # A limit raised inside celpy may come back wrapped, or swallowed by `||`:
                # the budget knows either way.
                if budget.failure is not None:
                    raise CelLimitExceeded.of(source, budget.failure) from None
                if isinstance(ex, programs.runtime().eval_error):
                    raise CelInvalid(source, eval_message(ex, self.names - set(bound))) from ex
                if isinstance(ex, RecursionError):
                    raise CelInvalid(source, "the expression is nested too deeply") from ex
                # celpy lets some Python errors through; never a 500 for them
                raise CelInvalid(source, clean(python_error_message(ex))) from ex
            if budget.failure is not None:
                raise CelLimitExceeded.of(source, budget.failure)
        return to_python(result, source)


def macro_depth(source: str) -> int:
    """How deeply comprehension macros (map, filter, all, exists, …) nest in the expression:
    the cost of `a.map(x, b.map(y, …))` multiplies with each level, so callers bound it."""
    return programs.macro_depth(programs.program(source).tree)
