"""ZPL fields (`^FO`/`^FT` … `^FS`) as text and barcode objects, with their variables (`^FN`)."""

from __future__ import annotations

import re
from typing import Any

from etikett.errors import ProblemCode
from etikett.importers import MAX_OBJECTS, dots_to_mm, refuse
from etikett.importers.gs1 import element_string
from etikett.importers.zpl.data import code128, qr_data
from etikett.importers.zpl.reader import Field, Format, Reader
from etikett.importers.zpl.syntax import (
    BITMAP_FONTS,
    ROTATIONS,
    UNSUPPORTED_BARCODES,
    arg,
    identifier,
)

SHOWN_DATA = 40  # characters of a dropped field's data the report repeats


class FieldReader(Reader):
    """Turns the fields of a format into text and barcode objects."""

    def field(self, fmt: Format, current: Field) -> None:
        if current.data is None and current.number is None:
            if current.barcode is not None:
                self.note(
                    current.barcode[2], f"^{current.barcode[0]} without ^FD data was ignored.", fmt
                )
            return
        if current.barcode is not None and current.barcode[0] in UNSUPPORTED_BARCODES:
            self.drop_barcode(fmt, current)
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

    def drop_barcode(self, fmt: Format, current: Field) -> None:
        """A barcode the label model cannot draw: reported with what and where, never replaced
        by its data as text. Its ^FN declares no variable (nothing on the label would use it)."""
        assert current.barcode is not None
        command, _, line = current.barcode
        what = f"^{command} ({UNSUPPORTED_BARCODES[command]}) barcode"
        if current.data is not None:
            data = self.field_text(fmt, current)
            shown = data if len(data) <= SHOWN_DATA else data[:SHOWN_DATA] + "…"
            what += f' with data "{shown}"'
        if current.number is not None:
            what += f" of field ^FN{current.number}"
        self.note(
            line,
            f"{what} at ({current.x}, {current.y}) dots is not supported by the label model; "
            "the field was dropped.",
            fmt,
            once=False,
        )

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
        name = identifier(current.number_name) or f"field_{current.number}"
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
        if current.barcode is None:
            return None
        command, args, line = current.barcode
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
