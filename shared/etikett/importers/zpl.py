"""ZPL II label formats (`^XA … ^XZ`) → label documents, one per format.

Positions and sizes are printer dots at the density the caller names (ZPL does not say it); they
become millimetres that the renderer turns back into exactly those dots. Covered: `^PW ^LL ^LH
^LS`, `^FO ^FT` (text baselines from the font's metrics), `^A0 ^A@ ^Ax ^CF`, `^FD ^FV ^FN` (a field
number becomes a variable whose sample is the field's data), `^FH` hex escapes, `^CI` encodings,
`^FR ^FW`, `^FB` blocks, `^GB ^GE ^GC ^GD`, `^GFA` (hex, ACS compression, `:Z64:`, `:B64:`) and the
barcodes `^BC ^BE ^BU ^B3 ^B2 ^BQ ^BX ^B7` with `^BY`, GS1 data included. Whatever cannot be
carried over exactly is a note in the report with its line; printer settings (`^PQ ~SD …`) are
noted as not part of a label.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from typing import Any

from etikett.dsl.label import MAX_MM, MIN_LABEL_MM
from etikett.errors import ProblemCode
from etikett.importers import (
    MAX_LABELS,
    MAX_OBJECTS,
    Conversion,
    Imported,
    Note,
    dots_to_mm,
    inflate,
    png,
    refuse,
)
from etikett.importers.gs1 import element_string

ROTATIONS = {"N": 0, "R": 90, "I": 180, "B": 270}
PRINTER_SETTINGS = {
    "PQ": "print quantity",
    "PR": "print speed",
    "MD": "darkness",
    "SD": "darkness",
    "MM": "print mode",
    "MN": "media tracking",
    "MT": "media type",
    "MF": "media feed",
    "PM": "mirror image",
    "JU": "configuration",
    "JZ": "reprint after error",
    "LT": "label top",
    "PF": "slew",
    "JM": "dots per millimetre",
    "JS": "backfeed",
    "TA": "tear-off",
    "PP": "programmable pause",
    "JB": "flash",
    "HS": "status",
    "HI": "host identification",
    "CC": "caret change",
    "CT": "tilde change",
    "CD": "delimiter change",
    "IM": "image move",
    "XB": "suppress backfeed",
    "FX": "comment",
}
BITMAP_FONTS = set("ABCDEFGHPQRSTUV")
_COMMAND = re.compile(rb"[\^~]")
_HEX = re.compile(r"[0-9A-Fa-f]{2}")
_ACS_COUNTS = {chr(ord("G") + i): i + 1 for i in range(19)} | {
    chr(ord("g") + i): 20 * (i + 1) for i in range(20)
}


@dataclass
class Token:
    prefix: str
    name: str  # two characters, upper case (`A0`, `FO`, `B3`, …)
    params: str  # the raw text after the name, as latin-1 (bytes kept one to one)
    line: int


@dataclass
class Field:
    x: int = 0
    y: int = 0
    typeset: bool = False  # ^FT: baseline / bottom origin
    font: tuple[str, int, int] | None = None  # name, height, width
    orientation: str | None = None
    hex_indicator: str | None = None
    block: tuple[int, int, int, str] | None = None  # width, lines, spacing, justification
    number: int | None = None
    number_name: str | None = None
    barcode: tuple[str, list[str], int] | None = None  # command, params, line
    data: str | None = None
    reverse: bool = False
    line: int = 0


@dataclass
class Format:
    index: int
    line: int
    dpi: int
    width: int | None = None
    length: int | None = None
    home: tuple[int, int] = (0, 0)
    shift: int = 0
    font: tuple[str, int, int] = ("A", 9, 5)
    orientation: str = "N"
    module: tuple[int, float, int] = (2, 3.0, 10)
    encoding: str = "cp850"
    name: str | None = None
    objects: list[dict[str, Any]] = field(default_factory=list)
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    recalls: str | None = None


class Converter:
    def __init__(self, name: str, dpi: int, max_expanded: int) -> None:
        self.name = name
        self.dpi = dpi
        self.budget = max_expanded  # graphic bytes the whole file may expand to
        self.result = Conversion(format="zpl")
        self.noted: set[tuple[int | None, str]] = set()

    # --- report -------------------------------------------------------------------------------

    def note(
        self, line: int | None, message: str, fmt: Format | None, severity: str = "warning"
    ) -> None:
        key = (fmt.index if fmt else None, message)
        if key in self.noted:  # the same thing once per label
            return
        self.noted.add(key)
        self.result.report.append(
            Note(severity, message, line=line, document=fmt.index if fmt else None)  # type: ignore[arg-type]
        )

    # --- the file -----------------------------------------------------------------------------

    def run(self, data: bytes) -> Conversion:
        fmt: Format | None = None
        current = Field()
        started = False
        for token in tokens(data):
            name = token.name
            if name == "XA":
                if fmt is not None:
                    self.note(token.line, "^XA inside a format: the format so far ends here.", fmt)
                    self.finish(fmt)
                if len(self.result.labels) >= MAX_LABELS:
                    raise refuse(
                        ProblemCode.IMPORT_TOO_COMPLEX,
                        f"More than {MAX_LABELS} label formats in one file.",
                        limit=MAX_LABELS,
                    )
                fmt = Format(index=len(self.result.labels), line=token.line, dpi=self.dpi)
                current = Field(line=token.line)
                started = True
                continue
            if fmt is None:
                if name not in PRINTER_SETTINGS and token.prefix == "^":
                    self.note(token.line, f"^{name} outside ^XA…^XZ is ignored.", None)
                elif name in PRINTER_SETTINGS and name != "FX":
                    self.note(
                        token.line,
                        f"{token.prefix}{name} ({PRINTER_SETTINGS[name]}) is a printer setting, "
                        "not part of a label.",
                        None,
                        "info",
                    )
                continue
            if name == "XZ":
                self.finish(fmt)
                fmt = None
                continue
            current = self.command(fmt, current, token)
        if fmt is not None:
            self.note(
                fmt.line, "The last format has no ^XZ; it was imported as far as it goes.", fmt
            )
            self.finish(fmt)
        if not started or not self.result.labels:
            raise refuse(
                ProblemCode.IMPORT_EMPTY,
                "The file holds no complete ZPL label format (^XA…^XZ) with a layout.",
            )
        return self.result

    # --- commands -----------------------------------------------------------------------------

    def command(self, fmt: Format, current: Field, token: Token) -> Field:
        name, params, line = token.name, token.params, token.line
        args = split(params)
        if name == "FS":
            self.field(fmt, current)
            return Field(line=line)
        if name in ("FD", "FV"):
            current.data = params
            current.line = current.line or line
            return current
        if name in ("FO", "FT"):
            current.x = self.coordinate(args, 0, 0) + fmt.home[0] - fmt.shift
            current.y = self.coordinate(args, 1, 0) + fmt.home[1]
            current.typeset = name == "FT"
            current.line = line
            if name == "FO" and arg(args, 2) == "1":
                self.note(
                    line,
                    "^FO right justification is not kept: the field is placed from its left edge.",
                    fmt,
                )
            return current
        if name[0] == "A" and token.prefix == "^":
            current.font = self.font(fmt, name[1], args, line)
            orientation = (
                (arg(args, 0) or "").upper()[:1]
                if name[1] != "@"
                else (arg(args, 0) or "")[:1].upper()
            )
            if orientation in ROTATIONS:
                current.orientation = orientation
            return current
        if name == "FH":
            current.hex_indicator = (params[:1] or "_") if params.strip() else "_"
            return current
        if name == "FN":
            match = re.match(r'\s*(\d+)(?:\s*"([^"]*)")?', params)
            if match:
                current.number = int(match.group(1))
                current.number_name = match.group(2)
            return current
        if name == "FR":
            current.reverse = True
            return current
        if name == "FB":
            width = self.int_arg(args, 0, 0)
            lines = max(1, self.int_arg(args, 1, 1))
            spacing = self.int_arg(args, 2, 0)
            justification = (arg(args, 3) or "L").upper()[:1]
            if (arg(args, 4) or "0") not in ("", "0"):
                self.note(line, "^FB hanging indent is not kept.", fmt)
            current.block = (width, lines, spacing, justification)
            return current
        if name in ("BC", "BE", "BU", "B3", "B2", "BQ", "BX", "B7"):
            current.barcode = (name, args, line)
            return current
        if name in ("GB", "GE", "GC", "GD", "GF"):
            self.graphic(fmt, current, name, args, params, line)
            return current
        return self.setting(fmt, current, token, args)

    def setting(self, fmt: Format, current: Field, token: Token, args: list[str]) -> Field:
        name, line = token.name, token.line
        if name == "PW":
            fmt.width = self.size(args, "^PW", line)
        elif name == "LL":
            fmt.length = self.size(args, "^LL", line)
        elif name == "LH":
            fmt.home = (self.int_arg(args, 0, 0), self.int_arg(args, 1, 0))
        elif name == "LS":
            fmt.shift = self.int_arg(args, 0, 0)
        elif name == "CF":
            font = (arg(args, 0) or fmt.font[0])[:1].upper()
            height = self.int_arg(args, 1, fmt.font[1])
            width = self.int_arg(args, 2, height if arg(args, 1) else fmt.font[2])
            fmt.font = (font, height, width)
        elif name == "FW":
            rotation = (arg(args, 0) or "N").upper()[:1]
            if rotation in ROTATIONS:
                fmt.orientation = rotation
        elif name == "BY":
            width = min(10, max(1, self.int_arg(args, 0, fmt.module[0])))
            try:
                ratio = float(arg(args, 1) or fmt.module[1])
            except ValueError:
                ratio = fmt.module[1]
            fmt.module = (width, ratio, self.int_arg(args, 2, fmt.module[2]))
        elif name == "CI":
            fmt.encoding = encoding_of(self.int_arg(args, 0, 0))
        elif name == "DF":
            fmt.name = (token.params.split(":")[-1].rsplit(".", 1)[0]).strip() or None
        elif name == "XF":
            fmt.recalls = token.params.strip()
        elif name == "MU":
            if (arg(args, 0) or "D").upper()[:1] != "D":
                self.note(
                    line,
                    "^MU units other than dots are not supported: values are read as dots.",
                    fmt,
                )
        elif name == "LR":
            if (arg(args, 0) or "N").upper()[:1] == "Y":
                self.note(
                    line, "^LR label reverse is not kept: the label prints black on white.", fmt
                )
        elif name == "PO":
            if (arg(args, 0) or "N").upper()[:1] == "I":
                self.note(
                    line,
                    "^POI (print upside down) is not kept: the label is imported upright.",
                    fmt,
                )
        elif name == "SN" or name == "SF":
            self.note(
                line, f"^{name} serialization is not imported; use a counter in an expression.", fmt
            )
        elif name in PRINTER_SETTINGS:
            if name != "FX":
                self.note(
                    line,
                    f"{token.prefix}{name} ({PRINTER_SETTINGS[name]}) is a printer setting, "
                    "not part of a label.",
                    fmt,
                    "info",
                )
        else:
            self.note(line, f"{token.prefix}{name} is not supported and was ignored.", fmt)
        return current

    # --- numbers ------------------------------------------------------------------------------

    def int_arg(self, args: list[str], index: int, default: int) -> int:
        value = arg(args, index)
        if value is None or value.strip() == "":
            return default
        try:
            return int(float(value.strip()))
        except ValueError:
            return default

    def coordinate(self, args: list[str], index: int, default: int) -> int:
        value = self.int_arg(args, index, default)
        return max(-32000, min(32000, value))

    def size(self, args: list[str], command: str, line: int) -> int:
        value = self.int_arg(args, 0, 0)
        if not MIN_LABEL_MM <= value * 25.4 / self.dpi <= MAX_MM:
            least = math.ceil(MIN_LABEL_MM / 25.4 * self.dpi)
            raise refuse(
                ProblemCode.IMPORT_SIZE_INVALID,
                f"{command}{arg(args, 0) or ''} (line {line}) is not a label size at "
                f"{self.dpi} dpi: it must be {least} to {int(MAX_MM / 25.4 * self.dpi)} dots.",
                line=line,
                value=value,
                dpi=self.dpi,
            )
        return value

    def font(self, fmt: Format, letter: str, args: list[str], line: int) -> tuple[str, int, int]:
        if letter == "@":
            height = self.int_arg(args, 1, fmt.font[1])
            width = self.int_arg(args, 2, height)
            name = (arg(args, 3) or "").strip()
            return ("@" + name, height, width)
        height = self.int_arg(args, 1, fmt.font[1])
        width = self.int_arg(args, 2, height if arg(args, 1) else fmt.font[2])
        return (letter.upper(), height, width)

    # --- fields -------------------------------------------------------------------------------

    def field(self, fmt: Format, current: Field) -> None:
        if current.data is None and current.number is None:
            if current.barcode is not None:
                self.note(
                    current.barcode[2], f"^{current.barcode[0]} without ^FD data was ignored.", fmt
                )
            return
        if len(fmt.objects) >= MAX_OBJECTS:
            raise refuse(
                ProblemCode.IMPORT_TOO_COMPLEX,
                f"More than {MAX_OBJECTS} objects in one label format.",
                limit=MAX_OBJECTS,
            )
        text = self.field_text(fmt, current)
        variable = self.variable(fmt, current, text)
        if current.reverse:
            self.note(
                current.line,
                "^FR (reverse print) is not kept: the field prints black on white.",
                fmt,
            )
        if current.barcode is not None:
            obj = self.barcode(fmt, current, text, variable)
        else:
            obj = self.text(fmt, current, text, variable)
        if obj is not None:
            fmt.objects.append(obj)

    def field_text(self, fmt: Format, current: Field) -> str:
        raw = current.data or ""
        raw = raw.replace("\r", "").replace("\n", "")
        if current.hex_indicator:
            indicator = re.escape(current.hex_indicator)
            raw = re.sub(indicator + r"([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), raw)
        try:
            return raw.encode("latin-1").decode(fmt.encoding)
        except (UnicodeDecodeError, UnicodeEncodeError):
            self.note(
                current.line, f"Field data is not valid {fmt.encoding}; read as Latin-1.", fmt
            )
            return raw

    def variable(self, fmt: Format, current: Field, text: str) -> str | None:
        if current.number is None:
            return None
        name = _identifier(current.number_name) or f"field_{current.number}"
        if name not in fmt.variables:
            fmt.variables[name] = {
                "name": name,
                "type": "string",
                "description": f"ZPL field ^FN{current.number}"
                + (f" ({current.number_name})" if current.number_name else ""),
            }
        if current.data is not None and "sample" not in fmt.variables[name]:
            fmt.variables[name]["sample"] = text
        fmt.variables[name].setdefault("sample", f"field {current.number}")
        return name

    def object_id(self, fmt: Format, kind: str) -> str:
        fmt.counts[kind] = fmt.counts.get(kind, 0) + 1
        return f"{kind}_{fmt.counts[kind]}"

    def text(
        self, fmt: Format, current: Field, text: str, variable: str | None
    ) -> dict[str, Any] | None:
        font_name, height, width = current.font or fmt.font
        orientation = current.orientation or fmt.orientation
        rotation = ROTATIONS.get(orientation, 0)
        family, weight = "Roboto", 500
        if font_name == "0":
            family, weight = "Roboto Condensed", 700
            if width and abs(width - height) > max(2, height // 10):
                self.note(
                    current.line,
                    "^A0 character width differing from the height is not kept (the font "
                    "keeps its proportions).",
                    fmt,
                )
        elif font_name.startswith("@"):
            self.note(
                current.line,
                f"Font {font_name[1:] or '(unnamed)'} is not available; Roboto is used.",
                fmt,
            )
        elif font_name in BITMAP_FONTS or font_name.isdigit():
            family = "Roboto Mono"
            self.note(
                current.line,
                f"Bitmap font {font_name} is printed with Roboto Mono at its height.",
                fmt,
            )
        height = max(1, height)
        size_pt = round(height * 72 / self.dpi, 3)
        obj: dict[str, Any] = {"type": "text", "id": self.object_id(fmt, "text")}
        obj.update({"expression": variable} if variable else {"content": text})
        obj.update({"font": family, "size_pt": size_pt, "weight": weight})
        x, y = current.x, current.y
        if current.block is not None:
            block_w, lines, spacing, justification = current.block
            if block_w > 0:
                obj["width_mm"] = dots_to_mm(block_w, self.dpi)
                obj["wrap"] = True
            obj["max_lines"] = min(100, lines)
            obj["line_spacing"] = min(4.0, max(0.5, round((height + spacing) / height, 3)))
            obj["align"] = {"C": "center", "R": "right"}.get(justification, "left")
            if justification == "J":
                self.note(current.line, "^FB justified text is set flush left.", fmt)
            if "content" in obj:
                obj["content"] = obj["content"].replace("\\&", "\n")
        elif "content" in obj and not obj["content"]:
            return None
        if current.typeset:
            x, y = self.baseline_origin(obj, text, x, y, rotation)
        obj["x_mm"] = dots_to_mm(x, self.dpi)
        obj["y_mm"] = dots_to_mm(y, self.dpi)
        if rotation:
            obj["rotation"] = rotation
        return obj

    def baseline_origin(
        self, obj: dict[str, Any], text: str, x: int, y: int, rotation: int
    ) -> tuple[int, int]:
        """^FT gives the start of the text's baseline; objects are placed by their box's corner."""
        from etikett.render.fonts import font

        size_px = obj["size_pt"] / 72 * self.dpi
        face = font(obj["font"], obj["weight"], size_px)
        ascent, descent = face.getmetrics()
        if rotation == 0:
            return x, y - ascent
        if rotation == 90:
            return x - descent, y
        left, _, right, _ = face.getbbox(text or " ", anchor="ls")
        width = int(right) - min(0, int(left))
        if rotation == 180:
            return x - width, y - descent
        return x - ascent, y - width

    def barcode(
        self, fmt: Format, current: Field, text: str, variable: str | None
    ) -> dict[str, Any] | None:
        command, args, line = current.barcode  # type: ignore[misc]
        orientation = (arg(args, 0) or current.orientation or fmt.orientation).upper()[:1]
        rotation = ROTATIONS.get(orientation, ROTATIONS.get(fmt.orientation, 0))
        module, _, default_height = fmt.module
        obj: dict[str, Any] = {"type": "barcode", "id": self.object_id(fmt, "barcode")}
        height = default_height
        human = True
        value = text
        if command == "BC":
            height = self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
            if (arg(args, 3) or "N").upper().startswith("Y"):
                self.note(line, "^BC interpretation line above the code is printed below it.", fmt)
            mode = (arg(args, 5) or "N").upper()[:1]
            symbology, value = code128(value, mode)
            if mode == "U":
                self.note(line, "^BC mode U (UCC case mode) is imported as plain Code 128.", fmt)
            if symbology == "gs1-128":
                element_string = self.gs1(fmt, value, line)
                if element_string is None:
                    return None
                value = element_string
        elif command == "BE":
            symbology, height = "ean13", self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
        elif command == "BU":
            symbology, height = "upca", self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
        elif command == "B3":
            symbology, height = "code39", self.int_arg(args, 2, default_height)
            human = (arg(args, 3) or "Y").upper().startswith("Y")
            if (arg(args, 1) or "N").upper().startswith("Y"):
                self.note(line, "^B3 Mod-43 check digit is not printed.", fmt)
        elif command == "B2":
            height = self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
            digits = re.sub(r"\D", "", value)
            if variable is None and len(digits) not in (13, 14):
                self.note(
                    line,
                    f"^B2 Interleaved 2 of 5 with {len(digits)} digits is not supported (only "
                    "ITF-14); the field was dropped.",
                    fmt,
                )
                return None
            symbology, value = "itf14", digits
            self.note(line, "^B2 became an ITF-14 (14 digits, check digit verified).", fmt, "info")
        elif command == "BQ":
            symbology = "qr"
            module = min(100, max(1, self.int_arg(args, 2, max(1, round(2 * self.dpi / 203)))))
            value, ecc = qr_data(value)
            if ecc and ecc not in ("M", "L"):
                self.note(
                    line,
                    f"QR error correction level {ecc} is not kept; the renderer chooses the level.",
                    fmt,
                )
            human = False
        elif command == "BX":
            module = min(100, max(1, self.int_arg(args, 1, module)))
            escape = arg(args, 6) or "~"
            symbology = "datamatrix"
            fnc1 = escape[:1] + "1"
            if value.startswith(fnc1):
                symbology = "gs1-datamatrix"
                element_string = self.gs1(fmt, value[2:].replace(fnc1, "\x1d"), line)
                if element_string is None:
                    return None
                value = element_string
            human = False
        else:  # B7
            symbology = "pdf417"
            row = self.int_arg(args, 1, 3 * module)
            if row != 3 * module:
                self.note(
                    line, f"^B7 row height {row} dots becomes 3 modules ({3 * module} dots).", fmt
                )
            human = False
        if variable:
            obj["expression"] = variable
            if symbology in ("gs1-128", "gs1-datamatrix"):
                sample = fmt.variables[variable].get("sample")
                if sample is not None:
                    fmt.variables[variable]["sample"] = value
        else:
            if not value:
                self.note(line, f"^{command} with empty data was dropped.", fmt)
                return None
            obj["content"] = value
        obj["symbology"] = symbology
        obj["module_width_dots"] = module
        if symbology not in ("qr", "datamatrix", "gs1-datamatrix", "pdf417"):
            obj["height_dots"] = max(1, min(10000, height))
            obj["human_readable"] = human
        x, y = current.x, current.y
        if current.typeset and "height_dots" in obj:
            y -= obj["height_dots"]
        obj["x_mm"] = dots_to_mm(x, self.dpi)
        obj["y_mm"] = dots_to_mm(y, self.dpi)
        if rotation:
            obj["rotation"] = rotation
        return obj

    def gs1(self, fmt: Format, raw: str, line: int) -> str | None:
        try:
            return element_string(raw)
        except ValueError as error:
            self.note(line, f"GS1 data could not be read ({error}); the field was dropped.", fmt)
            return None

    # --- graphics -----------------------------------------------------------------------------

    def graphic(
        self, fmt: Format, current: Field, name: str, args: list[str], params: str, line: int
    ) -> None:
        if len(fmt.objects) >= MAX_OBJECTS:
            raise refuse(
                ProblemCode.IMPORT_TOO_COMPLEX,
                f"More than {MAX_OBJECTS} objects in one label format.",
                limit=MAX_OBJECTS,
            )
        x, y = current.x, current.y
        mm = self.dpi
        if name == "GF":
            self.image(fmt, current, args, params, line)
            return
        color = (arg(args, 3 if name != "GC" else 2) or "B").upper()[:1]
        if color == "W":
            self.note(
                line,
                f"^{name} in white is not kept (white prints nothing on a label); dropped.",
                fmt,
            )
            return
        if name == "GB":
            thickness = max(1, self.int_arg(args, 2, 1))
            width = max(thickness, self.int_arg(args, 0, thickness))
            height = max(thickness, self.int_arg(args, 1, thickness))
            rounding = min(8, max(0, self.int_arg(args, 4, 0)))
            if height <= thickness and width > thickness and not rounding:
                obj = {
                    "type": "line",
                    "id": self.object_id(fmt, "line"),
                    "length_mm": dots_to_mm(width, mm),
                    "thickness_mm": dots_to_mm(height, mm),
                }
            elif width <= thickness and height > thickness and not rounding:
                obj = {
                    "type": "line",
                    "id": self.object_id(fmt, "line"),
                    "length_mm": dots_to_mm(height, mm),
                    "thickness_mm": dots_to_mm(width, mm),
                    "rotation": 90,
                }
            else:
                obj = {
                    "type": "box",
                    "id": self.object_id(fmt, "box"),
                    "width_mm": dots_to_mm(width, mm),
                    "height_mm": dots_to_mm(height, mm),
                    "line_mm": dots_to_mm(thickness, mm),
                }
                if 2 * thickness >= min(width, height):
                    obj["fill"] = True
                if rounding:
                    obj["corner_radius_mm"] = dots_to_mm(rounding / 8 * min(width, height) / 2, mm)
        elif name in ("GE", "GC"):
            if name == "GE":
                thickness = max(1, self.int_arg(args, 2, 1))
                width = max(thickness, self.int_arg(args, 0, thickness))
                height = max(thickness, self.int_arg(args, 1, thickness))
            else:
                thickness = max(1, self.int_arg(args, 1, 1))
                width = height = max(thickness, self.int_arg(args, 0, 3))
            obj = {
                "type": "ellipse",
                "id": self.object_id(fmt, "ellipse"),
                "width_mm": dots_to_mm(width, mm),
                "height_mm": dots_to_mm(height, mm),
                "line_mm": dots_to_mm(thickness, mm),
            }
            if 2 * thickness >= min(width, height):
                obj["fill"] = True
        else:  # GD: a diagonal, drawn as an image of exactly its dots
            thickness = max(1, self.int_arg(args, 2, 1))
            width = max(thickness, self.int_arg(args, 0, thickness))
            height = max(1, self.int_arg(args, 1, 1))
            lean = (arg(args, 4) or "R").upper()[:1]
            obj = self.diagonal(fmt, width, height, thickness, lean in ("L", "\\"))
        obj["x_mm"] = dots_to_mm(x, mm)
        obj["y_mm"] = dots_to_mm(y, mm)
        fmt.objects.append(obj)

    def diagonal(
        self, fmt: Format, width: int, height: int, thickness: int, left: bool
    ) -> dict[str, Any]:
        from PIL import Image, ImageDraw

        self.bound_image(width, height, "^GD")
        image = Image.new("L", (width, height), 255)
        if left:
            points = [
                (0, 0),
                (thickness - 1, 0),
                (width - 1, height - 1),
                (width - thickness, height - 1),
            ]
        else:
            points = [
                (0, height - 1),
                (thickness - 1, height - 1),
                (width - 1, 0),
                (width - thickness, 0),
            ]
        ImageDraw.Draw(image).polygon(points, fill=0)
        return self.image_object(fmt, image)

    def image(self, fmt: Format, current: Field, args: list[str], params: str, line: int) -> None:
        compression = (arg(args, 0) or "A").upper()[:1]
        total = self.int_arg(args, 2, -1)
        row_bytes = self.int_arg(args, 3, -1)
        where = f"^GF at line {line}"
        if compression != "A":
            self.note(
                line,
                f"^GF{compression} binary graphics are not supported; the graphic was dropped.",
                fmt,
            )
            return
        if total <= 0 or row_bytes <= 0 or total % row_bytes:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the byte counts do not describe a graphic (total {total}, "
                f"{row_bytes} per row).",
                line=line,
            )
        rows = total // row_bytes
        self.bound_image(row_bytes * 8, rows, where)
        if total > self.budget:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where} declares {total} bytes; the file's graphics may hold {self.budget} more.",
                line=line,
                limit=self.budget,
            )
        self.budget -= total
        data = params.split(",", 4)[4] if params.count(",") >= 4 else ""
        bits = decode_graphic(data.strip(), total, row_bytes, where, line)
        from PIL import Image, ImageOps

        image = Image.frombytes("1", (row_bytes * 8, rows), bits, "raw", "1;I")
        obj = self.image_object(fmt, ImageOps.grayscale(image.convert("L")))
        obj["x_mm"] = dots_to_mm(current.x, self.dpi)
        obj["y_mm"] = dots_to_mm(current.y, self.dpi)
        fmt.objects.append(obj)

    def bound_image(self, width: int, height: int, where: str) -> None:
        limit = int(MAX_MM / 25.4 * self.dpi)
        if width > limit or height > limit:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where} is {width} × {height} dots, larger than any label at {self.dpi} dpi.",
                limit=limit,
            )

    def image_object(self, fmt: Format, image: Any) -> dict[str, Any]:
        return {
            "type": "image",
            "id": self.object_id(fmt, "image"),
            "width_mm": dots_to_mm(image.width, self.dpi),
            "height_mm": dots_to_mm(image.height, self.dpi),
            "content_base64": png(image.convert("1")),
            "dither": "threshold",
        }

    # --- the document -------------------------------------------------------------------------

    def finish(self, fmt: Format) -> None:
        if not fmt.objects:  # skipped: its notes concern no document (the next takes its index)
            for note in self.result.report:
                if note.document == fmt.index:
                    note.document = None
        if fmt.recalls is not None and not fmt.objects:
            self.note(
                fmt.line,
                f"The format recalls a stored format ({fmt.recalls}) with field data only; "
                "import the stored format itself.",
                None,
            )
            return
        if not fmt.objects:
            self.note(fmt.line, "A format without fields was skipped.", None)
            return
        width, length = fmt.width, fmt.length
        if width is None:
            width = round(4 * self.dpi)
            self.note(
                fmt.line, f"No ^PW: the label is taken as 4 in ({width} dots) wide.", fmt, "info"
            )
        if length is None:
            length = round(6 * self.dpi)
            self.note(
                fmt.line, f"No ^LL: the label is taken as 6 in ({length} dots) long.", fmt, "info"
            )
        document = {
            "size": {
                "width_mm": dots_to_mm(width, self.dpi),
                "height_mm": dots_to_mm(length, self.dpi),
            },
            "dpi": self.dpi,
            "variables": list(fmt.variables.values()),
            "objects": fmt.objects,
        }
        base = self.name.rsplit(".", 1)[0] if "." in self.name else self.name
        name = fmt.name or base or "Imported label"
        if fmt.name is None and fmt.index > 0:
            name = f"{name} ({fmt.index + 1})"
        self.result.labels.append(Imported(name=name[:200], document=document))


# --- tokens and arguments ------------------------------------------------------------------------


def tokens(data: bytes) -> list[Token]:
    """The commands in order. A command's parameters run to the next `^` or `~`; field data
    (`^FD`, `^FV`, `^FX`) to the next `^` only. Line numbers count the file's newlines."""
    text = data.decode("latin-1")
    found: list[Token] = []
    position = 0
    line = 1
    length = len(text)
    starts = [m.start() for m in re.finditer(r"[\^~]", text)]
    index = 0
    while index < len(starts):
        start = starts[index]
        line += text.count("\n", position, start)
        position = start
        name = text[start + 1 : start + 3].upper()
        if len(name) < 2:
            break
        if name in ("FD", "FV", "FX"):
            end = text.find("^", start + 3)
            end = length if end < 0 else end
            while index + 1 < len(starts) and starts[index + 1] < end:
                index += 1
        else:
            end = starts[index + 1] if index + 1 < len(starts) else length
        if name[0] == "A" and text[start] == "^":
            params = text[start + 3 : end]
        else:
            params = text[start + 3 : end]
        if name not in ("FD", "FV", "FX", "GF"):
            params = params.replace("\r", "").replace("\n", "")
        found.append(Token(text[start], name, params, line))
        index += 1
    return found


