"""Vorlagen rendered with their samples: every barcode scans to its data, nothing collides.

Runs at the Vorlage's own density and at 300 dpi. The geometry checks work on each object's ink
(the dots it prints): everything inside the label, text and barcodes never touching other ink,
quiet zones beside linear codes (10 modules; EAN-13 11/7) and around 2D codes (QR 4, Data Matrix
2 modules) empty and on the label, and boxed text that fits its box at its design size.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

import pytest
import zxingcpp
from PIL import Image, ImageChops

from etikett.catalog.vorlagen import VORLAGEN, Vorlage, sample_values
from etikett_engine import cel
from etikett_engine import render as render_package
from etikett_engine.dsl.label import BarcodeObject, LabelDocument, LabelObject
from etikett_engine.render import raster

from . import gs1

NOW = dt.datetime(2025, 5, 20, 7, 30, tzinfo=dt.UTC)
CASES = [(v, dpi) for v in VORLAGEN for dpi in sorted({v.label().dpi, 300})]
CASE_IDS = [f"{v.id}-{dpi}" for v, dpi in CASES]
SYMBOLOGY_IDS = {  # ISO/IEC 15424 identifiers the scanner reports
    "code128": "]C0",
    "gs1-128": "]C1",
    "ean13": "]E0",
    "itf14": "]I1",
    "qr": "]Q1",
    "gs1-datamatrix": "]d2",
    "datamatrix": "]d1",
}
LINEAR_QUIET = {"ean13": (11, 7), "upca": (9, 9)}  # (left, right) modules; others 10 and 10
MATRIX_QUIET = {"qr": 4, "datamatrix": 2, "gs1-datamatrix": 2}
Box = tuple[int, int, int, int]  # left, top, right, bottom (exclusive), in dots


def _at(vorlage: Vorlage, dpi: int) -> LabelDocument:
    return vorlage.label().model_copy(update={"dpi": dpi})


def _values(document: LabelDocument, provided: dict[str, Any]) -> dict[str, Any]:
    return render_package.resolve_variables(document, provided, use_samples=False, now=NOW)


def _content(document: LabelDocument, obj: BarcodeObject, values: dict[str, Any]) -> str:
    declared = {variable.name: variable.type for variable in document.variables}
    if obj.expression is None:
        return obj.content or ""
    result = cel.evaluate(obj.expression, values, declared, now=NOW)
    assert isinstance(result, str), f"{obj.id}: {result!r}"
    return result


def _render(vorlage: Vorlage, dpi: int) -> tuple[LabelDocument, dict[str, Any], Any]:
    document = _at(vorlage, dpi)
    values = _values(document, sample_values(vorlage))
    image = render_package.render(document, values, now=NOW)
    return document, values, image


@pytest.mark.parametrize(("vorlage", "dpi"), CASES, ids=CASE_IDS)
def test_renders_with_its_samples_and_every_barcode_scans(vorlage: Vorlage, dpi: int):
    document, values, image = _render(vorlage, dpi)
    dots = (round(document.size.width_mm / 25.4 * dpi), round(document.size.height_mm / 25.4 * dpi))
    assert image.mode == "1" and image.size == dots

    expected: list[tuple[str, str]] = []
    for obj in document.objects:
        if obj.type == "barcode":
            expected.append((SYMBOLOGY_IDS[obj.symbology], _content(document, obj, values)))
    results = zxingcpp.read_barcodes(image.convert("L"))
    decoded = [(result.symbology_identifier, result.text) for result in results]
    assert Counter(decoded) == Counter(expected)

    plain = zxingcpp.read_barcodes(image.convert("L"), text_mode=zxingcpp.TextMode.Plain)
    transmitted = Counter((r.symbology_identifier, r.text) for r in plain)
    for identifier, content in expected:
        if identifier in ("]C1", "]d2"):
            assert gs1.problems(content) == [], content
            assert transmitted[(identifier, gs1.raw(content))] >= 1, content


def test_gs1_samples_are_valid_element_strings():
    """The computed GS1 data of the samples: check digits, dates, lengths by GS1's rules."""
    seen = 0
    for vorlage in VORLAGEN:
        document = vorlage.label()
        values = _values(document, sample_values(vorlage))
        for obj in document.objects:
            if obj.type == "barcode" and obj.symbology.startswith("gs1-"):
                content = _content(document, obj, values)
                assert gs1.problems(content) == [], f"{vorlage.id} {obj.id}: {content}"
                seen += 1
            if obj.type == "barcode" and obj.symbology in ("ean13", "itf14"):
                assert gs1.valid_check_digit(_content(document, obj, values)), obj.id
    assert seen >= 4


