"""Preflight on documents: each finding where it belongs, nothing on a clean label, and the
preview's checked render is the very raster `render` draws."""

from __future__ import annotations

from typing import Any

import pytest

from etikett.domain.labels import preflight as version_preflight
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import LabelHasErrors
from etikett_engine.render import render, resolve_variables
from etikett_engine.render.preflight import preflight, render_checked

CODE128 = {
    "id": "code",
    "type": "barcode",
    "symbology": "code128",
    "x_mm": 10,
    "y_mm": 5,
    "height_mm": 10,
    "module_width_dots": 2,
    "content": "ABC-12345",
}


def _doc(*objects: dict[str, Any], variables: list[dict[str, Any]] | None = None, dpi: int = 203):
    return LabelDocument.model_validate(
        {
            "size": {"width_mm": 60, "height_mm": 30},
            "dpi": dpi,
            "variables": variables or [],
            "objects": list(objects),
        }
    )


def _codes(document: LabelDocument) -> set[tuple[str, str, str | None]]:
    return {(f.code, f.severity, f.object_id) for f in preflight(document)}


def test_a_clean_label_has_no_findings():
    assert preflight(_doc(CODE128)) == []


def test_objects_and_barcodes_past_the_edges():
    text = {"id": "t", "type": "text", "x_mm": 50, "y_mm": 2, "content": "far too long a line"}
    gone = {"id": "gone", "type": "box", "x_mm": 70, "y_mm": 2, "width_mm": 5, "height_mm": 5}
    late = {**CODE128, "x_mm": 40}
    found = preflight(_doc(text, gone, late))
    by_object = {f.object_id: f for f in found}
    assert by_object["t"].code == "label.object_outside" and by_object["t"].severity == "error"
    assert by_object["t"].params["edges"]["right"] > 0 and by_object["t"].path == "/objects/0"
    assert by_object["gone"].params["entirely"] is True
    assert "entirely outside" in by_object["gone"].message
    assert ("label.barcode_clipped", "error", "code") in _codes(_doc(late))


def test_quiet_zones_other_ink_is_an_error_the_edge_a_warning():
    rule = {"id": "rule", "type": "line", "x_mm": 8, "y_mm": 6, "length_mm": 2, "rotation": 90}
    assert ("label.barcode_quiet_zone", "error", "code") in _codes(_doc(CODE128, rule))
    edge = {**CODE128, "x_mm": 1}
    assert _codes(_doc(edge)) == {("label.barcode_quiet_zone", "warning", "code")}


def test_quiet_zones_turn_with_the_barcode():
    turned = {**CODE128, "x_mm": 20, "y_mm": 3, "rotation": 90, "content": "A1"}  # bars run down
    above = {"id": "above", "type": "line", "x_mm": 20, "y_mm": 1, "length_mm": 15}
    beside = {"id": "beside", "type": "line", "x_mm": 45, "y_mm": 3, "length_mm": 1}
    assert ("label.barcode_quiet_zone", "error", "code") in _codes(_doc(turned, above))
    assert _codes(_doc(turned, beside)) == set()


def test_modules_narrower_than_a_dot_and_single_dot_modules():
    narrow = {**CODE128, "module_width_dots": None, "module_width_mm": 0.05}
    narrow.pop("module_width_dots")
    assert ("label.module_too_narrow", "error", "code") in _codes(_doc(narrow))
    single = {**CODE128, "module_width_dots": 1}
    assert ("label.module_too_narrow", "warning", "code") in _codes(_doc(single))
    assert preflight(_doc({**single, "module_width_dots": 2})) == []


def test_text_that_does_not_fit_its_box():
    boxed = {
        "id": "t",
        "type": "text",
        "x_mm": 2,
        "y_mm": 2,
        "width_mm": 10,
        "content": "A wide text",
    }
    found = preflight(_doc(boxed))
    assert [(f.code, f.severity) for f in found] == [("label.text_overflow", "error")]
    assert found[0].params["width_dots"] > found[0].params["box_width_dots"]
    shrunk = {**boxed, "shrink_to_fit": True}
    assert preflight(_doc(shrunk)) == []
    cut = {**boxed, "width_mm": 50, "content": "one\ntwo\nthree", "max_lines": 2}
    assert preflight(_doc(cut))[0].params["max_lines"] == 2


