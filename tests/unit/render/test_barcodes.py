"""Every symbology: whole-dot modules, decoded back by zxing-cpp at 203, 300 and 600 dpi."""

from __future__ import annotations

import io

import pytest
import zxingcpp
from PIL import Image

from etikett_engine.render import BarcodeInvalid, render, to_png
from etikett_engine.render.barcode import DEFAULT_MODULE_MM, module_dots, render_barcode

from .samples import GS1_128, GS1_DM, barcode, label

F = zxingcpp.BarcodeFormat

# symbology, content, expected text, expected symbology identifier (None: any), format
CASES = [
    ("code128", "Etikett-123 äß", "Etikett-123 äß", "]C0", F.Code128),
    ("gs1-128", GS1_128, GS1_128, "]C1", F.Code128),
    (
        "gs1-128",
        "(01)09501101530003(17)270101(10)AB-12",
        "(01)09501101530003(17)270101(10)AB-12",
        "]C1",
        F.Code128,
    ),
    ("ean13", "400638133393", "4006381333931", "]E0", F.EAN13),
    ("ean13", "4006381333931", "4006381333931", "]E0", F.EAN13),
    ("upca", "03600029145", "0036000291452", None, F.UPCA),  # zxing: GTIN-13 text
    ("code39", "ABC-123", "ABC-123", "]A0", F.Code39),
    ("itf14", "1540014128876", "15400141288763", None, F.ITF),
    ("itf14", "15400141288763", "15400141288763", None, F.ITF),
    ("qr", "Grüße aus Köln: 12,50 € → https://etikett.example", None, None, F.QRCode),
    ("datamatrix", "Lot 42 / Größe M", "Lot 42 / Größe M", None, F.DataMatrix),
    ("gs1-datamatrix", GS1_DM, GS1_DM, "]d2", F.DataMatrix),
    ("pdf417", "PDF417: Straße 5, 12,50 €", "PDF417: Straße 5, 12,50 €", None, F.PDF417),
]


def _decode(png: bytes, fmt: zxingcpp.BarcodeFormat) -> list[zxingcpp.Barcode]:
    image = Image.open(io.BytesIO(png)).convert("L")
    return zxingcpp.read_barcodes(image, formats=fmt, try_rotate=False, try_invert=False)