def split(params: str) -> list[str]:
    return params.split(",")


def arg(args: list[str], index: int) -> str | None:
    if index < len(args):
        value = args[index].strip()
        return value if value else None
    return None


def encoding_of(number: int) -> str:
    if number in (28, 29, 30):
        return "utf-8"
    if number == 27:
        return "cp1252"
    return "cp850"


def _identifier(name: str | None) -> str | None:
    if not name:
        return None
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_").lower()
    if not cleaned:
        return None
    if cleaned[0].isdigit():
        cleaned = "f_" + cleaned
    return cleaned[:64] if cleaned not in ("now", "counters", "value") else f"{cleaned}_field"


# --- barcode data --------------------------------------------------------------------------------


_INVOCATIONS = {">;": "", ">:": "", ">9": "", ">5": "", ">6": "", ">7": "", ">8": "\x1d", ">0": ">"}


def code128(data: str, mode: str) -> tuple[str, str]:
    """(symbology, data) of a ^BC field: mode D and data that starts with FNC1 are GS1-128."""
    if mode == "D":
        cleaned = re.sub(r">[;:9567]", "", data).replace(">8", "\x1d")
        return "gs1-128", cleaned.lstrip("\x1d")
    if ">" not in data:
        return "code128", data
    out = re.sub(r">[;:95670]|>8", lambda m: _INVOCATIONS[m.group(0)], data)
    if out.startswith("\x1d"):
        return "gs1-128", out[1:]
    return "code128", out.replace("\x1d", "")


