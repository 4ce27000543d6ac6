"""The label helpers every expression may call (`pad`, `format_date`, `gs1_check_digit`, ...),
registered with their signature and description in `FUNCTIONS` (what the API documents).

A helper takes and returns celpy values; a bad argument becomes a CEL evaluation error with a
short message, and its work is charged to the evaluation's budget (`etikett_engine.cel.charged`).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Callable
from typing import Any

from etikett_engine.cel import charged
from etikett_engine.cel.errors import CelInvalid
from etikett_engine.cel.library import celpy
from etikett_engine.cel.values import is_bool, show, to_python, type_name

MAX_WIDTH = 100  # pad(): a label line never needs more; stops pad(x, 10**9) eating memory
MAX_DECIMALS = 20

FUNCTIONS: list[dict[str, str]] = []
# By name, as the activation's functions (transpiled code calls them by module path).
HELPERS: dict[str, Callable[..., Any]] = {}


class _HelperError(Exception):
    """Raised by a helper for a bad argument; becomes a CEL evaluation error with this text."""


def _helper(name: str, signature: str, doc: str) -> Callable[[Callable[..., Any]], Any]:
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any) -> Any:
            error_type = celpy().eval_error
            for arg in args:
                # celpy's compiled code passes an argument's error on instead of stopping.
                if isinstance(arg, error_type):
                    return arg
            try:
                return charged.helper_called(args, function(*args))
            except _HelperError as ex:
                return error_type(f"{name}(): {ex}")
            except TypeError:
                return error_type(f"{name}() takes {signature}")

        HELPERS[name] = run
        FUNCTIONS.append({"name": name, "signature": signature, "doc": doc})
        return run

    return register


def _timestamp_arg(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise _HelperError(f"expected a timestamp, got {_cel_type_of(value)}")
    return value.astimezone(dt.UTC)


def _int_arg(value: Any, what: str) -> int:
    if is_bool(value) or not isinstance(value, int):
        raise _HelperError(f"{what} must be an int, got {_cel_type_of(value)}")
    return int(value)


def _str_arg(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _HelperError(f"{what} must be a string, got {_cel_type_of(value)}")
    return str(value)


@_helper(
    "format_date",
    "(timestamp, string) -> string",
    'The timestamp in UTC formatted with a strftime pattern: format_date(now, "%y%m%d").',
)
def _format_date(timestamp: Any, pattern: Any) -> Any:
    moment = _timestamp_arg(timestamp)
    text = _str_arg(pattern, "the pattern")
    try:
        return celpy().celtypes.StringType(moment.strftime(text))
    except ValueError as ex:
        raise _HelperError(f"bad pattern: {ex}") from ex


@_helper(
    "add_days",
    "(timestamp, int) -> timestamp",
    "The timestamp moved by a number of days (negative goes back): add_days(now, 30).",
)
def _add_days(timestamp: Any, days: Any) -> Any:
    moment = _timestamp_arg(timestamp)
    try:
        return celpy().celtypes.TimestampType(moment + dt.timedelta(days=_int_arg(days, "days")))
    except OverflowError as ex:
        raise _HelperError("the date is out of range") from ex


@_helper(
    "pad",
    "(int | string, int) -> string",
    'Zero-padded on the left to a width (longer values stay whole): pad(42, 6) == "000042".',
)
def _pad(value: Any, width: Any) -> Any:
    size = _int_arg(width, "the width")
    if not 0 <= size <= MAX_WIDTH:
        raise _HelperError(f"the width must be between 0 and {MAX_WIDTH}")
    if isinstance(value, str):
        text = str(value)
    elif is_bool(value) or not isinstance(value, int):
        raise _HelperError(f"expected an int or a string, got {_cel_type_of(value)}")
    else:
        text = str(int(value))
    return celpy().celtypes.StringType(text.zfill(size))


def _gs1_digit(digits: Any) -> str:
    text = _str_arg(digits, "the digits")
    if not text or not text.isascii() or not text.isdigit():
        raise _HelperError(f"expected a string of digits, got {show(text)}")
    # GS1 mod 10: weights 3, 1, 3, ... from the rightmost data digit.
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(text)))
    return str((10 - total % 10) % 10)


@_helper(
    "gs1_check_digit",
    "(string) -> string",
    "The GS1 mod-10 check digit of GTIN-8/12/13/14 or SSCC digits given without it.",
)
def _gs1_check_digit(digits: Any) -> Any:
    return celpy().celtypes.StringType(_gs1_digit(digits))


@_helper(
    "with_check_digit",
    "(string) -> string",
    'The digits followed by their GS1 check digit: with_check_digit("400638133393").',
)
def _with_check_digit(digits: Any) -> Any:
    return celpy().celtypes.StringType(str(digits) + _gs1_digit(digits))


@_helper(
    "format_number",
    "(int | double, int) -> string",
    "The number with exactly that many decimals, halves rounded up: format_number(2.5, 2).",
)
def _format_number(number: Any, decimals: Any) -> Any:
    from decimal import ROUND_HALF_UP, Decimal  # only format_number needs it

    places = _int_arg(decimals, "decimals")
    if not 0 <= places <= MAX_DECIMALS:
        raise _HelperError(f"decimals must be between 0 and {MAX_DECIMALS}")
    if is_bool(number) or not isinstance(number, int | float):
        raise _HelperError(f"expected a number, got {_cel_type_of(number)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise _HelperError(f"cannot format {float(number)}")
    # repr() is the shortest text that reads back as the same double, so 2.675 rounds to 2.68
    # as a person expects, not to 2.67 as its binary value would.
    exact = Decimal(repr(float(number))) if isinstance(number, float) else Decimal(int(number))
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.00"
    return celpy().celtypes.StringType(f"{rounded:f}")


@_helper("upper", "(string) -> string", "The string in upper case.")
def _upper(text: Any) -> Any:
    return celpy().celtypes.StringType(_str_arg(text, "the argument").upper())


@_helper("lower", "(string) -> string", "The string in lower case.")
def _lower(text: Any) -> Any:
    return celpy().celtypes.StringType(_str_arg(text, "the argument").lower())


@_helper("trim", "(string) -> string", "The string without leading and trailing whitespace.")
def _trim(text: Any) -> Any:
    return celpy().celtypes.StringType(_str_arg(text, "the argument").strip())


def _cel_type_of(value: Any) -> str:
    """The CEL type name of a celpy value (for messages)."""
    try:
        return type_name(to_python(value, ""))
    except (TypeError, CelInvalid):
        return type(value).__name__