@pytest.mark.parametrize("dpi", [203, 300, 600])
@pytest.mark.parametrize(
    ("symbology", "content", "expected", "identifier", "fmt"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_every_symbology_decodes_from_the_png(dpi, symbology, content, expected, identifier, fmt):
    document = label(
        [barcode("b", symbology, content, x_mm=6, y_mm=6, height_mm=12)],
        width_mm=150,
        height_mm=60,
        dpi=dpi,
    )
    found = _decode(to_png(render(document, {})), fmt)
    assert len(found) == 1, f"{symbology} at {dpi} dpi not decoded"
    assert found[0].text == (expected if expected is not None else content)
    if identifier is not None:
        assert found[0].symbology_identifier == identifier


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_gs1_symbols_carry_the_element_string(dpi):
    document = label(
        [
            barcode("a", "gs1-128", GS1_128, x_mm=6, y_mm=6, height_mm=10),
            barcode("b", "gs1-datamatrix", GS1_DM, x_mm=6, y_mm=30),
        ],
        width_mm=110,
        height_mm=60,
        dpi=dpi,
    )
    png = to_png(render(document, {}))
    image = Image.open(io.BytesIO(png)).convert("L")
    plain = {
        b.symbology_identifier: b.text
        for b in zxingcpp.read_barcodes(image, text_mode=zxingcpp.TextMode.Plain)
    }
    assert plain["]C1"] == "00340123450000000000"
    # FNC1 separates the variable-length (10) from nothing after it; (17) is fixed length.
    assert plain["]d2"] == "010950110153000317270101" + "10AB12"


@pytest.mark.parametrize("module", [1, 2, 3, 5])
def test_bars_are_whole_multiples_of_the_module(module):
    obj = label(
        [
            barcode(
                "b",
                "code128",
                "WHOLE-DOTS",
                module_width_dots=module,
                human_readable=False,
                height_dots=7,
            )
        ]
    ).objects[0]
    ink = render_barcode(obj, "WHOLE-DOTS", 203)  # type: ignore[arg-type]
    row = [ink.getpixel((x, 3)) for x in range(ink.width)]
    runs, current, length = [], row[0], 0
    for value in row:
        if value == current:
            length += 1
        else:
            runs.append(length)
            current, length = value, 1
    runs.append(length)
    assert ink.height == 7
    assert all(run % module == 0 for run in runs)
    assert min(runs) == module


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_default_module_sizes_are_whole_dots(dpi):
    for symbology, mm in DEFAULT_MODULE_MM.items():
        obj = label([barcode("b", symbology, "1")]).objects[0]
        assert module_dots(obj, dpi) == max(1, round(mm / 25.4 * dpi))  # type: ignore[arg-type]
    dm = label([barcode("b", "gs1-datamatrix", GS1_DM)], dpi=dpi)
    ink = render_barcode(dm.objects[0], GS1_DM, dpi)  # type: ignore[arg-type]
    assert ink.width % module_dots(dm.objects[0], dpi) == 0  # type: ignore[arg-type]


def test_module_width_in_mm_becomes_whole_dots():
    obj = label([barcode("b", "qr", "x", module_width_mm=0.6)], dpi=300).objects[0]
    assert module_dots(obj, 300) == 7  # type: ignore[arg-type]  # 0.6 mm = 7.09 dots
    tiny = label([barcode("b", "qr", "x", module_width_mm=0.01)], dpi=203).objects[0]
    assert module_dots(tiny, 203) == 1  # type: ignore[arg-type]


def test_human_readable_text_sits_under_linear_codes_only():
    with_text = label([barcode("b", "code128", "HRT-1", height_mm=10)]).objects[0]
    without = label([barcode("b", "code128", "HRT-1", height_mm=10, human_readable=False)]).objects[
        0
    ]
    qr = label([barcode("b", "qr", "HRT-1")]).objects[0]
    bars = render_barcode(without, "HRT-1", 203)  # type: ignore[arg-type]
    both = render_barcode(with_text, "HRT-1", 203)  # type: ignore[arg-type]
    assert bars.height == round(10 / 25.4 * 203)
    assert both.height > bars.height
    assert both.crop((0, bars.height + 1, both.width, both.height)).getbbox() is not None
    square = render_barcode(qr, "HRT-1", 203)  # type: ignore[arg-type]
    assert square.width == square.height


@pytest.mark.parametrize(
    ("symbology", "content", "message"),
    [
        ("gs1-128", "(00)340123450000000001", "checksum"),
        ("gs1-128", "(01)09501101530003(17)251399", "month"),
        ("gs1-128", "0109501101530003", "AI"),
        ("gs1-datamatrix", "(01)09501101530004", "checksum"),
        ("ean13", "4006381333932", "check digit"),
        ("ean13", "40063813339", "12 digits"),
        ("ean13", "40063813339A", "12 digits"),
        ("upca", "036000291453", "check digit"),
        ("itf14", "15400141288761", "check digit"),
        ("code128", "12,50 €", "8859-1"),
        ("code39", "straße", "Invalid character"),
        ("qr", "x" * 8000, "too long"),
        ("pdf417", "", "no data"),
    ],
)
def test_invalid_data_is_a_422_naming_the_object(symbology, content, message):
    document = label([barcode("bad-one", symbology, content)])
    with pytest.raises(BarcodeInvalid) as raised:
        render(document, {})
    error = raised.value
    assert (error.status, error.code) == (422, "label.barcode_invalid")
    assert error.params["object_id"] == "bad-one"
    assert error.params["symbology"] == symbology
    assert message.lower() in error.params["message"].lower()