def test_variables_unused_and_expressions_that_fail_with_the_samples():
    variables = [
        {"name": "used", "type": "string", "sample": "X1"},
        {"name": "spare", "type": "string", "sample": "x"},
        {"name": "no_sample", "type": "string", "required": True},
    ]
    from_var = {**CODE128, "content": None, "expression": "used"}
    from_missing = {
        **CODE128,
        "id": "other",
        "y_mm": 17,
        "content": None,
        "expression": "no_sample",
    }
    found = {
        (f.code, f.severity, f.path)
        for f in preflight(_doc(from_var, from_missing, variables=variables))
    }
    assert ("label.variable_unused", "warning", "/variables/1") in found
    assert ("label.sample_failed", "warning", "/objects/1") in found
    assert not any(
        code == "label.variable_unused" and path == "/variables/0" for code, _, path in found
    )


def test_literal_barcodes_that_cannot_encode_are_errors():
    bad = {**CODE128, "symbology": "ean13", "content": "12345"}
    found = preflight(_doc(bad))
    assert [(f.code, f.path) for f in found] == [("label.barcode_invalid", "/objects/0/content")]


def test_stored_versions_with_broken_expressions_are_reported_not_raised():
    """Versions saved before a rule tightened are reported on, never a 500."""
    valid = _doc({**CODE128, "content": None, "expression": "'x'"})
    barcode = valid.objects[0].model_copy(update={"expression": "undeclared_name + 1"})
    broken = valid.model_copy(update={"objects": [barcode]})
    found = {(f.code, f.path) for f in preflight(broken)}
    assert ("label.variable_undeclared", "/objects/0/expression") in found


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_render_checked_draws_exactly_what_render_draws(dpi: int):
    text = {"id": "t", "type": "text", "x_mm": 2, "y_mm": 18, "content": "Grüße", "rotation": 180}
    document = _doc(CODE128, text, dpi=dpi)
    values = resolve_variables(document, {}, use_samples=True)
    image, findings = render_checked(document, values)
    assert image.tobytes() == render(document, values).tobytes()
    assert findings == preflight(document)


def test_a_version_with_errors_is_refused_for_approval_and_print():
    late = _doc({**CODE128, "x_mm": 45})
    with pytest.raises(LabelHasErrors) as refused:
        version_preflight.ensure_no_errors("lbl_x", 7, late, doing="printed")
    assert refused.value.code == "label.has_errors" and refused.value.status == 422
    assert refused.value.params["findings"][0]["code"] == "label.barcode_clipped"
    assert version_preflight.ensure_no_errors("lbl_x", 8, _doc(CODE128), doing="printed") == []


def test_a_font_that_cannot_be_loaded_is_an_error_on_its_text():
    """A version stored with a family the renderer no longer ships (the schema admits only the
    shipped ones today) is reported, not drawn with a fallback nor raised."""
    valid = _doc(CODE128, {"id": "t", "type": "text", "x_mm": 2, "y_mm": 20, "content": "Hi"})
    text = valid.objects[1].model_copy(update={"font": "Helvetica Neue", "weight": 700})
    stored = valid.model_copy(update={"objects": [valid.objects[0], text]})
    found = preflight(stored)
    assert [(f.code, f.severity, f.object_id, f.path) for f in found] == [
        ("label.font_unknown", "error", "t", "/objects/1/font")
    ]
    assert found[0].params == {"font": "Helvetica Neue", "weight": 700}
    with pytest.raises(LabelHasErrors):
        version_preflight.ensure_no_errors("lbl_x", 3, stored, doing="approved")


def test_an_expression_that_does_not_compile_is_an_error_with_its_place():
    variables = [{"name": "lot", "type": "string", "sample": "L1"}]
    valid = _doc({**CODE128, "content": None, "expression": "lot"}, variables=variables)
    barcode = valid.objects[0].model_copy(update={"expression": "lot +\n  ("})
    stored = valid.model_copy(update={"objects": [barcode]})
    found = [f for f in preflight(stored) if f.code == "label.cel_invalid"]
    assert len(found) == 1
    assert (found[0].severity, found[0].object_id, found[0].path) == (
        "error",
        "code",
        "/objects/0/expression",
    )
    assert found[0].params["line"] == 2 and isinstance(found[0].params["column"], int)
    # and on a variable's own expression, with no object to name
    computed = valid.variables[0].model_copy(update={"expression": "upper("})
    stored = valid.model_copy(update={"variables": [computed]})
    assert ("label.cel_invalid", "error", None) in {
        (f.code, f.severity, f.object_id)
        for f in preflight(stored)
        if f.path == "/variables/0/expression"
    }
