"""Barcode objects via zint: exact whole-dot modules, our own TrueType human-readable text.

zint encodes the data into its module matrix (`encoded_data`); we draw that matrix ourselves at an
integer number of dots per module, so every bar and space is exactly a multiple of the module
width. The object's box holds the symbol without quiet zones (leave them clear around it) and, for
linear codes with `human_readable`, the text centered under the bars. Module width: the object's
`module_width_dots`, else `module_width_mm` in whole dots (at least 1), else `DEFAULT_MODULE_MM`
for the symbology in whole dots. Bar height of linear codes: `height_dots`/`height_mm`, else
15 mm; PDF417 rows are `row_height_dots` high (else 3 modules), matrix codes square modules.
GS1 data is written in parentheses notation, `(01)09501101530003(17)270101`; bad GS1 check
digits and dates are errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from PIL import Image, ImageDraw

from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.errors import BarcodeInvalid, ensure_renderable
from etikett_engine.render.fonts import font
from etikett_engine.render.units import BLANK, INK, length_dots, pt_to_px

if TYPE_CHECKING:
    from zint import Symbol

    from etikett_engine.dsl.label import BarcodeObject, Symbology

Kind = Literal["linear", "stacked", "matrix"]

DEFAULT_MODULE_MM: dict[str, float] = {
    "code128": 0.25,
    "code39": 0.25,
    "ean13": 0.33,  # EAN/UPC nominal X
    "upca": 0.33,
    "gs1-128": 0.5,  # GS1 logistics labels: X 0.495-1.016 mm
    "itf14": 0.5,
    "qr": 0.5,
    "datamatrix": 0.5,
    "gs1-datamatrix": 0.5,
    "pdf417": 0.33,
}
DEFAULT_HEIGHT_MM = 15.0
HRT_FONT = "Roboto"
HRT_WEIGHT = 500
PDF417_ROW_MODULES = 3


@dataclass(frozen=True)
class Spec:
    zint_name: str
    kind: Kind
    gs1: bool = False
    text_mode: bool = False  # UNICODE input: Latin-1, the symbologies' default character set
    eci: bool = False  # beyond Latin-1, declare UTF-8 (ECI 26) so readers need not guess


SPECS: dict[str, Spec] = {
    "code128": Spec("CODE128", "linear", text_mode=True),
    "gs1-128": Spec("GS1_128", "linear", gs1=True),
    "ean13": Spec("EANX", "linear"),
    "upca": Spec("UPCA", "linear"),
    "code39": Spec("CODE39", "linear"),
    "itf14": Spec("ITF14", "linear"),
    "qr": Spec("QRCODE", "matrix", text_mode=True, eci=True),
    "datamatrix": Spec("DATAMATRIX", "matrix", text_mode=True, eci=True),
    "gs1-datamatrix": Spec("DATAMATRIX", "matrix", gs1=True),
    "pdf417": Spec("PDF417", "stacked", text_mode=True, eci=True),
}


def module_dots(obj: BarcodeObject, dpi: int) -> int:
    if obj.module_width_dots is not None:
        return obj.module_width_dots
    if obj.module_width_mm is not None:
        return length_dots(obj.module_width_mm, dpi)
    return length_dots(DEFAULT_MODULE_MM[obj.symbology], dpi)


def bar_height_dots(obj: BarcodeObject, dpi: int) -> int:
    if obj.height_dots is not None:
        return obj.height_dots
    return length_dots(obj.height_mm if obj.height_mm is not None else DEFAULT_HEIGHT_MM, dpi)


def render_barcode(obj: BarcodeObject, data: str, dpi: int) -> Image.Image:
    """The object's ink (mode "1", 255 = black dot), unrotated. Raises `BarcodeInvalid`."""
    module, height = module_dots(obj, dpi), bar_height_dots(obj, dpi)
    row = obj.row_height_dots or PDF417_ROW_MODULES * module
    key = (
        "barcode",
        obj.symbology,
        data,
        module,
        height,
        obj.human_readable,
        obj.text_size_pt,
        dpi,
        row,
        obj.code_set,
    )
    return INK_CACHE.get(
        key,
        lambda: _draw(
            obj.id,
            obj.symbology,
            data,
            (module, height, row),
            obj.human_readable,
            obj.text_size_pt,
            dpi,
            obj.code_set,
        ),
    )


