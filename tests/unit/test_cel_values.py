"""to_cel's fast paths for plain record values give exactly what celpy's constructors give."""

from __future__ import annotations

import math
import random
from typing import Any

import celpy.celtypes as ct
import pytest

from etikett_engine.cel import to_cel
from etikett_engine.cel.values import with_fields

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def reference(value: Any) -> Any:
    """The conversion by celpy's own constructors (what to_cel did before its fast paths)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ct.BoolType(value)
    if isinstance(value, int):
        return ct.IntType(value)  # ValueError("overflow") outside int64
    if isinstance(value, float):
        return ct.DoubleType(value)
    if isinstance(value, str):
        return ct.StringType(value)
    if isinstance(value, dict):
        return ct.MapType({reference(k): reference(v) for k, v in value.items()})
    return ct.ListType([reference(item) for item in value])


def same(left: Any, right: Any) -> None:
    """Equal with the same celpy types all the way down (CEL's == would let 1 == 1.0 pass)."""
    assert type(left) is type(right), (left, right)
    if isinstance(left, dict):
        assert list(left) == list(right)
        for (lk, lv), (rk, rv) in zip(left.items(), right.items(), strict=True):
            same(lk, rk)
            same(lv, rv)
    elif isinstance(left, list):
        assert len(left) == len(right)
        for a, b in zip(left, right, strict=True):
            same(a, b)
    elif isinstance(left, float) and math.isnan(left):
        assert math.isnan(right)
    else:
        assert left == right and repr(left) == repr(right)


def converted(value: Any) -> tuple[str, Any]:
    try:
        return "value", to_cel(value)
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)


def referenced(value: Any) -> tuple[str, Any]:
    try:
        return "value", reference(value)
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)


INTS = [0, 1, -1, INT64_MAX, INT64_MAX + 1, INT64_MIN, INT64_MIN - 1, 2**64, -(2**70), 10**30]
FLOATS = [0.0, -0.0, 1.5, -2.25, 1e308, float("inf"), float("-inf"), float("nan"), 2.0**63]
STRINGS = ["", "a", " 12 ", "0x1F", "-0x1f", "Kunde 1", "ümlaut", "\x00", "😀", "1_000"]


def scalars(rng: random.Random) -> Any:
    pick = rng.randrange(6)
    if pick == 0:
        return rng.choice([*INTS, rng.randint(INT64_MIN - 10, INT64_MAX + 10)])
    if pick == 1:
        return rng.choice([*FLOATS, rng.uniform(-1000000.0, 1000000.0)])
    if pick == 2:
        return rng.choice([*STRINGS, "".join(rng.choice("ab 0x9-_é") for _ in range(5))])
    if pick == 3:
        return rng.choice([True, False])
    if pick == 4:
        return None
    return rng.randint(-5, 5)


