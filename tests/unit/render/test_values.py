"""Print data → variable values (defaults, samples, types, computed in order) and object values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from etikett_engine.cel import CelInvalid
from etikett_engine.render import VariablesInvalid, render, resolve_variables
from etikett_engine.render.values import display

from .samples import label, text

VARIABLES = [
    {"name": "lot", "required": True},
    {"name": "qty", "type": "integer", "default": 1},
    {"name": "item", "sample": "Widget"},
    {"name": "weight", "type": "number", "sample": 1.5},
    {"name": "fragile", "type": "boolean", "default": False},
]


def errors_of(raised: pytest.ExceptionInfo[VariablesInvalid]) -> dict[str, str]:
    error = raised.value
    assert (error.status, error.code) == (422, "label.variables_invalid")
    return {entry["variable"]: entry["message"] for entry in error.params["errors"]}


def test_provided_default_then_sample():
    document = label([], variables=VARIABLES)
    values = resolve_variables(document, {"lot": "L-7", "qty": "3"}, use_samples=True)
    assert values == {"lot": "L-7", "qty": 3, "item": "Widget", "weight": 1.5, "fragile": False}
    printed = resolve_variables(document, {"lot": "L-7"}, use_samples=False)
    assert printed == {"lot": "L-7", "qty": 1, "item": None, "weight": None, "fragile": False}


def test_a_preview_shows_the_sample_before_the_default_a_print_the_default():
    # As in the Vorlagen: an optional line whose default is empty, with a sample to show.
    document = label([], variables=[{"name": "hint", "default": "", "sample": "Zone Trocken"}])
    assert resolve_variables(document, {}, use_samples=True) == {"hint": "Zone Trocken"}
    assert resolve_variables(document, {}, use_samples=False) == {"hint": ""}
    assert resolve_variables(document, {"hint": "B"}, use_samples=True) == {"hint": "B"}


def test_every_bad_variable_is_named_at_once():
    document = label([], variables=VARIABLES)
    with pytest.raises(VariablesInvalid) as raised:
        resolve_variables(
            document, {"qty": "three", "fragile": "yes", "colour": "red"}, use_samples=True
        )
    errors = errors_of(raised)
    assert list(errors) == ["lot", "qty", "fragile", "colour"]
    assert errors["lot"] == "is required"
    assert "integer" in errors["qty"] and "true or false" in errors["fragile"]
    assert "not a variable" in errors["colour"]


def test_a_sample_satisfies_a_required_variable_only_in_previews():
    document = label([], variables=[{"name": "lot", "required": True, "sample": "L-1"}])
    assert resolve_variables(document, None, use_samples=True) == {"lot": "L-1"}
    with pytest.raises(VariablesInvalid):
        resolve_variables(document, None, use_samples=False)


def test_a_bad_default_is_reported_as_the_default():
    document = label([], variables=[{"name": "n", "type": "integer", "default": "x"}])
    with pytest.raises(VariablesInvalid) as raised:
        resolve_variables(document, {}, use_samples=False)
    assert errors_of(raised)["n"].startswith("default:")


def test_dates_are_typed():
    document = label([], variables=[{"name": "packed", "type": "date"}])
    values = resolve_variables(document, {"packed": "2026-11-22"}, use_samples=False)
    assert values["packed"] == datetime(2026, 11, 22, tzinfo=UTC)


COMPUTED = [
    # Declared before what it uses: evaluation follows the dependencies, not the list.
    {"name": "line", "expression": 'item + " x" + string(qty) + " = " + format_number(total, 2)'},
    {"name": "total", "type": "number", "expression": "double(qty) * price"},
    {"name": "item", "default": "Widget"},
    {"name": "qty", "type": "integer", "required": True},
    {"name": "price", "type": "number", "default": 2.5},
    {"name": "serial", "expression": 'pad(counters.serial, 6) + "/" + format_date(now, "%y%m%d")'},
]


def test_computed_variables_are_evaluated_in_dependency_order():
    document = label([], variables=COMPUTED)
    values = resolve_variables(
        document,
        {"qty": 3},
        use_samples=False,
        now=datetime(2026, 11, 22, 8, 0, tzinfo=UTC),
        counters={"serial": 42},
    )
    assert values["total"] == 7.5
    assert values["line"] == "Widget x3 = 7.50"
    assert values["serial"] == "000042/261122"


def test_a_computed_variable_cannot_be_provided():
    document = label([], variables=COMPUTED)
    with pytest.raises(VariablesInvalid) as raised:
        resolve_variables(
            document, {"qty": 1, "total": 9}, use_samples=False, counters={"serial": 1}
        )
    assert "computed" in errors_of(raised)["total"]


@pytest.mark.parametrize(
    ("variables", "cycle"),
    [
        (
            [{"name": "a", "expression": 'b + "!"'}, {"name": "b", "expression": 'a + "?"'}],
            "a → b → a",
        ),
        ([{"name": "a", "expression": "a + 1", "type": "integer"}], "a → a"),
        (
            [
                {"name": "a", "expression": "b"},
                {"name": "b", "expression": "c"},
                {"name": "c", "expression": "a"},
                {"name": "d", "expression": "a + 'x'"},
            ],
            "a → b → c → a",
        ),
    ],
)
def test_cycles_are_refused_with_the_path(variables, cycle):
    document = label([], variables=variables)
    with pytest.raises(VariablesInvalid) as raised:
        resolve_variables(document, {}, use_samples=False)
    assert cycle in errors_of(raised)["a"]


def test_names_inside_strings_and_fields_are_not_dependencies():
    document = label(
        [],
        variables=[
            {"name": "a", "expression": '"b is " + counters.b'},
            {"name": "b", "expression": 'a + "!"'},
        ],
    )
    values = resolve_variables(document, {}, use_samples=False, counters={"b": "x"})
    assert values == {"a": "b is x", "b": "b is x!"}


def test_a_failing_expression_names_its_variable_and_the_ones_that_depend_on_it():
    document = label(
        [],
        variables=[
            {"name": "n", "type": "integer", "default": 0},
            {"name": "ratio", "type": "integer", "expression": "10 / n"},
            {"name": "shown", "expression": "string(ratio)"},
            {"name": "kind", "type": "integer", "expression": '"text"'},
        ],
    )
    with pytest.raises(VariablesInvalid) as raised:
        resolve_variables(document, {}, use_samples=False)
    errors = errors_of(raised)
    assert set(errors) == {"ratio", "shown", "kind"}
    assert "ratio" in errors["shown"]
    assert "integer" in errors["kind"]


def test_objects_show_their_expression_over_the_values():
    variables = [
        {"name": "lot", "default": "L-42"},
        {"name": "qty", "type": "integer", "default": 7},
    ]
    expression = '"Lot " + lot + " / " + string(qty)'
    by_expression = label(
        [
            {
                "id": "t",
                "type": "text",
                "x_mm": 2,
                "y_mm": 2,
                "size_pt": 12,
                "expression": expression,
            }
        ],
        variables=variables,
    )
    literal = label([text("t", "Lot L-42 / 7", size_pt=12)], variables=variables)
    values = resolve_variables(by_expression, {}, use_samples=False)
    assert render(by_expression, values).tobytes() == render(literal, values).tobytes()


def test_a_failing_object_expression_names_the_object():
    document = label(
        [{"id": "bad", "type": "text", "x_mm": 1, "y_mm": 1, "expression": "nope + 1"}]
    )
    with pytest.raises(CelInvalid) as raised:
        render(document, {})
    assert raised.value.status == 422
    assert raised.value.params["object_id"] == "bad"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, ""),
        (True, "true"),
        (3, "3"),
        (2.0, "2"),
        (2.5, "2.5"),
        ("x", "x"),
        (datetime(2026, 1, 2, tzinfo=UTC), "2026-01-02T00:00:00+00:00"),
    ],
)
def test_values_are_displayed_as_cel_would_write_them(value, shown):
    assert display(value) == shown
