"""A Vorlage on other stock (`on_stock`): `keep` leaves every object where it is in mm, so what
no longer fits is a finding; `scale` fits the whole layout to the stock, centred, and its barcodes
still scan to the same data; sizes in dots keep their length in mm at another density."""

from __future__ import annotations

import datetime as dt

import zxingcpp

from etikett.catalog.presets import get_preset
from etikett.catalog.vorlagen import get_vorlage, on_stock
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import render, resolve_variables
from etikett_engine.render.preflight import lay_out_for_design, preflight

NOW = dt.datetime(2025, 5, 20, 7, 30, tzinfo=dt.UTC)
OUTSIDE = {"label.object_outside", "label.barcode_clipped"}


def _vorlage(vorlage_id: str) -> dict:
    vorlage = get_vorlage(vorlage_id)
    assert vorlage is not None
    return vorlage.document


def _decoded(document: LabelDocument) -> list[str]:
    values = resolve_variables(document, {}, use_samples=True, now=NOW)
    return sorted(r.text for r in zxingcpp.read_barcodes(render(document, values, now=NOW)))


def test_keep_leaves_objects_in_place_and_findings_say_what_no_longer_fits() -> None:
    original = _vorlage("shipping-label")
    square = get_preset("zebra-4x4-203")
    assert square is not None
    placed = on_stock(original, square.width_mm, square.height_mm, square.dpi)
    assert placed["size"] == {"width_mm": 101.6, "height_mm": 101.6}
    assert [(o["x_mm"], o["y_mm"]) for o in placed["objects"]] == [
        (o["x_mm"], o["y_mm"]) for o in original["objects"]
    ]
    assert original["size"]["height_mm"] == 150  # the catalog's own document is untouched
    document = LabelDocument.model_validate(placed)
    laid_out = lay_out_for_design(document, now=NOW)
    # Every object that prints below the new stock's edge is reported (one with no ink is not).
    below = {item.obj.id for item in laid_out.placed if item.tight and item.tight[1] >= 812}
    assert below
    outside = {f.object_id for f in laid_out.findings if f.code in OUTSIDE}
    assert below <= outside


def test_scale_fits_the_layout_centred_and_its_barcodes_still_scan() -> None:
    original = _vorlage("shipping-label")
    placed = on_stock(original, 101.6, 101.6, 203, "scale")
    assert original["size"] == {"width_mm": 100, "height_mm": 150}
    factor = 101.6 / 150
    offset = (101.6 - 100 * factor) / 2
    first, scaled = original["objects"][0], placed["objects"][0]
    assert scaled["x_mm"] == round(first["x_mm"] * factor + offset, 3)
    assert scaled["y_mm"] == round(first["y_mm"] * factor, 3)
    document = LabelDocument.model_validate(placed)
    errors = [f for f in preflight(document, now=NOW) if f.severity == "error"]
    assert errors == []
    assert _decoded(document) == _decoded(LabelDocument.model_validate(original))


def test_sizes_in_dots_keep_their_length_at_another_density() -> None:
    original = _vorlage("shelf-label")
    ean = next(o for o in original["objects"] if o["id"] == "ean_barcode")
    assert ean["module_width_dots"] == 2
    at_300 = on_stock(original, 60, 40, 300)
    moved = next(o for o in at_300["objects"] if o["id"] == "ean_barcode")
    assert moved["module_width_dots"] == 3  # 2 dots at 203 dpi: 0.25 mm; 3 at 300: 0.254 mm
    assert (moved["x_mm"], moved["height_mm"]) == (ean["x_mm"], ean["height_mm"])
    halved = on_stock(original, 30, 20, 203, "scale")
    small = next(o for o in halved["objects"] if o["id"] == "ean_barcode")
    assert small["module_width_dots"] == 1  # rounded down: never wider than its scaled place
    assert small["height_mm"] == round(ean["height_mm"] / 2, 3)
