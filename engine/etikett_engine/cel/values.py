"""Values between JSON/Python and CEL: print data checked against a variable's declared type
(`coerce`), plain values as celpy's (`to_cel`) and back (`to_python`), and CEL's type names."""

from __future__ import annotations

import datetime as dt
import math
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from etikett_engine.cel.errors import CelInvalid, eval_message
from etikett_engine.cel.library import celpy

if TYPE_CHECKING:
    from etikett_engine.dsl.label import VariableType

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1  # CEL's int

# Patterns stay strings (re caches them on first use): compiling at import costs milliseconds.
_INTEGER = r"[+-]?[0-9]+"
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIMESTAMP = (
    r"(?P<base>[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2})"
    r"(?:\.(?P<fraction>[0-9]+))?(?P<offset>[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(value: Any) -> bool:
    # bool is an int in Python (and celpy's BoolType too); JSON true is not a number.
    return isinstance(value, int | float) and not is_bool(value)


def is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "BoolType"


def _plain_number(value: Any) -> Any:
    """A Decimal (what boto3 reads DynamoDB numbers as) as int or float; anything else as is."""
    decimal = sys.modules.get("decimal")  # not imported means no value can be a Decimal
    if decimal is not None and isinstance(value, decimal.Decimal) and value.is_finite():
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _parse_date(text: str) -> dt.datetime:
    text = text.strip()
    try:
        if re.fullmatch(_DATE, text):
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        match = re.fullmatch(_TIMESTAMP, text)
        if match:
            # RFC 3339 allows any number of fraction digits; datetime keeps microseconds.
            fraction = (match["fraction"] or "")[:6].ljust(6, "0")
            offset = "+00:00" if match["offset"] in "Zz" else match["offset"]
            parsed = dt.datetime.fromisoformat(f"{match['base']}.{fraction}{offset}")
            return parsed.astimezone(dt.UTC)
    except ValueError:
        pass  # a well-formed but impossible date, e.g. 2026-02-30
    raise ValueError(f"expected a date (2026-11-22) or an RFC 3339 timestamp, got {show(text)}")


def utc(value: dt.datetime) -> dt.datetime:
    # A naive datetime is taken as UTC: the service keeps every time in UTC. (`clock.as_utc`
    # does the same; the engine imports nothing of the service, so not `etikett.clock`.)
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def coerce(value: Any, declared_type: VariableType) -> Any:
    """Validate and convert one JSON input value (print data) for a declared variable type.

    Returns int, float, bool, str or a UTC datetime; raises ValueError with a short message.
    """
    value = _plain_number(value)
    if declared_type == "string":
        if isinstance(value, str):
            return value
        if _is_number(value):
            return str(value)
        raise ValueError(f"expected a string, got {show(value)}")
    if declared_type == "integer":
        number: int | None = None
        if _is_number(value) and isinstance(value, int):
            number = int(value)
        elif _is_number(value) and math.isfinite(value) and float(value).is_integer():
            number = int(value)  # 3.0 from a JSON client that writes every number as a float
        elif isinstance(value, str) and re.fullmatch(_INTEGER, value.strip()):
            number = int(value.strip())
        if number is None:
            raise ValueError(f"expected an integer, got {show(value)}")
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise ValueError(f"{number} is out of range for a 64-bit integer")
        return number
    if declared_type == "number":
        if _is_number(value) and math.isfinite(value):
            return float(value)
        if isinstance(value, str) and re.fullmatch(_NUMBER, value.strip()):
            parsed = float(value.strip())
            if math.isfinite(parsed):
                return parsed
        raise ValueError(f"expected a number, got {show(value)}")
    if declared_type == "boolean":
        if is_bool(value):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(f"expected true or false, got {show(value)}")
    if declared_type == "date":
        if isinstance(value, dt.datetime):
            return utc(value)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        if isinstance(value, str):
            return _parse_date(value)
        raise ValueError(
            f"expected a date (2026-11-22) or an RFC 3339 timestamp, got {show(value)}"
        )
    raise ValueError(f"unknown variable type {declared_type!r}")


def to_cel(value: Any, declared_type: VariableType | None = None) -> Any:
    """Convert a Python/JSON value to a celpy value: as declared, else by its Python type.

    None stays None (CEL null). Raises ValueError (value does not fit the declared type) or
    TypeError (a Python type CEL has no counterpart for).
    """
    if declared_type is None:
        fast = (_FAST or _fast_paths()).get(type(value))
        if fast is not None:
            return fast(value)
    ct = celpy().celtypes
    if value is None:
        return None
    value = coerce(value, declared_type) if declared_type is not None else _plain_number(value)
    if is_bool(value):
        return ct.BoolType(bool(value))
    if isinstance(value, int):
        return ct.IntType(value)
    if isinstance(value, float):
        return ct.DoubleType(value)
    if isinstance(value, str):
        return ct.StringType(value)
    if isinstance(value, bytes):
        return ct.BytesType(value)
    if isinstance(value, dt.datetime):
        return ct.TimestampType(utc(value))
    if isinstance(value, dt.date):
        return ct.TimestampType(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC))
    if isinstance(value, dt.timedelta):
        return ct.DurationType(value)
    if isinstance(value, Mapping):
        return ct.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ct.ListType([to_cel(item) for item in value])
    raise TypeError(f"no CEL type for a Python {type(value).__name__}")


