"""CEL for labels: helpers with real codes, typed variables, errors with positions, threads."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import threading
from decimal import Decimal
from typing import Any, get_args

import pytest

from etikett_engine import cel
from etikett_engine.cel import CelInvalid, check, coerce, evaluate, to_cel, type_name

NOW = dt.datetime(2026, 11, 22, 10, 30, tzinfo=dt.UTC)
DECLARED: dict[str, Any] = {
    "lot": "string",
    "qty": "integer",
    "price": "number",
    "best_before": "date",
    "organic": "boolean",
}


def run(source: str, values: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    kwargs.setdefault("now", NOW)
    return evaluate(source, values or {}, DECLARED, **kwargs)


def gs1_check_digit(data: str) -> int:
    """The GS1 General Specifications' way: right-align in the 17 data positions of an SSCC,
    then weights 3, 1, 3, ... from the left. Independent of the implementation under test."""
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(data.rjust(17, "0")))
    return (10 - total % 10) % 10


# Codes from public examples (EAN-13 of a STABILO pen, UPC-A, EAN-8, ISBN-13, GTIN-14, SSCC);
# each is also checked against the reference above, so a mistyped one cannot pass.
KNOWN_CODES = [
    "4006381333931",
    "5901234123457",
    "9780306406157",
    "036000291452",
    "012345678905",
    "96385074",
    "73513537",
    "00012345600012",
    "10614141000415",
    "106141411234567897",
    "340123450000000000",
    "376104250021234569",
]


# --- import cost --------------------------------------------------------------------------------


def test_importing_the_module_loads_neither_celpy_nor_pydantic() -> None:
    code = (
        "import sys, etikett_engine.cel\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'celpy', 'lark', 'pendulum', 're2', 'pydantic'})\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


def test_variable_type_is_the_label_documents_and_every_type_is_supported() -> None:
    from etikett_engine.dsl.label import VariableType

    assert cel.VariableType is VariableType
    samples = {"string": "x", "integer": 1, "number": 1.5, "date": "2026-11-22", "boolean": True}
    assert set(get_args(VariableType)) == set(samples)
    for declared_type, sample in samples.items():
        coerce(sample, declared_type)


# --- helpers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('format_date(now, "%y%m%d")', "261122"),
        ('format_date(now, "%d.%m.%Y %H:%M")', "22.11.2026 10:30"),
        ('format_date(add_days(now, 30), "%d.%m.%Y")', "22.12.2026"),
        ('format_date(add_days(now, -22), "%Y-%m-%d")', "2026-10-31"),
        ('format_date(timestamp("2026-11-22T23:30:00-02:00"), "%d %H")', "23 01"),  # in UTC
        ("pad(42, 6)", "000042"),
        ('pad("7", 3)', "007"),
        ("pad(1234567, 3)", "1234567"),
        ("pad(-5, 4)", "-005"),
        ("pad(counters.serial, 9)", "000000017"),
        ("format_number(2.5, 2)", "2.50"),
        ("format_number(2.675, 2)", "2.68"),
        ("format_number(1.005, 2)", "1.01"),
        ("format_number(3, 1)", "3.0"),
        ("format_number(2.5, 0)", "3"),
        ("format_number(-0.001, 2)", "0.00"),
        ("format_number(1234.5678, 3)", "1234.568"),
        ('upper("Bio ä")', "BIO Ä"),
        ('lower("LOT")', "lot"),
        ('trim("  A 1 \\n")', "A 1"),
        ('"lot".upper()', "LOT"),
        ('with_check_digit("400638133393")', "4006381333931"),
        ('gs1_check_digit("34012345000000000")', "0"),
    ],
)
def test_helpers(source: str, expected: str) -> None:
    assert run(source, counters={"serial": 17}) == expected


@pytest.mark.parametrize("code", KNOWN_CODES)
def test_gs1_check_digits_of_published_codes(code: str) -> None:
    assert gs1_check_digit(code[:-1]) == int(code[-1])  # the reference agrees with the code
    assert run(f'gs1_check_digit("{code[:-1]}")') == code[-1]
    assert run(f'with_check_digit("{code[:-1]}")') == code


def test_gs1_check_digit_agrees_with_the_reference_on_many_inputs() -> None:
    inputs = [str(n * 7919 + 13).rjust(length, "0") for n in range(40) for length in (7, 12, 17)]
    sources = [f'gs1_check_digit("{digits}")' for digits in inputs]
    assert [run(s) for s in sources] == [str(gs1_check_digit(d)) for d in inputs]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('gs1_check_digit("4006 38")', "gs1_check_digit(): expected a string of digits"),
        ('gs1_check_digit("")', "gs1_check_digit(): expected a string of digits"),
        ('with_check_digit("12a")', "with_check_digit(): expected a string of digits"),
        ("gs1_check_digit(400638133393)", "gs1_check_digit(): the digits must be a string"),
        ("pad(1, 101)", "pad(): the width must be between 0 and 100"),
        ("pad(1.5, 3)", "pad(): expected an int or a string, got double"),
        ("pad(1)", "pad() takes (int | string, int) -> string"),
        ('format_number("2.5", 2)', "format_number(): expected a number, got string"),
        ("format_number(2.5, 21)", "format_number(): decimals must be between 0 and 20"),
        ('format_date("2026-11-22", "%Y")', "format_date(): expected a timestamp, got string"),
        ("add_days(now, 1.5)", "add_days(): days must be an int, got double"),
        ("add_days(now, 10000000)", "add_days(): the date is out of range"),
        ("upper(1)", "upper(): the argument must be a string, got int"),
        ("pad(1 / 0, 3)", "divide by zero"),
    ],
)
def test_helpers_refuse_bad_arguments(source: str, message: str) -> None:
    with pytest.raises(CelInvalid) as caught:
        run(source)
    assert caught.value.params["message"].startswith(message)
    assert caught.value.params["line"] is None and caught.value.params["column"] is None


def test_functions_are_documented_and_usable() -> None:
    names = [entry["name"] for entry in cel.FUNCTIONS]
    assert set(names) == {
        "format_date",
        "add_days",
        "pad",
        "gs1_check_digit",
        "with_check_digit",
        "format_number",
        "upper",
        "lower",
        "trim",
    }
    assert len(names) == len(set(names))
    for entry in cel.FUNCTIONS:
        assert entry["doc"] and "\n" not in entry["doc"] and entry["signature"].startswith("(")
        check(f"{entry['name']}(x)", extra_names=["x"])


# --- typed variables, now and counters ----------------------------------------------------------


def test_typed_variables() -> None:
    values = {
        "lot": "L-7",
        "qty": "21",
        "price": "2.5",
        "best_before": "2026-12-01",
        "organic": "true",
    }
    assert run("qty * 2", values) == 42
    assert run("price * 2.0", values) == 5.0
    assert run('format_number(price * double(qty), 2) + " EUR"', values) == "52.50 EUR"
    assert run("best_before > now", values) is True
    assert run('best_before < timestamp("2026-12-01T00:00:01Z")', values) is True
    assert run("best_before", values) == dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    assert run('format_date(best_before, "%d.%m.%Y")', values) == "01.12.2026"
    assert run('organic ? "BIO" : ""', values) == "BIO"
    assert run('lot + "/" + string(qty)', values) == "L-7/21"
    assert run("best_before > now", {"best_before": "2026-11-22T10:29:59+00:00"}) is False
    assert run("best_before > now", {"best_before": "2026-11-22T12:00:00+02:00"}) is False


def test_undeclared_values_are_converted_by_their_python_type() -> None:
    values = {"n": 3, "x": 1.5, "s": "a", "b": False, "items": [1, 2], "m": {"k": "v"}, "z": None}
    assert run("n + 1", values) == 4
    assert run("x * 2.0", values) == 3.0
    assert run("s + m.k", values) == "av"
    assert run("!b && size(items) == 2 && z == null", values) is True
    assert run("items.map(i, i * n)", values) == [3, 6]
    assert run("d + 1", {"d": Decimal("41")}) == 42  # what boto3 reads from DynamoDB


def test_a_value_that_does_not_fit_its_declared_type_is_refused() -> None:
    with pytest.raises(CelInvalid, match="variable 'qty': expected an integer"):
        run("qty + 1", {"qty": "many"})
    assert run("1", {"qty": "many"}) == 1  # values the expression does not read are not looked at


def test_now_defaults_to_the_current_utc_time() -> None:
    before = dt.datetime.now(dt.UTC)
    result = evaluate("now", {})
    assert before <= result <= dt.datetime.now(dt.UTC)
    assert result.tzinfo is not None and result.utcoffset() == dt.timedelta(0)
    assert evaluate("now", {}, now=dt.datetime(2026, 1, 2, 3, 4)) == dt.datetime(
        2026, 1, 2, 3, 4, tzinfo=dt.UTC
    )


def test_counters() -> None:
    assert run("counters.serial + 1", counters={"serial": 41}) == 42
    assert run('"SN" + pad(counters.serial, 5)', counters={"serial": 7}) == "SN00007"
    assert run('has(counters.serial) ? "yes" : "no"', counters={}) == "no"
    assert run("now", {"now": "not this", "counters": 1}) == NOW  # reserved names
    with pytest.raises(CelInvalid, match="no such member in mapping: 'serial'"):
        run("counters.serial", counters={})


# --- standard CEL keeps working -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("size(lot)", 3),
        ("lot.size()", 3),
        ('lot.contains("b")', True),
        ('lot.startsWith("a") && lot.endsWith("c")', True),
        ('lot.matches("^[a-c]+$")', True),
        ("string(qty) + string(price)", "122.5"),
        ('int("42") + qty', 54),
        ("int(price)", 2),
        ("double(qty) / 5.0", 2.4),
        ("qty / 5", 2),
        ("qty % 5", 2),
        ('qty > 10 ? "big" : "small"', "big"),
        ('has(m.k) ? m.k : "none"', "v"),
        ('!has(m.missing) ? "none" : m.missing', "none"),
        ("has(m.k) && !has(m.missing)", True),
        ("[1, 2, 3].map(x, x * qty)", [12, 24, 36]),
        ("[1, 2, 3].filter(x, x > 1)", [2, 3]),
        ("[1, 2, 3].exists(x, x == 2)", True),
        ("[1, 2, 3].all(x, x > 0)", True),
        ("[1, 2, 3].exists_one(x, x > 2)", True),
        ("[1, 2].map(x, [10, 20].map(y, x * y))", [[10, 20], [20, 40]]),
        ('"k" in m && 2 in [1, 2]', True),
        ("type(qty) == int && type(lot) == string", True),
        ("type(price)", "double"),
        ('now + duration("36h") > now && now.getFullYear() == 2026', True),
        ("true || 1 / 0 == 1", True),
        ('{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}),
    ],
)
def test_standard_cel(source: str, expected: Any) -> None:
    values = {"lot": "abc", "qty": 12, "price": 2.5, "m": {"k": "v"}}
    result = run(source, values)
    assert result == expected and type(result) is type(expected)


def test_results_are_plain_python_values() -> None:
    result = run('[1, 2.5, "s", true, null, now, duration("90s"), {"k": [b"x"]}]')
    assert result == [
        1,
        2.5,
        "s",
        True,
        None,
        NOW,
        dt.timedelta(seconds=90),
        {"k": [b"x"]},
    ]
    assert [type(v) for v in result] == [
        int,
        float,
        str,
        bool,
        type(None),
        dt.datetime,
        dt.timedelta,
        dict,
    ]
    assert (
        type(result) is list and type(result[7]["k"]) is list and type(result[7]["k"][0]) is bytes
    )


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ('"s"', "string"),
        ("1", "int"),
        ("1u", "int"),
        ("1.5", "double"),
        ("true", "bool"),
        ("now", "timestamp"),
        ('duration("1h")', "duration"),
        ("[1]", "list"),
        ('{"a": 1}', "map"),
        ("null", "null_type"),
        ('b"x"', "bytes"),
    ],
)
def test_type_name_of_results(source: str, name: str) -> None:
    assert type_name(run(source)) == name


def test_type_name_of_python_values() -> None:
    assert type_name(dt.date(2026, 1, 1)) == "timestamp"
    assert type_name((1, 2)) == "list"
    with pytest.raises(TypeError):
        type_name(object())


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        ("a +", 1, 3, "unexpected end of expression"),
        ("lot +\n  qty)", 2, 6, "unexpected ')'"),
        ('lot == "x" &&\n  (qty > ', 2, 8, "unexpected end of expression"),
        ("1 = 2", 1, 3, "unexpected character '='"),
        ("'open", 1, 1, "unterminated string"),
        ("", 1, 1, "unexpected end of expression"),
    ],
)
def test_syntax_errors_carry_their_position(
    source: str, line: int, column: int, message: str
) -> None:
    for call in (lambda: check(source, DECLARED), lambda: run(source)):
        with pytest.raises(CelInvalid) as caught:
            call()
        error = caught.value
        assert error.params == {
            "expression": source,
            "message": message,
            "line": line,
            "column": column,
        }
        assert (error.status, error.code, error.title) == (
            422,
            "cel.invalid",
            "Invalid CEL expression",
        )
        assert f"line {line}, column {column}" in error.detail


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        ("lot + sku", 1, 7, "undeclared name 'sku'"),
        ("lot + string(qty)\n  + sku", 2, 5, "undeclared name 'sku'"),
        ("[1, 2].map(x, x + y)", 1, 19, "undeclared name 'y'"),
        ("[1, 2].map(x, x) + [x]", 1, 21, "undeclared name 'x'"),
        ("value > 3", 1, 1, "undeclared name 'value'"),
        ("shout(lot)", 1, 1, "unknown function 'shout'"),
        ("lot.shout()", 1, 5, "unknown function 'shout'"),
        ("[1].map(1, 2)", 1, 5, "the first argument of map() must be a plain name"),
        ("Widget{name: lot}", 1, 1, "undeclared name 'Widget'"),
    ],
)
def test_check_refuses_unknown_names_with_their_position(
    source: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(CelInvalid) as caught:
        check(source, DECLARED)
    assert caught.value.params == {
        "expression": source,
        "message": message,
        "line": line,
        "column": column,
    }


@pytest.mark.parametrize(
    "source",
    [
        'lot + "-" + pad(counters.serial, 6) + format_date(now, "%y%m%d")',
        "best_before > now && organic && qty > 0 && price < 10.0",
        "[1, 2].map(x, x * qty).exists(y, y > 10)",
        "[[1], [2]].map(row, row.map(cell, cell + qty))",
        "type(qty) == int",
        "has(counters.serial) ? counters.serial : 0",
        ".lot",
    ],
)
def test_check_accepts_declared_names_now_counters_and_macro_variables(source: str) -> None:
    check(source, DECLARED)


def test_check_knows_extra_names() -> None:
    check("size(value) <= 20", extra_names=["value"])
    with pytest.raises(CelInvalid, match="undeclared name 'value'"):
        check("size(value) <= 20")


@pytest.mark.parametrize(
    ("source", "values", "message"),
    [
        ("qty / 0", {"qty": 1}, "divide by zero"),
        ("m.missing", {"m": {"k": 1}}, "no such member in mapping: 'missing'"),
        ("[1, 2][5]", {}, "invalid_argument"),
        ("lot", {}, "no value for 'lot'"),
        ("qty + 1.5", {"qty": 1}, "no such overload"),
        ('"a" + 1', {}, "no such overload"),
        ("lot.getFullYear()", {"lot": "x"}, "no such overload"),
        ('int("abc")', {}, "invalid value"),
        ('timestamp("someday")', {}, "invalid value"),
        ("9223372036854775807 + 1", {}, "overflow"),
        ("shout(1)", {}, "undeclared reference to 'shout'"),
        ('{"a": 1 / 0}', {}, "divide by zero"),
    ],
)
def test_evaluation_errors(source: str, values: dict[str, Any], message: str) -> None:
    with pytest.raises(CelInvalid) as caught:
        run(source, values)
    params = caught.value.params
    assert params["message"].startswith(message)
    assert params["expression"] == source
    assert params["line"] is None and params["column"] is None


def test_errors_do_not_echo_the_variables() -> None:
    with pytest.raises(CelInvalid) as caught:
        run("size(secret) + nothing", {"secret": "s3cr3t-value"})
    assert "s3cr3t" not in caught.value.detail and "nothing" in caught.value.detail


def test_deeply_nested_expressions_are_refused_not_crashing() -> None:
    source = "(" * 300 + "1" + ")" * 300
    with pytest.raises(CelInvalid, match="nested too deeply"):
        check(source)
    with pytest.raises(CelInvalid, match="nested too deeply"):
        run(source)


# --- coerce and to_cel --------------------------------------------------------------------------

UTC_MIDNIGHT = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("declared_type", "value", "expected"),
    [
        ("string", "abc", "abc"),
        ("string", "", ""),
        ("string", 42, "42"),
        ("string", 2.5, "2.5"),
        ("integer", 42, 42),
        ("integer", "42", 42),
        ("integer", " -7 ", -7),
        ("integer", "+3", 3),
        ("integer", 3.0, 3),
        ("integer", Decimal("12"), 12),
        ("integer", "9223372036854775807", 2**63 - 1),
        ("number", 2.5, 2.5),
        ("number", 3, 3.0),
        ("number", "2.5", 2.5),
        ("number", "-.5", -0.5),
        ("number", "1e3", 1000.0),
        ("number", Decimal("2.5"), 2.5),
        ("boolean", True, True),
        ("boolean", False, False),
        ("boolean", "true", True),
        ("boolean", "FALSE", False),
        ("date", "2026-11-22", UTC_MIDNIGHT),
        ("date", "2026-11-22T00:00:00Z", UTC_MIDNIGHT),
        ("date", "2026-11-22T01:00:00+01:00", UTC_MIDNIGHT),
        ("date", "2026-11-21T19:00:00-05:00", UTC_MIDNIGHT),
        ("date", "2026-11-22t00:00:00.000000001z", UTC_MIDNIGHT),
        (
            "date",
            "2026-11-22T10:30:00.25Z",
            UTC_MIDNIGHT.replace(hour=10, minute=30, microsecond=250000),
        ),
        ("date", dt.date(2026, 11, 22), UTC_MIDNIGHT),
        ("date", dt.datetime(2026, 11, 22), UTC_MIDNIGHT),
    ],
)
def test_coerce_accepts(declared_type: Any, value: Any, expected: Any) -> None:
    result = coerce(value, declared_type)
    assert result == expected and type(result) is type(expected)
    if isinstance(result, dt.datetime):
        assert result.utcoffset() == dt.timedelta(0)


@pytest.mark.parametrize(
    ("declared_type", "value", "message"),
    [
        ("string", True, "expected a string, got True"),
        ("string", None, "expected a string"),
        ("string", ["a"], "expected a string"),
        ("integer", "4.2", "expected an integer, got '4.2'"),
        ("integer", 4.2, "expected an integer"),
        ("integer", "4_2", "expected an integer"),
        ("integer", "٤٢", "expected an integer"),
        ("integer", True, "expected an integer"),
        ("integer", "", "expected an integer"),
        ("integer", 2**63, "out of range"),
        ("number", "2,5", "expected a number"),
        ("number", "nan", "expected a number"),
        ("number", float("inf"), "expected a number"),
        ("number", "1e999", "expected a number"),
        ("number", False, "expected a number"),
        ("boolean", "yes", "expected true or false"),
        ("boolean", 1, "expected true or false"),
        ("date", "22.11.2026", "expected a date"),
        ("date", "2026-02-30", "expected a date"),
        ("date", "2026-11-22T10:00:00", "expected a date"),
        ("date", "2026-11-22T10:00Z", "expected a date"),
        ("date", 20261122, "expected a date"),
        ("colour", "red", "unknown variable type"),
    ],
)
def test_coerce_refuses(declared_type: Any, value: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        coerce(value, declared_type)
    assert message in str(caught.value)


def test_to_cel_converts_as_declared_or_by_python_type() -> None:
    from celpy import celtypes

    assert isinstance(to_cel("42", "integer"), celtypes.IntType)
    assert isinstance(to_cel(3, "number"), celtypes.DoubleType)
    assert isinstance(to_cel(True), celtypes.BoolType)
    assert to_cel("2026-11-22", "date") == celtypes.TimestampType("2026-11-22T00:00:00Z")
    assert to_cel(dt.date(2026, 11, 22)) == celtypes.TimestampType("2026-11-22T00:00:00Z")
    assert to_cel(None, "integer") is None
    assert to_cel({"a": [1, "b"]}) == celtypes.MapType(
        {
            celtypes.StringType("a"): celtypes.ListType(
                [celtypes.IntType(1), celtypes.StringType("b")]
            )
        }
    )
    with pytest.raises(ValueError):
        to_cel("x", "integer")
    with pytest.raises(TypeError):
        to_cel({1, 2})


# --- concurrency --------------------------------------------------------------------------------


def test_threads_evaluate_the_same_and_different_expressions_correctly() -> None:
    def digits(i: int) -> str:
        return f"{i:012d}" + str(gs1_check_digit(f"{i:012d}"))

    # (source, expected result for i); the first one twice: the same compiled program at once.
    cases: list[tuple[str, Any]] = [
        ('lot + "-" + pad(counters.serial, 6)', lambda i: f"L{i}-{i:06d}"),
        ('lot + "-" + pad(counters.serial, 6)', lambda i: f"L{i}-{i:06d}"),
        ("qty * 2 + counters.serial", lambda i: 3 * i),
        ('format_date(add_days(now, qty), "%Y-%m-%d")', lambda i: f"{NOW + dt.timedelta(i):%F}"),
        ('has(counters.serial) ? with_check_digit(pad(qty, 12)) : ""', digits),
        ("[1, 2, 3].map(x, x * qty)", lambda i: [i, 2 * i, 3 * i]),
        ("format_number(double(qty) / 4.0, 2)", lambda i: f"{i / 4:.2f}"),
        ("qty / (qty - qty)", lambda i: "divide by zero"),
    ]
    failures: list[str] = []
    start = threading.Barrier(len(cases))

    def worker(source: str, expected: Any) -> None:
        start.wait()
        for i in range(1, 300):
            try:
                result = run(source, {"lot": f"L{i}", "qty": i}, counters={"serial": i})
            except CelInvalid as ex:
                result = ex.params["message"]
            if result != expected(i):
                failures.append(f"{source} with {i}: {result!r}")

    threads = [threading.Thread(target=worker, args=case) for case in cases]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


def test_a_string_that_reads_like_transpiled_code_keeps_its_value() -> None:
    """The transpiled program is rewritten (charged comprehensions) outside its string literals
    only."""
    text = "celpy.evaluation.macro_map"
    assert evaluate(f'"{text}" + "!"', {}) == text + "!"
    # The same in a program with a comprehension, which takes the other path.
    assert evaluate(f"[1, 2].all(x, x > 0) ? '{text}' : ''", {}) == text
    assert evaluate("[1, 2, 3].filter(x, x > 1).map(x, x * 2)", {}) == [4, 6]