def values(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(8 if depth < 3 else 5)
    if pick < 5:
        return scalars(rng)
    if pick == 5:
        return [values(rng, depth + 1) for _ in range(rng.randrange(4))]
    if pick == 6:
        return tuple(values(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys = [rng.choice([*STRINGS, 1, True, 0, False, 1.0, INT64_MAX + 1]) for _ in range(4)]
    return {key: values(rng, depth + 1) for key in keys}


@pytest.mark.parametrize("value", [*INTS, *FLOATS, *STRINGS, True, False, None, (), [], {}])
def test_each_plain_value_converts_as_celpy_does(value: Any) -> None:
    got, want = converted(value), referenced(value)
    assert got[0] == want[0]
    if got[0] == "value":
        same(got[1], want[1])
    else:
        assert got == want


def test_random_records_convert_as_celpy_does() -> None:
    rng = random.Random(13)
    for _ in range(5000):
        value = values(rng)
        got, want = converted(value), referenced(value)
        assert got[0] == want[0], value
        if got[0] == "value":
            same(got[1], want[1])
        else:
            assert got == want, value


def test_a_fast_int_is_usable_as_celpy_int() -> None:
    seven = to_cel(7)
    assert seven + to_cel(1) == 8 and isinstance(seven + to_cel(1), ct.IntType)
    with pytest.raises(ValueError, match="overflow"):
        to_cel(INT64_MAX) + to_cel(1)


def test_with_fields_is_the_converted_record_with_the_fields_set() -> None:
    rng = random.Random(7)
    for _ in range(500):
        record = {f"f{i}": scalars(rng) for i in range(rng.randrange(5))}
        changed = {f"f{i}": scalars(rng) for i in range(rng.randrange(2, 7))}
        try:
            base = to_cel(record)
        except ValueError:
            continue
        got, want = converted(changed), referenced({**record, **changed})
        if want[0] == "value":
            same(with_fields(base, changed), want[1])
        else:
            assert got[0] == want[0]  # the field that cannot be converted is a changed one
            with pytest.raises(ValueError):
                with_fields(base, changed)
        same(base, reference(record))  # the base is left as it was


# --- int(): etikett_engine.cel.conversions.int_of against celpy's IntType ---------------------


def outcome(function: Any, source: Any) -> tuple[Any, ...]:
    try:
        value = function(source)
    except Exception as error:  # the same exception, with the same arguments
        return type(error), error.args
    return type(value), int(value), repr(value)


INT_SOURCES: list[Any] = [
    "0",
    "42",
    "-42",
    "+42",
    " 7 ",
    "\t-3\n",
    "1_000",
    "٣",  # an Arabic-Indic digit: Python's int() accepts it, so celpy does too
    "",
    " ",
    "-",
    "4.5",
    "abc",
    "1e3",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999999",
    "0x1F",
    "0X1f",
    "-0x1f",
    "-0X7fffffffffffffff",
    "0x8000000000000000",
    "-0x8000000000000000",
    "0x",
    "0xZZ",
    " 0x10",
    "00012",
    "0b101",
]


@pytest.mark.parametrize("text", INT_SOURCES)
def test_int_of_a_string_is_celpys(text: str) -> None:
    from etikett_engine.cel.conversions import int_of

    for source in (text, ct.StringType(text)):
        assert outcome(int_of, source) == outcome(ct.IntType, source)


def test_int_of_random_strings_and_other_values_is_celpys() -> None:
    from etikett_engine.cel.conversions import int_of

    rng = random.Random(11)
    others: list[Any] = [
        ct.IntType(5),
        ct.IntType(INT64_MIN),
        ct.UintType(7),
        ct.DoubleType(2.9),
        ct.DoubleType(-2.9),
        ct.DoubleType(float("nan")),
        ct.DoubleType(float("inf")),
        ct.DoubleType(1e19),
        ct.BoolType(True),
        ct.BytesType(b"12"),
        ct.ListType([]),
        ct.MapType({}),
        None,
        3.5,
        7,
    ]
    for value in others:
        assert outcome(int_of, value) == outcome(ct.IntType, value), value
    for _ in range(20_000):
        text = "".join(rng.choice("0123456789 -+_xXaAfF.\t") for _ in range(rng.randrange(22)))
        for source in (text, ct.StringType(text)):
            assert outcome(int_of, source) == outcome(ct.IntType, source), source


def test_int_stays_the_type_name_and_converts_in_expressions() -> None:
    from etikett_engine.cel import CelInvalid, evaluate

    assert evaluate("type(1) == int", {}) is True
    assert evaluate("type(int(record.qty)) == int", {"record": {"qty": " 12"}}) is True
    assert evaluate("[' 1', '0x10'].map(x, int(x))", {}) == [1, 16]
    # The messages celpy's IntType gave through the engine before int_of (checked on 8e08914).
    messages = {
        "abc": "invalid value: invalid literal for int() with base 10: string('abc')",
        "9223372036854775808": "overflow",
        " 1 2": "invalid value: invalid literal for int() with base 10: string(' 1 2')",
        "0xZZ": "invalid value: invalid literal for int() with base 16: 'ZZ'",
        "": "invalid value: invalid literal for int() with base 10: string('')",
    }
    for bad, message in messages.items():
        with pytest.raises(CelInvalid) as caught:
            evaluate("int(record.qty)", {"record": {"qty": bad}})
        assert caught.value.params["message"] == message


# --- comparisons: etikett_engine.cel.charged's, built once, against celpy's bool_* -----------


def test_charged_comparisons_are_celpys() -> None:
    import celpy.evaluation as ev

    from etikett_engine.cel import charged, programs

    programs.runtime()  # charged.functions() ran
    operands: list[Any] = [
        ct.IntType(1),
        ct.IntType(2),
        ct.UintType(1),
        ct.DoubleType(1.0),
        ct.DoubleType(float("nan")),
        ct.StringType("a"),
        ct.StringType("b"),
        ct.BoolType(True),
        ct.ListType([ct.IntType(1)]),
        ct.MapType({ct.StringType("a"): ct.IntType(1)}),
        None,
        ev.CELEvalError("no such member", KeyError, ("x",)),
    ]
    pairs = [
        (charged.eq, ev.bool_eq),
        (charged.ne, ev.bool_ne),
        (charged.lt, ev.bool_lt),
        (charged.le, ev.bool_le),
        (charged.gt, ev.bool_gt),
        (charged.ge, ev.bool_ge),
    ]

    def compared(function: Any, left: Any, right: Any) -> tuple[Any, ...]:
        try:
            value = function(left, right)
        except Exception as error:
            return type(error), error.args
        return type(value), repr(value)

    for ours, celpys in pairs:
        for left in operands:
            for right in operands:
                got, want = compared(ours, left, right), compared(celpys, left, right)
                assert got == want, (ours.__name__, left, right)


def test_results_come_back_as_plain_python_values() -> None:
    from etikett_engine.cel.values import to_python

    rng = random.Random(5)
    for _ in range(2000):
        value = scalars(rng)
        try:
            cel_value = to_cel(value)
        except ValueError:
            continue
        back = to_python(cel_value, "x")
        assert type(back) is type(value)
        assert back == value or (isinstance(value, float) and math.isnan(value))
    assert type(to_python(ct.BoolType(True), "x")) is bool
    assert to_python(ct.IntType, "x") == "int"


# --- int literals made once per expression (programs._int_literals) -----------------------------


def test_expressions_with_int_literals_give_what_the_unchanged_transpiled_code_gives() -> None:
    from etikett_engine.cel import limits, programs

    def run(program: Any) -> tuple[Any, ...]:
        with limits.Budget():
            try:
                value = program.run({"record": to_cel({"qty": 3, "name": "a"})})
            except Exception as error:
                return type(error).__name__, str(error)
        return type(value), repr(value)

    rng = random.Random(17)
    numbers = ["0", "1", "7", "0x1F", "0X10", "9223372036854775807", "9223372036854775808"]
    numbers += ["18446744073709551615", "3u", "2.5", "record.qty", "size(record.name)"]
    operators = [" + ", " - ", " * ", " / ", " % ", " == ", " < ", " >= "]

    def expression(depth: int) -> str:
        pick = rng.randrange(6 if depth < 3 else 2)
        if pick == 0:
            return rng.choice(numbers)
        if pick == 1:
            return "-" + rng.choice(numbers)
        if pick == 2:
            return f"({expression(depth + 1)}{rng.choice(operators)}{expression(depth + 1)})"
        if pick == 3:
            return f"[{expression(depth + 1)}, {expression(depth + 1)}][0]"
        if pick == 4:
            return f"(record.qty > 1 ? {expression(depth + 1)} : {expression(depth + 1)})"
        return f'"celpy.celtypes.IntType({rng.choice(numbers)})" + string({expression(depth + 1)})'

    compared = hoisted = 0
    for _ in range(1500):
        source = expression(0)
        try:
            program = programs.program(source)
        except Exception:
            continue
        if program.function is None:
            continue
        unchanged = programs.Program(program.tree, program.code, program.problems)
        assert unchanged.function is None  # the transpiled code as celpy wrote it, exec'd
        assert run(program) == run(unchanged), source
        compared += 1
        hoisted += "_cel_int_0" in program.function.__globals__
    assert compared > 1000 and hoisted > 500