def qr_data(data: str) -> tuple[str, str | None]:
    """The text of a ^BQ field (`QA,text`, `MM,Atext`, …) and its error correction level."""
    match = re.match(r"^([HQML])([AM]),(.*)$", data, re.DOTALL)
    if match is None:
        return data, None
    ecc, mode, rest = match.groups()
    if mode == "M" and rest[:1] in ("N", "A", "K"):
        rest = rest[1:]
    elif mode == "M" and rest[:1] == "B" and rest[1:5].isdigit():
        rest = rest[5:]
    return rest, ecc


def decode_graphic(data: str, total: int, row_bytes: int, where: str, line: int) -> bytes:
    """The bytes of a ^GFA graphic (hex with ACS compression, or :Z64:/:B64:), exactly `total`."""
    if data.startswith((":Z64:", ":B64:")):
        body = data[5:]
        encoded, _, crc = body.rpartition(":")
        if not encoded:
            encoded, crc = body, ""
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the base64 data is broken.",
                line=line,
            ) from None
        if (
            crc
            and re.fullmatch(r"[0-9A-Fa-f]{4}", crc)
            and int(crc, 16) != binascii.crc_hqx(encoded.encode("ascii"), 0)
        ):
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the CRC does not match the data.",
                line=line,
            )
        out = inflate(raw, total, where) if data.startswith(":Z64:") else raw
    else:
        out = _acs(data, total, row_bytes, where, line)
    if len(out) < total:
        raise refuse(
            ProblemCode.IMPORT_GRAPHIC_INVALID,
            f"{where} declares {total} bytes but carries {len(out)}.",
            line=line,
            declared=total,
            present=len(out),
        )
    return out[:total]


