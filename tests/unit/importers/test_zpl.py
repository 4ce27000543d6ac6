"""ZPL II import: hand-written formats and our own printer jobs come back as label documents that
render to the same dots (within one) and the same barcodes, with a report of what was not kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import zxingcpp
from PIL import Image

from etikett.catalog.vorlagen import get_vorlage, sample_values
from etikett.importers.conversion import Conversion
from etikett.importers.formats import convert
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import encode_zpl, render, resolve_variables
from etikett_engine.render.preflight import preflight

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
LIMIT = 8 * 1024 * 1024


def _convert(zpl: str | bytes, dpi: int = 203, name: str = "test.zpl") -> Conversion:
    data = zpl.encode("utf-8") if isinstance(zpl, str) else zpl
    return convert(name, data, dpi=dpi, max_expanded=LIMIT)


def _render(document: dict[str, Any], **values: Any) -> Image.Image:
    parsed = LabelDocument.model_validate(document)
    return render(parsed, resolve_variables(parsed, values, use_samples=True))


def _ink(image: Image.Image, box: tuple[int, int, int, int]) -> tuple[int, int, int, int] | None:
    """Where black dots lie inside the region (label coordinates)."""
    found = Image.eval(image.crop(box), lambda v: 255 - v).getbbox()
    return (
        None
        if found is None
        else (box[0] + found[0], box[1] + found[1], box[0] + found[2], box[1] + found[3])
    )


def _near(actual: tuple[int, ...] | None, expected: tuple[int, ...]) -> bool:
    return actual is not None and all(
        abs(a - e) <= 1 for a, e in zip(actual, expected, strict=True)
    )


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_shapes_land_on_the_same_dots(dpi: int):
    zpl = (
        "^XA^PW800^LL600^LH10,20"
        "^FO100,50^GB200,80,4^FS"  # a frame: 200 x 80 dots from (110, 70)
        "^FO100,200^GB300,6,6^FS"  # a horizontal rule
        "^FO500,50^GB8,300,8^FS"  # a vertical rule
        "^FO600,400^GB60,60,30^FS"  # a filled square
        "^FO100,300^GE120,60,3^FS"  # an ellipse
        "^FO300,300^GC80,4^FS"  # a circle
        "^XZ"
    )
    conversion = _convert(zpl, dpi)
    document = conversion.labels[0].document
    image = _render(document)
    assert image.size == (800, 600)
    expected = {
        (110, 70, 310, 150): "box",
        (110, 220, 410, 226): "line",
        (510, 70, 518, 370): "line",
        (610, 420, 670, 480): "box",
        (110, 320, 230, 380): "ellipse",
        (310, 320, 390, 400): "ellipse",
    }
    for box in expected:
        assert _near(_ink(image, (box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3)), box), box
    types = [obj["type"] for obj in document["objects"]]
    assert types == ["box", "line", "line", "box", "ellipse", "ellipse"]
    assert document["objects"][3]["fill"] is True
    assert conversion.report == []


def test_every_barcode_scans_to_its_data():
    conversion = _convert((FIXTURES / "barcodes.zpl").read_bytes())
    document = conversion.labels[0].document
    parsed = LabelDocument.model_validate(document)
    assert [f for f in preflight(parsed) if f.severity == "error"] == []
    decoded = {(r.symbology_identifier, r.text) for r in zxingcpp.read_barcodes(_render(document))}
    assert decoded == {
        ("]C0", "ETIKETT-4711"),
        ("]C1", "(01)04012345000016(10)LOT-42"),  # FNC1 invocation >8 → GS1-128
        ("]C1", "(00)340123451234567895"),  # mode D
        ("]E0", "4006381333931"),
        ("]E0", "0012345678905"),  # UPC-A reads as EAN-13 with a leading 0
        ("]A0", "CODE39-OK"),
        ("]I1", "14012345000020"),
        ("]Q1", "https://example.com/asset/4711"),
        ("]d2", "(01)04012345000016(10)LOT-42"),  # ^BX with _1 (FNC1) → GS1 DataMatrix
        ("]d1", "DataMatrix text"),
        ("]L2", "PDF417 imported from ZPL"),
    }
    barcodes = {obj["content"]: obj for obj in document["objects"]}
    assert barcodes["ETIKETT-4711"]["module_width_dots"] == 2  # ^BY2
    assert barcodes["ETIKETT-4711"]["height_dots"] == 80
    assert barcodes["https://example.com/asset/4711"]["module_width_dots"] == 6  # ^BQ magnification


def test_barcode_origins_are_the_field_origins():
    zpl = "^XA^PW600^LL400^BY3^FO50,40^BCN,100,N^FDABC123^FS^FT50,300^BCN,100,N^FDXYZ987^FS^XZ"
    image = _render(_convert(zpl).labels[0].document)
    top = _ink(image, (0, 0, 600, 200))
    assert top is not None and (top[0], top[1], top[3]) == (50, 40, 140)  # ^FO: top-left
    bottom = _ink(image, (0, 150, 600, 400))
    assert bottom is not None and (bottom[0], bottom[3]) == (50, 300)  # ^FT: bottom-left


def test_fields_become_variables_and_text_keeps_its_place():
    zpl = (
        "^XA^PW812^LL400^CI28"
        '^FO20,20^A0N,40,40^FN1"Customer name"^FDErika Musterfrau^FS'
        "^FO20,80^A0N,30,30^FH^FDStra_C3_9Fe^FS"
        "^FO20,140^A0N,30,30^FN2^FS"
        "^FT20,300^A0N,40,40^FDBaseline^FS"
        "^XZ"
    )
    document = _convert(zpl).labels[0].document
    variables = {v["name"]: v for v in document["variables"]}
    assert variables["customer_name"]["sample"] == "Erika Musterfrau"
    assert variables["field_2"]["sample"] == "field 2"
    texts = [obj for obj in document["objects"] if obj["type"] == "text"]
    assert texts[0]["expression"] == "customer_name"
    assert texts[1]["content"] == "Straße"  # ^FH hex escapes of UTF-8 (^CI28)
    assert texts[0]["font"] == "Roboto Condensed" and texts[0]["size_pt"] == pytest.approx(
        40 * 72 / 203, abs=0.01
    )
    image = _render(document, customer_name="Max")
    first = _ink(image, (0, 0, 812, 70))
    assert first is not None and abs(first[0] - 20) <= 3 and 20 <= first[1] <= 32
    baseline = _ink(image, (0, 240, 812, 330))
    assert baseline is not None and abs(baseline[3] - 300) <= 1  # letters sit on the ^FT baseline


def test_rotation_blocks_and_shifts():
    zpl = (
        "^XA^PW600^LL600^LS-10^FWR"
        "^FO100,100^A0,30,30^FDTurned^FS"
        "^FO300,100^A0N,24,24^FB200,2,0,C^FDOne\\&Two\\&Three^FS"
        "^FO300,400^A0B,24,24^FDUp^FS"
        "^XZ"
    )
    conversion = _convert(zpl)
    texts = conversion.labels[0].document["objects"]
    assert texts[0]["rotation"] == 90 and texts[0]["x_mm"] == pytest.approx(
        110 * 25.4 / 203, abs=1e-3
    )
    assert texts[1]["align"] == "center" and texts[1]["max_lines"] == 2 and texts[1]["wrap"] is True
    assert texts[1]["content"] == "One\nTwo\nThree"
    assert texts[2]["rotation"] == 270
    findings = preflight(LabelDocument.model_validate(conversion.labels[0].document))
    assert any(f.code == "label.text_overflow" and f.object_id == texts[1]["id"] for f in findings)


def test_several_formats_become_several_labels_with_their_names():
    zpl = (
        "^XA^DFR:SHIPPING.ZPL^FS^PW400^LL200^FO10,10^GB100,100,2^FS^XZ\n"
        "^XA^PW400^LL200^FO10,10^A0N,20,20^FDSecond^FS^XZ\n"
        "^XA^PW400^LL200^FO10,10^A0N,20,20^FDThird^FS^XZ\n"
    )
    conversion = _convert(zpl, name="labels.zpl")
    assert [label.name for label in conversion.labels] == ["SHIPPING", "labels (2)", "labels (3)"]


def test_what_cannot_be_mapped_is_reported_with_its_line():
    zpl = (
        "~SD20\n"
        "^XA\n"
        "^PW400^LL300\n"
        "^FO10,10^A0N,30,30^FR^FDReverse^FS\n"
        "^FO10,60^ADN,18,10^FDBitmap font^FS\n"
        "^FO10,100^GB100,50,2,W^FS\n"
        "^FO10,160^B2N,50,Y,N,N^FD12345^FS\n"
        "^ZZ\n"
        "^PQ2\n"
        "^XZ\n"
    )
    report = [(n.line, n.severity, n.message) for n in _convert(zpl).report]
    assert (1, "info", "~SD (darkness) is a printer setting, not part of a label.") in report
    lines = {line: message for line, _, message in report}
    assert 4 not in lines and 6 not in lines  # ^FR reverses the field, ^GB…W clears: both kept
    assert "Roboto Mono" in lines[5]
    assert "Interleaved 2 of 5" in lines[7]
    assert "^ZZ is not supported" in lines[8]
    assert "print quantity" in lines[9]


@pytest.mark.parametrize("compression", ["z64", "acs", "hex"])
def test_our_own_printer_job_imports_to_the_same_raster(compression: str):
    vorlage = get_vorlage("shipping-label")
    assert vorlage is not None
    document = vorlage.label()
    raster = render(document, resolve_variables(document, sample_values(vorlage), use_samples=True))
    job = encode_zpl(raster, compression=compression)
    conversion = _convert(job, dpi=document.dpi)
    imported = conversion.labels[0].document
    assert [obj["type"] for obj in imported["objects"]] == ["image"]
    again = _render(imported)
    assert again.size == raster.size
    assert again.tobytes() == raster.tobytes()  # dot for dot
    assert [n.message for n in conversion.report if n.severity == "warning"] == []


def test_a_diagonal_is_drawn_dot_for_dot():
    document = _convert("^XA^PW300^LL300^FO50,50^GD100,100,4,B,L^FS^XZ").labels[0].document
    image = _render(document)
    assert _near(_ink(image, (0, 0, 300, 300)), (50, 50, 150, 150))
    assert image.getpixel((52, 51)) == 0 and image.getpixel((147, 148)) == 0  # ends of the "\\"
    assert image.getpixel((147, 52)) == 255


def test_report_entries_name_the_label_they_concern():
    zpl = (
        "^XA^FXnothing here^XZ\n"
        "^XA^PW400^LL200^FO10,10^A@N,20,20,E:ARIAL.TTF^FDFirst^FS^XZ\n"
        "^XA^PW400^LL200^FO10,10^ADN,18,10^FDSecond^FS^XZ\n"
    )
    conversion = _convert(zpl)
    assert len(conversion.labels) == 2
    by_document = {(n.document, n.line): n.message for n in conversion.report}
    assert "skipped" in by_document[(None, 1)]
    assert "E:ARIAL.TTF" in by_document[(0, 2)]
    assert "Roboto Mono" in by_document[(1, 3)]


UNSUPPORTED_BARCODES = [
    ("BA", "Code 93", "^BAN,80,Y,N,N", "CODE93-4711"),
    ("B1", "Code 11", "^B1N,N,80,Y,N", "0123-4567"),
    ("BK", "Codabar", "^BKN,N,80,Y,N,A,A", "A40156B"),
    ("BB", "CODABLOCK", "^BBN,10,Y,,,F", "CODABLOCK DATA"),
    ("B0", "Aztec", "^B0N,6,N,0", "AZTEC-4711"),
]


@pytest.mark.parametrize(("command", "symbology", "zpl_command", "data"), UNSUPPORTED_BARCODES)
def test_a_barcode_the_label_model_lacks_is_dropped_with_a_warning_not_turned_into_text(
    command: str, symbology: str, zpl_command: str, data: str
):
    zpl = (
        "^XA\n"
        "^PW600^LL400\n"
        "^FO20,20^A0N,30,30^FDKept text^FS\n"
        f"^FO40,120{zpl_command}^FD{data}^FS\n"
        "^XZ\n"
    )
    conversion = _convert(zpl)
    objects = conversion.labels[0].document["objects"]
    assert [obj.get("content") for obj in objects] == ["Kept text"]  # no digits where bars were
    assert not any(data in str(obj) for obj in objects)
    dropped = [n for n in conversion.report if n.line == 4]
    assert len(dropped) == 1
    assert dropped[0].severity == "warning" and dropped[0].document == 0
    message = dropped[0].message
    assert f"^{command}" in message and symbology in message and data in message
    assert "(40, 120)" in message and "dropped" in message
    assert not any("ignored" in n.message for n in conversion.report)


def test_a_dropped_barcode_field_declares_no_variable_and_each_drop_is_reported():
    zpl = (
        "^XA^PW600^LL400\n"
        '^FO40,40^BAN,80,Y,N,N^FN3"Serial"^FDS-1^FS\n'
        '^FO40,200^BAN,80,Y,N,N^FN3"Serial"^FDS-1^FS\n'
        "^FO20,350^A0N,30,30^FDKept^FS^XZ\n"
    )
    conversion = _convert(zpl)
    document = conversion.labels[0].document
    assert document["variables"] == []
    drops = [n for n in conversion.report if "dropped" in n.message]
    assert [n.line for n in drops] == [2, 3]
    assert all("^FN3" in n.message for n in drops)


@pytest.mark.parametrize(
    ("command", "stored"),
    [
        ("^IMR:LOGO.GRF", "R:LOGO.GRF"),
        ("^XGE:SEAL.GRF,1,1", "E:SEAL.GRF"),
        ("^ILR:BASE.PNG", "R:BASE.PNG"),
    ],
)
def test_a_stored_image_is_a_warning_naming_the_image_not_a_printer_setting(
    command: str, stored: str
):
    zpl = f"^XA^PW400^LL300\n^FO10,10{command}^FS\n^FO10,200^A0N,30,30^FDText^FS^XZ\n"
    conversion = _convert(zpl)
    notes = [n for n in conversion.report if n.line == 2]
    assert len(notes) == 1
    assert notes[0].severity == "warning"
    assert stored in notes[0].message and "not imported" in notes[0].message
    assert "printer setting" not in notes[0].message


def test_default_fonts_named_fonts_and_field_variable_data():
    """^CF sets the font of fields without their own, ^A@ names a font we do not have (noted,
    Roboto at its height), ^FV carries field data as ^FD does."""
    conversion = _convert((FIXTURES / "fonts.zpl").read_bytes())
    document = conversion.labels[0].document
    texts = {obj.get("content") or obj.get("expression"): obj for obj in document["objects"]}
    assert list(texts) == [
        "Default from CF",
        "Named font",
        "Bitmap default",
        "Variable data",
        "batch",
    ]
    from_cf = texts["Default from CF"]
    assert (from_cf["font"], from_cf["weight"]) == ("Roboto Condensed", 700)
    assert from_cf["size_pt"] == pytest.approx(40 * 72 / 203, abs=0.01)
    named = texts["Named font"]
    assert (named["font"], named["weight"]) == ("Roboto", 500)
    assert named["size_pt"] == pytest.approx(30 * 72 / 203, abs=0.01)
    bitmap = texts["Bitmap default"]
    assert bitmap["font"] == "Roboto Mono"
    assert bitmap["size_pt"] == pytest.approx(18 * 72 / 203, abs=0.01)
    assert texts["Variable data"]["content"] == "Variable data"
    (batch,) = document["variables"]
    assert (batch["name"], batch["sample"]) == ("batch", "B-2024-07")
    by_line = {n.line: (n.severity, n.message) for n in conversion.report}
    assert by_line[7] == (
        "warning",
        "Font E:ARIAL.TTF is not available; Roboto is used at its size.",
    )
    assert by_line[9][0] == "info" and "Bitmap font D" in by_line[9][1]
    assert set(by_line) == {7, 9}
    parsed = LabelDocument.model_validate(document)
    assert [f for f in preflight(parsed) if f.severity == "error"] == []
    image = _render(document)
    for y in (20, 80, 140, 200, 260):  # each text's ink starts at its ^FO
        ink = _ink(image, (0, y - 5, 812, y + 45))
        assert ink is not None and abs(ink[0] - 20) <= 3 and y - 2 <= ink[1] <= y + 12, (y, ink)