def test_the_computed_values_follow_the_domain_rules():
    gs1_label = next(v for v in VORLAGEN if v.id == "gs1-logistic-label")
    values = _values(gs1_label.label(), sample_values(gs1_label))
    assert values["sscc"] == "34012345123456789" + gs1.mod10("34012345123456789")
    assert values["best_before"] == dt.datetime(2025, 11, 10, tzinfo=dt.UTC)  # 14 May + 180 d

    product = next(v for v in VORLAGEN if v.id == "product-label-ean13")
    values = _values(product.label(), sample_values(product))
    assert values["gtin"] == "4012345000016"
    assert values["unit_price"] == "1 kg = 19.96 EUR"  # 4.99 EUR for 250 g

    location = next(v for v in VORLAGEN if v.id == "warehouse-location")
    assert _values(location.label(), sample_values(location))["location"] == "A-01-03-B"

    case = next(v for v in VORLAGEN if v.id == "case-label-itf14")
    values = _values(case.label(), sample_values(case))
    assert values["case_gtin"] == "14012345000020" and values["item_gtin"] == "4012345000023"


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=[v.id for v in VORLAGEN])
def test_renders_with_only_the_required_variables(vorlage: Vorlage):
    """Optional variables left out fall back to their defaults; nothing breaks."""
    document = vorlage.label()
    required = {v.name: v.sample for v in document.variables if v.required}
    values = _values(document, required)
    image = render_package.render(document, values, now=NOW)
    assert image.getbbox() is not None


# ------------------------------------------------------------------------------ geometry on ink


def _ink(document: LabelDocument, obj: LabelObject, values: dict[str, Any]) -> Image.Image:
    """The object's ink as placed: mode "1", 255 where it prints, rotated as on the label."""
    declared = {variable.name: variable.type for variable in document.variables}
    ink = raster.object_ink(obj, values, declared, document.dpi, now=NOW)
    turn = {
        90: Image.Transpose.ROTATE_270,
        180: Image.Transpose.ROTATE_180,
        270: Image.Transpose.ROTATE_90,
    }  # clockwise on the label
    return ink.transpose(turn[obj.rotation]) if obj.rotation else ink


def _place(document: LabelDocument, obj: LabelObject, ink: Image.Image) -> Box:
    left = round(obj.x_mm / 25.4 * document.dpi)
    top = round(obj.y_mm / 25.4 * document.dpi)
    return left, top, left + ink.size[0], top + ink.size[1]


def _inked(ink: Image.Image, box: Box, region: Box) -> Box | None:
    """Where the object prints inside the region (label coordinates), or None."""
    left, top = max(box[0], region[0]), max(box[1], region[1])
    right, bottom = min(box[2], region[2]), min(box[3], region[3])
    if left >= right or top >= bottom:
        return None
    found = ink.crop((left - box[0], top - box[1], right - box[0], bottom - box[1])).getbbox()
    if found is None:
        return None
    return left + found[0], top + found[1], left + found[2], top + found[3]


def _common(a: tuple[Image.Image, Box], b: tuple[Image.Image, Box]) -> Box | None:
    """Where two objects both print (label coordinates), or None."""
    (ink_a, box_a), (ink_b, box_b) = a, b
    left, top = max(box_a[0], box_b[0]), max(box_a[1], box_b[1])
    right, bottom = min(box_a[2], box_b[2]), min(box_a[3], box_b[3])
    if left >= right or top >= bottom:
        return None
    crop_a = ink_a.crop((left - box_a[0], top - box_a[1], right - box_a[0], bottom - box_a[1]))
    crop_b = ink_b.crop((left - box_b[0], top - box_b[1], right - box_b[0], bottom - box_b[1]))
    found = ImageChops.logical_and(crop_a, crop_b).getbbox()
    if found is None:
        return None
    return left + found[0], top + found[1], left + found[2], top + found[3]