def _acs(data: str, total: int, row_bytes: int, where: str, line: int) -> bytes:
    """ASCII hex with Zebra's ACS compression: G-Y and g-z repeat counts, `,` fills the row with
    0, `!` with 1, `:` repeats the previous row. Never builds more than `total` bytes."""
    row_hex = row_bytes * 2
    wanted = total * 2
    out: list[str] = []
    done = 0
    row = ""
    count = 0
    previous = "0" * row_hex
    for char in data:
        if char in _ACS_COUNTS:
            count += _ACS_COUNTS[char]
            continue
        if char in "0123456789ABCDEFabcdef":
            row += char.upper() * min(max(1, count), wanted - done - len(row) + row_hex)
        elif char == ",":
            row += "0" * (row_hex - len(row) % row_hex if len(row) % row_hex else row_hex)
        elif char == "!":
            row += "F" * (row_hex - len(row) % row_hex if len(row) % row_hex else row_hex)
        elif char == ":":
            row += previous
        elif char in " \r\n\t":
            continue
        else:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: {char!r} is not graphic data.",
                line=line,
            )
        count = 0
        while len(row) >= row_hex:
            previous = row[:row_hex]
            out.append(previous)
            done += row_hex
            row = row[row_hex:]
        if done >= wanted:
            break
    return bytes.fromhex("".join(out))  # a partial last row is missing data, not padding


def convert_zpl(name: str, data: bytes, *, dpi: int, max_expanded: int) -> Conversion:
    return Converter(name, dpi, max_expanded).run(data)
