"""The numbers DynamoDB can store: at most 38 significant digits, 0 or a magnitude from 1E-130 to
9.9999999999999999999999999999999999999E+125; no NaN or infinity.

One check for every number a request brings (`etikett.api.access` runs it over each JSON body,
nested objects and lists included), so a number that reaches any table — a context value, a
print variable, a record field, a counter setting, an audit entry's details — fits, and one that
would not is refused naming its field instead of failing the write (moto, local mode's DynamoDB,
enforces only the lower bound; AWS enforces all three).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from etikett_engine.errors import InvalidRequest

MAX_DIGITS = 38
MESSAGE = (
    "DynamoDB stores numbers of at most 38 significant digits, 0 or between 1E-130 and "
    "9.9E+125 in magnitude (no NaN or infinity)"
)
# Beneath these a number fits for sure, without a Decimal: a float has at most 17 significant
# digits, an int below 10**38 at most 38.
_INT_FITS = 10**MAX_DIGITS
_FLOAT_SMALLEST, _FLOAT_BELOW = 1e-130, 1e126


def fits(number: int | float) -> bool:
    """Whether DynamoDB can store `number` (a bool is not a number here and always fits)."""
    if isinstance(number, bool):
        return True
    if isinstance(number, int):
        if -_INT_FITS < number < _INT_FITS:
            return True
        exact = Decimal(number)
    else:
        if not math.isfinite(number):
            return False
        if number == 0.0 or _FLOAT_SMALLEST <= abs(number) < _FLOAT_BELOW:
            return True
        exact = Decimal(repr(number))  # what the store sends: the shortest repr
    # Decimal's own normalize() would round to its context's 28 digits: count them exactly.
    _, digits, exponent = exact.as_tuple()
    assert isinstance(exponent, int)  # finite: NaN and infinity were refused above
    written = "".join(map(str, digits))
    significant = written.strip("0")
    if not significant:
        return True  # zero
    magnitude = exponent + len(written) - 1  # the power of ten of the leading digit
    return len(significant) <= MAX_DIGITS and -130 <= magnitude <= 125


def first_unstorable(value: Any, where: str) -> str | None:
    """The path (`where` and the keys and indexes below it, dotted) of the first number in
    `value` that DynamoDB cannot store, or None."""
    if _all_fit(value):
        return None  # the common case, without building a single path
    return _first_with_path(value, where)


def _first_with_path(value: Any, where: str) -> str | None:
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            stack.extend((inner, f"{path}.{key}") for key, inner in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}.{i}") for i, inner in reversed(list(enumerate(item))))
        elif isinstance(item, (int, float)) and not fits(item):
            return path
    return None


def _all_fit(value: Any) -> bool:
    """Whether every number of a parsed JSON value fits: one pass over a body that may hold
    10,000 records, so by exact type (what a JSON parser makes) and with the sure bounds first."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            extend(item.values())
        elif kind is list:
            extend(item)
        elif kind is int:
            if not -_INT_FITS < item < _INT_FITS and not fits(item):
                return False
        elif kind is float:
            if not (item == 0.0 or _FLOAT_SMALLEST <= abs(item) < _FLOAT_BELOW) and not fits(item):
                return False
        elif (
            isinstance(item, (dict, list, int, float))
            and not isinstance(item, bool)
            and _first_with_path(item, "") is not None  # not from a JSON parser: the long way
        ):
            return False
    return True


def refuse_unstorable(value: Any, where: str) -> None:
    """422 `request.invalid` naming the field of a number DynamoDB cannot store."""
    path = first_unstorable(value, where)
    if path is not None:
        raise InvalidRequest(
            f"Invalid fields: {path}.",
            fields=[{"field": path, "message": MESSAGE, "type": "number_out_of_range"}],
        )