def with_fields(base: Any, changed: Mapping[str, Any]) -> Any:
    """The CEL map `base` (from to_cel) with `changed` (plain values) set: a flow's set node
    converts only the fields it sets."""
    value = celpy().celtypes.MapType()
    dict.update(value, base)
    for name, item in changed.items():
        key = to_cel(name)
        value[key] = to_cel(item)
    return value


# to_cel for the exact types records are made of, without the general path's checks; each gives
# what the general path gives (tests/unit/test_cel_values.py compares them). celpy's IntType(int)
# wraps a fresh range-checking closure on every call; the same check is done here once.
def _fast_int(value: int) -> Any:
    if _INT64_MIN <= value <= _INT64_MAX:
        return int.__new__(_CT.IntType, value)
    raise ValueError("overflow")


def _fast_map(value: dict[Any, Any]) -> Any:
    # MapType(dict) checks the argument against typing's Sequence and Mapping, then copies it.
    converted = _CT.MapType()
    for key, item in value.items():
        name = to_cel(key)  # the key first, as a dict display does: the same error wins
        converted[name] = to_cel(item)
    return converted


def _fast_list(value: list[Any] | tuple[Any, ...]) -> Any:
    return _CT.ListType([to_cel(item) for item in value])


def _fast_paths() -> dict[type, Any]:
    """Filled on first use: celpy is imported then, not before."""
    global _CT, _FAST
    ct = _CT = celpy().celtypes
    _FAST = {
        type(None): lambda value: None,
        bool: lambda value: ct.BoolType(value),
        int: _fast_int,
        float: ct.DoubleType,
        str: ct.StringType,
        dict: _fast_map,
        list: _fast_list,
        tuple: _fast_list,
    }
    return _FAST


_CT: Any = None
_FAST: dict[type, Any] | None = None


def type_name(value: Any) -> str:
    """The CEL type name of a plain Python value as `evaluate` returns it."""
    if value is None:
        return "null_type"
    if is_bool(value):
        return "bool"
    for python_type, name in _TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    raise TypeError(f"no CEL type for a Python {type(value).__name__}")


_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (int, "int"),
    (float, "double"),
    (str, "string"),
    (bytes, "bytes"),
    (dt.date, "timestamp"),  # datetime is a date; a bare date converts to midnight UTC
    (dt.timedelta, "duration"),
    ((list, tuple), "list"),
    (Mapping, "map"),
)


def to_python(value: Any, source: str) -> Any:
    """A celpy value as the plain Python value `evaluate` returns; an error value celpy left
    inside a result is CelInvalid (of `source`)."""
    plain = (_PLAIN or _plain_types()).get(type(value))
    if plain is not None:
        return plain(value)
    runtime = celpy()
    ct = runtime.celtypes
    if value is None or isinstance(value, ct.NullType):
        return None
    if isinstance(value, runtime.eval_error):
        # celpy's interpreter can leave an error inside a map literal instead of failing.
        raise CelInvalid(source, eval_message(value, set()))
    if is_bool(value):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, dt.datetime):
        plain = dt.datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            tzinfo=value.tzinfo,
        )
        return utc(plain)
    if isinstance(value, dt.timedelta):
        return dt.timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, Mapping):
        return {to_python(k, source): to_python(v, source) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_python(item, source) for item in value]
    if isinstance(value, type):
        return _cel_type_name(value, ct)
    return value


def _plain_types() -> dict[type, Any]:
    """to_python for celpy's scalar types, by exact type: what the general path calls for them."""
    global _PLAIN
    ct = celpy().celtypes
    _PLAIN = {ct.BoolType: bool, ct.IntType: int, ct.DoubleType: float, ct.StringType: str}
    return _PLAIN


_PLAIN: dict[type, Any] | None = None


def _cel_type_name(value: type, ct: Any) -> str:
    names = {
        ct.BoolType: "bool",
        ct.IntType: "int",
        ct.UintType: "uint",
        ct.DoubleType: "double",
        ct.StringType: "string",
        ct.BytesType: "bytes",
        ct.ListType: "list",
        ct.MapType: "map",
        ct.TimestampType: "timestamp",
        ct.DurationType: "duration",
        type(None): "null_type",
    }
    return names.get(value, getattr(value, "__name__", "type"))
