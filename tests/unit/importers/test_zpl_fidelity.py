"""ZPL import prints what the printer prints: Code 128 code sets as the printer chooses them, PDF417
rows and ^FO QR codes where the firmware puts them, font sizes, reverse fields, graphics and stored
formats of the same file, check digits. Each test measures the preview's dots or decodes them."""

from __future__ import annotations

from typing import Any

import pytest
import zxingcpp
from PIL import Image

from etikett.importers.conversion import Conversion
from etikett.importers.formats import convert
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import render, resolve_variables
from etikett_engine.render.errors import BarcodeInvalid

LIMIT = 8 * 1024 * 1024


def _convert(zpl: str) -> Conversion:
    return convert("test.zpl", zpl.encode("utf-8"), dpi=203, max_expanded=LIMIT)


def _preview(conversion: Conversion, index: int = 0) -> Image.Image:
    document = LabelDocument.model_validate(conversion.labels[index].document)
    return render(document, resolve_variables(document, {}, use_samples=True))


def _ink(image: Image.Image) -> tuple[int, int, int, int]:
    box = Image.eval(image.convert("L"), lambda v: 255 - v).getbbox()
    assert box is not None, "nothing printed"
    return box


def _barcodes(image: Image.Image) -> list[Any]:
    return list(zxingcpp.read_barcodes(image.convert("L")))


def _objects(conversion: Conversion, kind: str) -> list[dict[str, Any]]:
    return [o for o in conversion.labels[0].document["objects"] if o["type"] == kind]


def _warnings(conversion: Conversion) -> list[str]:
    return [n.message for n in conversion.report if n.severity == "warning"]


# Code 128 modules: start, one symbol per character (per digit pair in C), check, stop (13).
def _modules(symbols: int) -> int:
    return 11 * (symbols + 2) + 13


@pytest.mark.parametrize(
    ("data", "mode", "symbols"),
    [
        ("1234567890123", "", 13),  # mode N without a start code: subset B, one digit a symbol
        (">;123456789012", "", 6),  # start C: digit pairs
        (">:ABC", "", 3),  # start B named
        ("1234567890123", ",A", 8),  # automatic mode: the shortest encoding (B 1, C 6 + switch)
    ],
)
def test_code128_is_as_wide_as_the_printer_encodes_it(data: str, mode: str, symbols: int):
    conversion = _convert(f"^XA^PW1200^FO40,40^BY2^BCN,80,N,N,N{mode}^FD{data}^FS^XZ")
    left, _, right, _ = _ink(_preview(conversion))
    assert right - left == 2 * _modules(symbols)
    [read] = _barcodes(_preview(conversion))
    assert read.text == data.removeprefix(">;").removeprefix(">:")


def test_code128_data_that_switches_sets_itself_says_when_the_printer_is_wider():
    # B for "AB", C for 4 digits written as 2 separate switches: the printer spends one symbol
    # on each switch and B digits, which the shortest encoding does not.
    conversion = _convert("^XA^PW1200^FO40,40^BY2^BCN,80,N,N,N^FD>:AB12>534>612^FS^XZ")
    [warning] = [w for w in _warnings(conversion) if "switches code sets" in w]
    assert f"{_modules(2 + 2 + 1 + 1 + 1 + 2)} modules" in warning
    [read] = _barcodes(_preview(conversion))
    assert read.text == "AB123412"


def test_a_code_set_the_data_does_not_fit_is_a_barcode_error():
    from etikett_engine.render.barcode import render_barcode

    document = {
        "type": "barcode",
        "id": "b",
        "x_mm": 0,
        "y_mm": 0,
        "symbology": "code128",
        "content": "12345",
        "code_set": "C",
    }
    obj = LabelDocument.model_validate(
        {"size": {"width_mm": 50, "height_mm": 20}, "objects": [document]}
    ).objects[0]
    with pytest.raises(BarcodeInvalid, match="odd number of digits"):
        render_barcode(obj, "12345", 203)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="code128"):
        LabelDocument.model_validate(
            {
                "size": {"width_mm": 50, "height_mm": 20},
                "objects": [{**document, "symbology": "qr"}],
            }
        )


def test_a_stored_format_takes_its_code_set_from_the_recalled_data():
    conversion = _convert(
        '^XA^DFR:ITEM.ZPL^FS^PW800^LL300^FO40,40^BY2^BCN,80,N,N,N^FN1"Item"^FS^XZ'
        "^XA^XFR:ITEM.ZPL^FS^FN1^FD>;99600123456789^FS^XZ"
    )
    [barcode] = _objects(conversion, "barcode")
    assert barcode["code_set"] == "C"
    variables = conversion.labels[0].document["variables"]
    assert [v["sample"] for v in variables] == ["99600123456789"]
    left, _, right, _ = _ink(_preview(conversion))
    assert right - left == 2 * _modules(7)


def test_pdf417_rows_are_h_times_the_module_high():
    # ^B7 h is a multiple of the module (ZPL guide): 4 × 3 dots a row, not 4 dots.
    tall = _convert("^XA^PW800^LL400^FO20,20^BY3^B7N,4,5,,,N^FDPDF417 ROW HEIGHT^FS^XZ")
    short = _convert("^XA^PW800^LL400^FO20,20^BY1^B7N,4,5,,,N^FDPDF417 ROW HEIGHT^FS^XZ")
    assert _objects(tall, "barcode")[0]["row_height_dots"] == 12
    assert _objects(short, "barcode")[0]["row_height_dots"] == 4
    assert _barcodes(_preview(tall))[0].text == "PDF417 ROW HEIGHT"