def _draw(
    object_id: str,
    symbology: Symbology,
    data: str,
    sizes: tuple[int, int, int],  # module, bar height, PDF417 row height: dots
    human_readable: bool,
    text_pt: float,
    dpi: int,
    code_set: str | None = None,
) -> Image.Image:
    module, height, row = sizes
    spec = SPECS[symbology]
    symbol = _encode(object_id, symbology, spec, data, code_set)
    rows, columns = symbol.rows, symbol.width
    # zint's module matrix: fixed-width rows of bytes, the first module in the lowest bit.
    encoded = symbol.encoded_data
    row_bytes = encoded.shape[1] if encoded.shape else 0
    packed = encoded.tobytes()[: rows * row_bytes]
    matrix = Image.frombytes("1", (row_bytes * 8, rows), packed, "raw", "1;R")
    matrix = matrix.crop((0, 0, columns, rows))
    row_height = {"linear": height, "stacked": row, "matrix": module}[spec.kind]
    ensure_renderable(columns * module, rows * row_height, object_id)
    bars = matrix.resize((columns * module, rows * row_height), Image.Resampling.NEAREST)
    text = symbol.text if spec.kind == "linear" and human_readable else ""
    if not text:
        return bars
    return _with_text(bars, text, text_pt, dpi)


def _with_text(bars: Image.Image, text: str, text_pt: float, dpi: int) -> Image.Image:
    size_px = pt_to_px(text_pt, dpi)
    face = font(HRT_FONT, HRT_WEIGHT, size_px)
    one_bit = font(HRT_FONT, HRT_WEIGHT, size_px, one_bit=True)
    ascent, descent = face.getmetrics()
    left, _, right, _ = (int(v) for v in face.getbbox(text, anchor="ls"))
    text_w = right - min(0, left)
    gap = max(1, round(size_px * 0.15))
    width = max(bars.width, text_w)
    ink = Image.new("1", (width, bars.height + gap + ascent + descent), BLANK)
    ink.paste(bars, ((width - bars.width) // 2, 0))
    draw = ImageDraw.Draw(ink)
    draw.fontmode = "1"
    x = (width - text_w) // 2 - min(0, left)
    draw.text((x, bars.height + gap + ascent), text, font=one_bit, fill=INK, anchor="ls")
    return ink


def _encode(
    object_id: str, symbology: str, spec: Spec, data: str, code_set: str | None = None
) -> Symbol:
    # zint loads with the first barcode; its Symbology would shadow this module's own name.
    from zint import InputMode, Symbol, Symbology, WarningLevel

    data = _checked(object_id, symbology, data)
    symbol = Symbol()
    symbol.symbology = getattr(Symbology, spec.zint_name)
    symbol.warn_level = WarningLevel.FAIL_ALL  # GS1 check digits and dates: errors, not warnings
    encoded = data
    if spec.gs1:
        symbol.input_mode = InputMode.GS1 | InputMode.GS1PARENS
    elif spec.text_mode:
        symbol.input_mode = InputMode.UNICODE
        if spec.eci and not _latin1(data):
            symbol.eci = 26
        if code_set is not None:
            # zint's manual code set (`\^B…`); a backslash of the data is written doubled.
            symbol.input_mode = InputMode.UNICODE | InputMode.EXTRA_ESCAPE
            encoded = f"\\^{code_set}" + data.replace("\\", "\\\\")
            _fits_code_set(object_id, data, code_set)
    try:
        symbol.encode(encoded)
    except RuntimeError as exc:
        raise BarcodeInvalid(object_id, symbology, _zint_message(exc)) from exc
    return symbol


def _checked(object_id: str, symbology: str, data: str) -> str:
    """What zint would accept differently from the symbology's rules (or silently extend)."""
    if not data:
        raise BarcodeInvalid(object_id, symbology, "no data to encode")
    digits = {"ean13": (12, 13), "upca": (11, 12), "itf14": (13, 14)}.get(symbology)
    if digits is None:
        return data
    if not data.isascii() or not data.isdigit() or len(data) not in digits:
        raise BarcodeInvalid(
            object_id, symbology, f"takes {digits[0]} digits, or {digits[1]} with the check digit"
        )
    if symbology == "itf14" and len(data) == 14:
        expected = gs1_check_digit(data[:13])
        if data[13] != expected:
            raise BarcodeInvalid(
                object_id, symbology, f"invalid check digit {data[13]!r}, expecting {expected!r}"
            )
        return data[:13]
    return data


def _in_code_set(char: str, code_set: str) -> bool:
    if code_set == "C":
        return char.isascii() and char.isdigit()
    low, high = (0, 96) if code_set == "A" else (32, 128)
    return low <= ord(char) < high


def _fits_code_set(object_id: str, data: str, code_set: str) -> None:
    """zint leaves a manual code set where the data needs another; a printer told one set
    cannot, so a character outside it is an error of the label."""
    wrong = sorted({c for c in data if not _in_code_set(c, code_set)})
    if wrong or (code_set == "C" and len(data) % 2):
        reason = (
            f"code set {code_set} cannot encode {''.join(wrong)!r}"
            if wrong
            else "code set C encodes digits in pairs; the data has an odd number of digits"
        )
        raise BarcodeInvalid(object_id, "code128", reason)


def gs1_check_digit(digits: str) -> str:
    """GS1 mod-10: weights 3 and 1 alternating from the rightmost digit."""
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(digits)))
    return str((10 - total % 10) % 10)


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _zint_message(exc: RuntimeError) -> str:
    message = str(exc).strip()
    return message or "zint could not encode the data"
