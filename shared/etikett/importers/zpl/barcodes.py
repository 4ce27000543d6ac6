"""ZPL barcode fields (`^BC ^BE ^BU ^B3 ^B2 ^BQ ^BX ^B7` with `^BY`) as barcode objects.

Data is read as the printer reads it: check digits the printer computes (EAN-13, UPC-A, GS1
element strings) are recomputed with a warning when the file's are wrong or missing; `^FT` is the
bottom-left corner of the bars in the code's own orientation (R, I, B turn it with the code),
`^FO` the top-left corner of the field as printed.
"""

from __future__ import annotations

import re
from typing import Any

from etikett.importers.checks import code39_check
from etikett.importers.conversion import dots_to_mm
from etikett.importers.gs1 import element_string, with_check_digits
from etikett.importers.zpl.data import (
    code128,
    code128_modules,
    code_set,
    fits_code_set,
    qr_data,
)
from etikett.importers.zpl.reader import Field, Format, Reader
from etikett.importers.zpl.syntax import ROTATIONS, arg
from etikett_engine.dsl.label import BarcodeObject
from etikett_engine.errors import EtikettError
from etikett_engine.render.barcode import gs1_check_digit, render_barcode

MATRIX = ("qr", "datamatrix", "gs1-datamatrix", "pdf417")
# Digits before the check digit, and what zint takes, of the EAN/UPC codes ZPL prints.
EAN_DIGITS = {"ean13": 12, "upca": 11}


def recalled_code128(obj: dict[str, Any], data: str) -> str:
    """A Code 128 field of a stored format gets its data when recalled: the printer reads the
    recall's invocation codes, so its code set (mode N) follows that data. The sample is the
    data without them."""
    symbology, value = code128(data, "N")
    if symbology != "code128":
        return data
    if "code_set" in obj:  # mode N: the start code of this data decides
        chosen = code_set(data, "N")
        if chosen is not None and fits_code_set(value, chosen):
            obj["code_set"] = chosen
        else:
            del obj["code_set"]
    return value


