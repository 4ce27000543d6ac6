"""CEL's `int()` of a string, the usual conversion of CSV fields (`int(record.qty)`), without
celpy's per-call cost: its IntType(string) wraps a fresh range-checking closure
(functools.wraps) on every call. Every other argument, and hex strings, go to celpy's IntType;
tests/unit/test_cel_values.py compares the two over many inputs.

Only function calls are redirected (the transpiler resolves `int(…)` through the activation it
transpiles with); the name `int` as a type (`type(x) == int`) stays celpy's IntType.
"""

from __future__ import annotations

from typing import Any

from etikett_engine.cel.library import celpy

_INT64_MIN, _INT64_END = -(2**63), 2**63


def functions() -> dict[str, Any]:
    """The conversions by their CEL name (celpy must be imported)."""
    global _CT
    _CT = celpy().celtypes
    return {"int": int_of}


_CT: Any = None


def int_of(source: Any) -> Any:
    """celpy's IntType(source), the same value or the same exception."""
    ct = _CT or celpy().celtypes
    kind = type(source)
    if kind is ct.StringType or kind is str:
        if source[:2] in ("0x", "0X") or source[:3] in ("-0x", "-0X"):
            return ct.IntType(source)
        value = int(source)  # what celpy calls for a decimal string, so the same ValueError
        if _INT64_MIN <= value < _INT64_END:
            return int.__new__(ct.IntType, value)
        raise ValueError("overflow")
    if kind is ct.IntType:
        return source
    return ct.IntType(source)
