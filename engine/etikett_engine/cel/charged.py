"""celpy's operations that build or scan values, charged to the running evaluation's budget
(`etikett_engine.cel.limits`) before they run: `+`, comparisons, `in`, `contains`, `startsWith`,
`endsWith`, `matches`, the comprehension macros, and the interpreter (a fallback) per node.

They are module-level functions because celpy's transpiler calls an activation's functions by
their module path: `functions()` makes transpiled code call
`etikett_engine.cel.charged.add` and its friends, and `etikett_engine.cel.programs` rewrites the
comprehensions (which call celpy directly) to this module's `macro_*`. `_EVAL` is
celpy.evaluation once `functions()` ran.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from typing import Any

from etikett_engine.cel import limits
from etikett_engine.cel.limits import Budget, current, exceeded

_EVAL: Any = None
# celpy's comparisons, built once: its bool_eq(a, b) is boolean(operator.eq)(a, b), which wraps
# operator.eq in a fresh function (functools.wraps) on every call.
_EQ: Any = None
_NE: Any = None
_LT: Any = None
_LE: Any = None
_GT: Any = None
_GE: Any = None


def functions() -> dict[str, Any]:
    """The activation's functions that replace celpy's own (celpy must be imported)."""
    global _EVAL, _EQ, _NE, _LT, _LE, _GT, _GE
    # celpy loads with the first expression run: importing the engine stays light
    # (tests/unit/test_cel.py), for the Runner and the functions that never evaluate.
    import celpy.evaluation

    _EVAL = celpy.evaluation
    boolean = _EVAL.boolean
    _EQ, _NE = boolean(operator.eq), boolean(operator.ne)
    _LT, _LE = boolean(operator.lt), boolean(operator.le)
    _GT, _GE = boolean(operator.gt), boolean(operator.ge)
    return {
        "_+_": add,
        "_==_": eq,
        "_!=_": ne,
        "_<_": lt,
        "_<=_": le,
        "_>_": gt,
        "_>=_": ge,
        "_in_": contained_in,
        "contains": contains,
        "startsWith": starts_with,
        "endsWith": ends_with,
        "matches": matches,
        # Not the conversions string() and bytes(): their names are also the types
        # (`type(x) == string`), and they cost what one step of C costs.
    }


def _sized(value: Any) -> bool:
    return isinstance(value, str | bytes | list | tuple | Mapping)


def add(left: Any, right: Any) -> Any:
    budget = current()
    if budget is None:
        return operator.add(left, right)
    if _sized(left) and _sized(right):
        # Refused before it is built: `s + s` in a loop is how strings double.
        weight = budget.weight(left) + budget.weight(right)
        if weight > limits.LIMITS.size:
            raise budget.fail(exceeded("size", weight))
        return budget.built(operator.add(left, right), weight)
    budget.charge(1)
    return operator.add(left, right)


def _scanning(function: Any, *values: Any) -> Any:
    budget = current()
    if budget is not None:
        budget.touch(*values)
    return function(*values)


def eq(left: Any, right: Any) -> Any:
    return _scanning(_EQ, left, right)


def ne(left: Any, right: Any) -> Any:
    return _scanning(_NE, left, right)


def lt(left: Any, right: Any) -> Any:
    return _scanning(_LT, left, right)


def le(left: Any, right: Any) -> Any:
    return _scanning(_LE, left, right)


def gt(left: Any, right: Any) -> Any:
    return _scanning(_GT, left, right)


def ge(left: Any, right: Any) -> Any:
    return _scanning(_GE, left, right)


def contained_in(item: Any, container: Any) -> Any:
    return _scanning(_EVAL.operator_in, item, container)


def contains(container: Any, item: Any) -> Any:
    return _scanning(_EVAL.function_contains, container, item)


def starts_with(text: Any, prefix: Any) -> Any:
    return _scanning(_EVAL.function_startsWith, text, prefix)


def ends_with(text: Any, suffix: Any) -> Any:
    return _scanning(_EVAL.function_endsWith, text, suffix)


def matches(text: Any, pattern: Any) -> Any:
    return _scanning(_EVAL.function_matches, text, pattern)  # RE2: linear in the text


def helper_called(args: tuple[Any, ...], result: Any) -> Any:
    """A label helper (pad, upper, format_date, ...) ran: it scanned its arguments and built
    its result."""
    budget = current()
    if budget is None:
        return result
    budget.touch(*args)
    return budget.built(result) if _sized(result) else result


# --- comprehensions: every step is charged, and what map and filter build ---------------------


def _stepped(budget: Budget, source: Any) -> Any:
    def steps(activation: Any) -> Iterator[Any]:
        for value in source(activation):
            budget.charge(limits.STEP)
            yield value

    return steps


def _macro(name: str, activation: Any, variable: str, body: Any, source: Any) -> Any:
    celpy_macro = getattr(_EVAL, name)
    budget = current()
    if budget is None:
        return celpy_macro(activation, variable, body, source)
    result = celpy_macro(activation, variable, body, _stepped(budget, source))
    return budget.built(result) if name in ("macro_map", "macro_filter") else result


def macro_map(activation: Any, variable: str, body: Any, source: Any) -> Any:
    return _macro("macro_map", activation, variable, body, source)


def macro_filter(activation: Any, variable: str, body: Any, source: Any) -> Any:
    return _macro("macro_filter", activation, variable, body, source)


def macro_exists(activation: Any, variable: str, body: Any, source: Any) -> Any:
    return _macro("macro_exists", activation, variable, body, source)


def macro_all(activation: Any, variable: str, body: Any, source: Any) -> Any:
    return _macro("macro_all", activation, variable, body, source)


def macro_exists_one(activation: Any, variable: str, body: Any, source: Any) -> Any:
    return _macro("macro_exists_one", activation, variable, body, source)


# --- the interpreter: every node it visits is a step -------------------------------------------

_EVALUATOR: Any = None


def evaluator(ast: Any, activation: Any) -> Any:
    """celpy's interpreter for `ast`, charging the budget for each node it visits."""
    global _EVALUATOR
    if _EVALUATOR is None:
        # celpy's interpreter loads with the first evaluation (a test keeps CEL's import light).
        from celpy.evaluation import Evaluator

        class ChargedEvaluator(Evaluator):
            def visit(self, tree: Any) -> Any:
                budget = current()
                if budget is not None:
                    budget.charge(1)
                return super().visit(tree)

            def sub_evaluator(self, ast: Any) -> Any:
                return type(self)(ast, activation=self.activation)

        _EVALUATOR = ChargedEvaluator
    return _EVALUATOR(ast=ast, activation=activation)