class BarcodeReader(Reader):
    """Turns barcode fields into barcode objects."""

    def barcode(
        self, fmt: Format, current: Field, text: str, variable: str | None
    ) -> dict[str, Any] | None:
        if current.barcode is None:
            return None
        command, args, line = current.barcode
        given = (arg(args, 0) or "").upper()[:1]
        orientation = given if given in ROTATIONS else (current.orientation or fmt.orientation)
        rotation = ROTATIONS.get(orientation, 0)
        module, _, default_height = fmt.module
        obj: dict[str, Any] = {"type": "barcode", "id": self.object_id(fmt, "barcode")}
        printed: int | None = None
        height = default_height
        human = True
        value = text
        if command == "BC":
            height = self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
            if (arg(args, 3) or "N").upper().startswith("Y"):
                self.note(line, "^BC interpretation line above the code is printed below it.", fmt)
            mode = (arg(args, 5) or "N").upper()[:1]
            symbology, value = code128(text, mode)
            chosen = code_set(text, mode) if symbology == "code128" else None
            if chosen is not None and fits_code_set(value, chosen):
                obj["code_set"] = chosen
            elif symbology == "code128" and mode == "N" and variable is None:
                printed = code128_modules(text)  # the file's own code set switches
            if mode == "U":
                self.note(line, "^BC mode U (UCC case mode) is imported as plain Code 128.", fmt)
            if symbology == "gs1-128":
                gs1 = self.gs1(fmt, value, line)
                if gs1 is None:
                    return None
                value = gs1
        elif command in ("BE", "BU"):
            symbology = "ean13" if command == "BE" else "upca"
            height = self.int_arg(args, 1, default_height)
            human = (arg(args, 2) or "Y").upper().startswith("Y")
            if variable is None:
                value = self.ean_digits(fmt, symbology, value, line)
        elif command == "B3":
            symbology, height = "code39", self.int_arg(args, 2, default_height)
            human = (arg(args, 3) or "Y").upper().startswith("Y")
            if value != value.upper():
                self.note(
                    line, "^B3 Code 39 has capitals only: the data is printed upper case.", fmt
                )
                value = value.upper()
            if (arg(args, 1) or "N").upper().startswith("Y"):
                value = self.mod43(fmt, value, variable, line)
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
            if variable is None and len(digits) == 14:
                value = self.check_digit(fmt, "ITF-14", digits, line)
            self.note(line, "^B2 became an ITF-14 (14 digits, check digit verified).", fmt, "info")
        elif command == "BQ":
            symbology = "qr"
            module = min(100, max(1, self.int_arg(args, 2, max(1, round(2 * self.dpi / 203)))))
            text, (value, ecc) = value, qr_data(value)
            if ecc is None and variable is None:
                self.note(
                    line,
                    f"QR data {text[:20]!r} starts without its switches (`QA,`): the printer "
                    f"takes {text[:3]!r} for them and encodes the rest.",
                    fmt,
                )
            if ecc and ecc not in ("M", "L"):
                self.note(
                    line,
                    f"QR error correction level {ecc} is not kept; the renderer chooses the level.",
                    fmt,
                )
            human = False
            rotation = 0  # ^BQ is always upright
        elif command == "BX":
            module = min(100, max(1, self.int_arg(args, 1, module)))
            escape = arg(args, 6) or "~"
            symbology = "datamatrix"
            fnc1 = escape[:1] + "1"
            if value.startswith(fnc1):
                symbology = "gs1-datamatrix"
                gs1 = self.gs1(fmt, value[2:].replace(fnc1, "\x1d"), line)
                if gs1 is None:
                    return None
                value = gs1
            human = False
        else:  # B7
            symbology = "pdf417"
            # Rows are h × the module high; without h the ^BY height is shared by the rows.
            multiple = self.int_arg(args, 1, 0)
            if multiple:
                obj["row_height_dots"] = max(1, min(100, multiple * module))
            else:
                obj["row_height_dots"] = self.pdf417_rows(module, value, default_height)
            human = False
        if variable:
            obj["expression"] = variable
            # The sample is what the code encodes: invocation codes, QR modes and check digits
            # as the printer reads them.
            if fmt.variables[variable].get("sample") is not None:
                fmt.variables[variable]["sample"] = value
        else:
            if not value:
                self.note(line, f"^{command} with empty data was dropped.", fmt)
                return None
            obj["content"] = value
        obj["symbology"] = symbology
        obj["module_width_dots"] = module
        if symbology not in MATRIX:
            obj["height_dots"] = max(1, min(10000, height))
            obj["human_readable"] = human
        if printed is not None:
            self.compare_width(fmt, obj, value, printed, line)
        left, top = self.barcode_origin(fmt, current, obj, value, rotation)
        if command == "BQ" and not current.typeset:
            top += default_height  # the firmware sinks an ^FO QR code by the ^BY height
        obj["x_mm"] = dots_to_mm(left, self.dpi)
        obj["y_mm"] = dots_to_mm(top, self.dpi)
        if rotation:
            obj["rotation"] = rotation
        return obj

    def barcode_origin(
        self, fmt: Format, current: Field, obj: dict[str, Any], value: str, rotation: int
    ) -> tuple[int, int]:
        """The top-left corner of the turned box. ^FO names it; ^FT names the bottom-left corner
        of the bars (of the whole symbol for 2D codes) as the code itself is turned."""
        x, y = current.x, current.y
        if current.continues and fmt.pen is not None:
            x, y = fmt.pen
        if not current.typeset:
            return x, y
        width, total, bars = self.barcode_size(obj, value)
        below = total - bars  # the interpretation line under the bars
        return {
            0: (x, y - bars),
            90: (x - below, y),
            180: (x - width, y - below),
        }.get(rotation, (x - bars, y - width))

    def barcode_size(self, obj: dict[str, Any], value: str) -> tuple[int, int, int]:
        """Width, whole height and bar height of the barcode's ink, unturned, in dots."""

        height = obj.get("height_dots", 0)
        try:
            model = BarcodeObject.model_validate({**obj, "x_mm": 0, "y_mm": 0})
            ink = render_barcode(model, value, self.dpi)
        except (EtikettError, ValueError):
            return 0, height, height
        bars = height if obj["symbology"] not in MATRIX else ink.height
        return ink.width, ink.height, min(bars, ink.height)

    def pdf417_rows(self, module: int, value: str, height: int) -> int:
        """The row height of a PDF417 whose rows share the ^BY height."""
        probe = {"type": "barcode", "id": "probe", "symbology": "pdf417", "content": value}
        rows = self.barcode_size(
            {**probe, "module_width_dots": module, "row_height_dots": 1}, value
        )[1]
        return max(1, min(100, height // max(1, rows)))

    def mod43(self, fmt: Format, value: str, variable: str | None, line: int) -> str:
        """^B3 with its check character: the printer appends it, so the data does."""
        check = code39_check(value) if variable is None else None
        if check is None:
            self.note(line, "^B3 Mod-43 check character is not printed.", fmt)
            return value
        self.note(line, f"^B3 Mod-43 check character {check!r} is part of the data.", fmt, "info")
        return value + check

    def compare_width(
        self, fmt: Format, obj: dict[str, Any], value: str, printed: int, line: int
    ) -> None:
        """Code 128 data that switches code sets itself is drawn in the shortest encoding; when
        the printer's own choice of sets is wider, say so."""
        width = self.barcode_size(obj, value)[0] // max(1, obj["module_width_dots"])
        if width and width != printed:
            self.note(
                line,
                f"^BC data switches code sets itself: the printer's bars are {printed} modules "
                f"wide, the imported code {width} (its shortest encoding).",
                fmt,
                once=False,
            )

    def ean_digits(self, fmt: Format, symbology: str, value: str, line: int) -> str:
        """The digits zint takes for EAN-13 / UPC-A: as the printer does, short data is padded
        with leading zeros, long data cut, and the check digit always computed."""
        wanted = EAN_DIGITS[symbology]
        name = "EAN-13" if symbology == "ean13" else "UPC-A"
        digits = re.sub(r"\D", "", value)
        if len(digits) < wanted:
            self.note(
                line,
                f"{name} data {value!r} has {len(digits)} digits; padded with leading zeros to "
                f"{wanted} as the printer does.",
                fmt,
                once=False,
            )
            return digits.rjust(wanted, "0")
        if len(digits) == wanted + 1:
            return self.check_digit(fmt, name, digits, line)[:wanted]
        if len(digits) > wanted:
            self.note(
                line,
                f"{name} data {value!r} is longer than {wanted} digits; the printer prints the "
                f"first {wanted} and its own check digit.",
                fmt,
                once=False,
            )
        return digits[:wanted]

    def check_digit(self, fmt: Format, name: str, digits: str, line: int) -> str:
        """`digits` with a correct last (check) digit; a wrong one is replaced with a warning."""

        expected = gs1_check_digit(digits[:-1])
        if digits[-1] != expected:
            self.note(
                line,
                f"{name} {digits}: the check digit {digits[-1]} is wrong; {expected} is printed "
                "(the printer computes it).",
                fmt,
                once=False,
            )
        return digits[:-1] + expected

    def gs1(self, fmt: Format, raw: str, line: int) -> str | None:
        try:
            parsed = element_string(raw)
        except ValueError as error:
            self.note(line, f"GS1 data could not be read ({error}); the field was dropped.", fmt)
            return None
        fixed, changes = with_check_digits(parsed)
        for ai, wrong, right in changes:
            self.note(
                line,
                f"GS1 ({ai}) check digit {wrong} is wrong; {right} is printed.",
                fmt,
                once=False,
            )
        return fixed