def test_pdf417_without_h_shares_the_by_height_among_its_rows():
    conversion = _convert("^XA^PW800^LL400^FO20,20^BY2,3,120^B7N,,5,,,N^FDSHARED^FS^XZ")
    [barcode] = _objects(conversion, "barcode")
    _, top, _, bottom = _ink(_preview(conversion))
    assert 100 <= bottom - top <= 120
    assert (bottom - top) % barcode["row_height_dots"] == 0


def test_an_fo_qr_code_sinks_by_the_by_height_as_the_firmware_prints_it():
    default = _convert("^XA^PW400^LL400^FO100,100^BQN,2,5^FDMA,TEST^FS^XZ")
    high = _convert("^XA^PW400^LL400^BY2,3,100^FO100,100^BQN,2,5^FDMA,TEST^FS^XZ")
    assert _ink(_preview(default))[:2] == (100, 110)
    assert _ink(_preview(high))[:2] == (100, 200)
    typeset = _convert("^XA^PW400^LL400^BY2,3,100^FT100,300^BQN,2,5^FDMA,TEST^FS^XZ")
    assert _ink(_preview(typeset))[3] == 300  # ^FT: the bottom of the symbol, no sinking


def test_font_sizes_as_the_printer_sizes_them():
    # ^A0 with the height omitted takes the width; bitmap font D at 0,0 prints its 18-dot cell.
    scalable = _convert("^XA^PW400^LL200^FO20,20^A0N,,41^FDHHHH^FS^XZ")
    bitmap = _convert("^XA^PW400^LL200^FO20,20^ADN,0,0^FDHHHH^FS^XZ")
    _, top, _, bottom = _ink(_preview(scalable))
    assert 26 <= bottom - top <= 32  # a capital H of a 41-dot em
    _, top, _, bottom = _ink(_preview(bitmap))
    assert 10 <= bottom - top <= 14  # capitals of font D's 18 × 10 cell
    left, _, right, _ = _ink(_preview(bitmap))
    assert 44 <= right - left <= 47  # four 10-dot cells 2 dots apart, as font D advances


def test_reverse_text_on_a_black_box_prints_white():
    conversion = _convert(
        "^XA^PW400^LL200^FO10,10^GB300,100,100^FS^FO30,30^A0N,60,60^FR^FDWHITE^FS^XZ"
    )
    image = _preview(conversion).convert("L")
    box = image.crop((30, 30, 200, 90))
    white = sum(1 for v in box.tobytes() if v)
    assert white > 500  # the letters are cut out of the black box


def test_a_graphic_the_file_stores_is_recalled():
    conversion = _convert(
        "~DGR:BOX.GRF,32,4,FFFFFFFF"
        + "FFFFFFFF" * 7
        + "\n^XA^PW200^LL200^FO50,60^XGR:BOX.GRF,2,2^FS^XZ"
    )
    assert not [w for w in _warnings(conversion) if "BOX.GRF" in w]
    assert _ink(_preview(conversion)) == (50, 60, 50 + 64, 60 + 16)


def test_ean_and_gs1_check_digits_are_recomputed_with_a_warning():
    conversion = _convert(
        "^XA^PW800^LL400^FO40,40^BY2^BEN,80,Y,N^FD4006381333932^FS"
        "^FO40,200^BY2^BCN,80,Y,N,N,D^FD(01)09501101530004(10)A1^FS^XZ"
    )
    warnings = " ".join(_warnings(conversion))
    assert "check digit 2 is wrong; 1 is printed" in warnings
    assert "GS1 (01) check digit 4 is wrong; 3 is printed" in warnings
    texts = {r.text for r in _barcodes(_preview(conversion))}
    assert "4006381333931" in texts
    assert "(01)09501101530003(10)A1" in texts


def test_code39_mod43_check_character_is_printed_as_the_printer_does():
    conversion = _convert("^XA^PW800^LL200^FO20,20^BY2^B3N,Y,80,N,N^FDROT270^FS^XZ")
    assert [r.text for r in _barcodes(_preview(conversion))] == ["ROT2703"]


def test_qr_data_without_its_switches_loses_three_characters_as_on_the_printer():
    conversion = _convert("^XA^PW400^LL400^FO20,20^BQN,2,4^FDNameLotPrep^FS^XZ")
    assert [r.text for r in _barcodes(_preview(conversion))] == ["eLotPrep"]
    assert any("without its switches" in w for w in _warnings(conversion))


def test_an_empty_file_is_refused_as_empty():
    from etikett_engine.errors import EtikettError

    with pytest.raises(EtikettError) as refused:
        _convert("  \n")
    assert refused.value.code == "import.empty"


def test_a_cf_bitmap_font_with_its_height_alone_is_magnified_alike():
    # ^CFA,30: font A's 9 × 5 cell three times, 27 × 15 dots (with 3-dot gaps, 18 a character),
    # as Labelary draws its own example label; not 30 dots wide.
    conversion = _convert("^XA^PW800^LL200^CFA,30^FO20,20^FDHHHHHHHHHH^FS^XZ")
    left, top, right, bottom = _ink(_preview(conversion))
    assert 170 <= right - left <= 185  # ten characters 18 dots apart, the last without its gap
    assert 18 <= bottom - top <= 22  # capitals of a 27-dot cell
