"""The Vorlage matrix: every Vorlage on every media preset it fits, at 203, 300 and 600 dpi, passes
preflight with no error and prints barcodes that scan to their data.

A preset fits a Vorlage when each side is within 5 % of the Vorlage's (4 × 6 in and 100 × 150 mm
stock are used for the same labels); the Vorlage is laid out unchanged on the preset's size.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
import zxingcpp

from etikett.catalog.presets import PRESETS
from etikett.catalog.vorlagen import VORLAGEN, Vorlage
from etikett_engine import cel
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import render, resolve_variables
from etikett_engine.render.preflight import preflight

NOW = dt.datetime(2025, 5, 20, 7, 30, tzinfo=dt.UTC)
DENSITIES = (203, 300, 600)
SYMBOLOGY_IDS = {
    "code128": "]C0",
    "gs1-128": "]C1",
    "ean13": "]E0",
    "itf14": "]I1",
    "qr": "]Q1",
    "gs1-datamatrix": "]d2",
    "datamatrix": "]d1",
}


def _sizes(vorlage: Vorlage) -> list[tuple[float, float]]:
    own = vorlage.label().size
    sizes = {(own.width_mm, own.height_mm)}
    for preset in PRESETS:
        if (
            abs(preset.width_mm - own.width_mm) <= 0.05 * own.width_mm
            and abs(preset.height_mm - own.height_mm) <= 0.05 * own.height_mm
        ):
            sizes.add((preset.width_mm, preset.height_mm))
    return sorted(sizes)


CASES = [(v, size, dpi) for v in VORLAGEN for size in _sizes(v) for dpi in DENSITIES]
IDS = [f"{v.id}-{w:g}x{h:g}-{dpi}" for v, (w, h), dpi in CASES]


def _on(vorlage: Vorlage, size: tuple[float, float], dpi: int) -> LabelDocument:
    document = vorlage.label()
    on_stock = document.size.model_copy(update={"width_mm": size[0], "height_mm": size[1]})
    return document.model_copy(update={"dpi": dpi, "size": on_stock})


def test_the_matrix_covers_the_presets_that_fit():
    by_id = {v.id: _sizes(v) for v in VORLAGEN}
    assert (100.0, 150.0) in by_id["gs1-logistic-label"]  # the European parcel stock
    assert (101.6, 152.4) in by_id["shipping-label"]
    assert len(CASES) >= 3 * len(VORLAGEN)


@pytest.mark.parametrize(("vorlage", "size", "dpi"), CASES, ids=IDS)
def test_no_error_finding_and_every_barcode_scans(
    vorlage: Vorlage, size: tuple[float, float], dpi: int
):
    document = _on(vorlage, size, dpi)
    findings = preflight(document, now=NOW)
    errors = [f"{f.code} {f.object_id}: {f.message}" for f in findings if f.severity == "error"]
    assert errors == []

    values = resolve_variables(document, {}, use_samples=True, now=NOW)
    image = render(document, values, now=NOW)
    declared = {v.name: v.type for v in document.variables}
    expected = Counter(
        (
            SYMBOLOGY_IDS[obj.symbology],
            obj.content
            if obj.expression is None
            else cel.evaluate(obj.expression, values, declared, now=NOW),
        )
        for obj in document.objects
        if obj.type == "barcode"
    )
    decoded = Counter((r.symbology_identifier, r.text) for r in zxingcpp.read_barcodes(image))
    assert decoded == expected