def _quiet_zones(
    document: LabelDocument, obj: BarcodeObject, ink: Image.Image, box: Box
) -> list[Box]:
    module = obj.module_width_dots or 1
    if obj.symbology in MATRIX_QUIET:
        q = MATRIX_QUIET[obj.symbology] * module
        left, top, right, bottom = box
        return [
            (left - q, top - q, right + q, top),
            (left - q, bottom, right + q, bottom + q),
            (left - q, top, left, bottom),
            (right, top, right + q, bottom),
        ]
    # Linear: beside the bars, over the bars' height (the text under them may be wider).
    bars = ink.crop((0, 0, ink.size[0], 1)).getbbox()
    assert bars is not None, obj.id
    rows = round((obj.height_mm if obj.height_mm is not None else 15) / 25.4 * document.dpi)
    left_q, right_q = LINEAR_QUIET.get(obj.symbology, (10, 10))
    first, last, top = box[0] + bars[0], box[0] + bars[2], box[1]
    return [
        (first - left_q * module, top, first, top + rows),
        (last, top, last + right_q * module, top + rows),
    ]


def _bearer(a: LabelObject, b: LabelObject) -> bool:
    """ITF-14 bearer bars (a box named `<barcode>_bearer`) abut the bars by design."""
    return b.id == f"{a.id}_bearer" or a.id == f"{b.id}_bearer"


@pytest.mark.parametrize(("vorlage", "dpi"), CASES, ids=CASE_IDS)
def test_objects_stay_on_the_label_and_apart(vorlage: Vorlage, dpi: int):
    document = _at(vorlage, dpi)
    values = _values(document, sample_values(vorlage))
    label: Box = (
        0,
        0,
        round(document.size.width_mm / 25.4 * dpi),
        round(document.size.height_mm / 25.4 * dpi),
    )
    placed: list[tuple[LabelObject, Image.Image, Box]] = []
    zones: list[tuple[str, Box]] = []
    for obj in document.objects:
        ink = _ink(document, obj, values)
        box = _place(document, obj, ink)
        assert label[0] <= box[0] and label[1] <= box[1], f"{obj.id} starts off the label"
        assert box[2] <= label[2] and box[3] <= label[3], f"{obj.id} ends off the label: {box}"
        placed.append((obj, ink, box))
        if obj.type == "barcode":
            for zone in _quiet_zones(document, obj, ink, box):
                assert label[0] <= zone[0] and label[1] <= zone[1], f"{obj.id}: quiet zone off"
                assert zone[2] <= label[2] and zone[3] <= label[3], f"{obj.id}: quiet zone off"
                zones.append((obj.id, zone))

    for index, (a, ink_a, box_a) in enumerate(placed):
        for b, ink_b, box_b in placed[index + 1 :]:
            if "text" not in (a.type, b.type) and "barcode" not in (a.type, b.type):
                continue  # rules and frames may meet
            if _bearer(a, b):
                continue
            common = _common((ink_a, box_a), (ink_b, box_b))
            assert common is None, f"{a.id} and {b.id} both print at {common}"
    for owner, zone in zones:
        for obj, ink, box in placed:
            if obj.id == f"{owner}_bearer":  # abuts the bars: allow the rounding of one row
                zone = (zone[0], zone[1] + 1, zone[2], zone[3] - 1)
            if obj.id != owner:
                inked = _inked(ink, box, zone)
                assert inked is None, f"{obj.id} prints in the quiet zone of {owner}: {inked}"


@pytest.mark.parametrize(("vorlage", "dpi"), CASES, ids=CASE_IDS)
def test_boxed_text_fits_at_its_design_size(vorlage: Vorlage, dpi: int):
    """Text in a box without shrink_to_fit fits the box as designed (nothing clipped); text
    that may shrink needs no less than 75 % of its size for the samples."""
    document = _at(vorlage, dpi)
    values = _values(document, sample_values(vorlage))
    for obj in document.objects:
        if obj.type != "text" or obj.width_mm is None:
            continue
        box_w = round(obj.width_mm / 25.4 * dpi)
        box_h = round(obj.height_mm / 25.4 * dpi) if obj.height_mm is not None else None
        slack = 1 / 0.75 if obj.shrink_to_fit else 1.0
        if obj.wrap:
            free = obj.model_copy(
                update={"height_mm": None, "max_lines": None, "shrink_to_fit": False}
            )
            height = _ink(document, free, values).size[1]
            assert box_h is not None and height <= box_h * slack, f"{obj.id}: {height} > {box_h}"
            continue
        free = obj.model_copy(update={"width_mm": None, "height_mm": None, "shrink_to_fit": False})
        ink = _ink(document, free, values)
        assert ink.size[0] <= box_w * slack, f"{obj.id}: {ink.size[0]} dots wide, box {box_w}"
        if box_h is not None:
            assert ink.size[1] <= box_h * slack, f"{obj.id}: {ink.size[1]} high, box {box_h}"
