"""ZPL fields (`^FO`/`^FT` … `^FS`) as text objects, with their variables (`^FN`).

Text is placed where the printer puts it: `^FO` is the top of the character cell, whose baseline
lies three quarters of the font height down (as Zebra's renderers draw it); `^FT` is the start of
the baseline (of the last line a `^FB` block may hold); `^FT` without coordinates continues after
the previous field. The object's box is then placed so that our face's baseline lands there.
"""

from __future__ import annotations

import re
from typing import Any

from etikett.importers.conversion import MAX_OBJECTS, dots_to_mm, refuse
from etikett.importers.zpl.barcodes import BarcodeReader
from etikett.importers.zpl.fonts import SYMBOLS, Face, face, font_size
from etikett.importers.zpl.reader import Field, Format
from etikett.importers.zpl.syntax import ROTATIONS, UNSUPPORTED_BARCODES, identifier
from etikett_engine.errors import ProblemCode
from etikett_engine.render.fonts import font

SHOWN_DATA = 40  # characters of a dropped field's data the report repeats


class FieldReader(BarcodeReader):
    """Turns the fields of a format into text and barcode objects."""

    def field(self, fmt: Format, current: Field) -> None:
        if fmt.recalls is not None and current.number is not None and not current.placed:
            # ^FNn^FD… in a format that recalls a stored one: data for that format's field n.
            fmt.field_data[current.number] = self.field_text(fmt, current)
            return
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
        if current.barcode is not None:
            obj = self.barcode(fmt, current, text, variable)
        else:
            obj = self.text(fmt, current, text, variable)
        if obj is not None:
            if current.reverse or fmt.reverse_all:
                obj["ink"] = "reverse"
            fmt.lines[obj["id"]] = current.line
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
            fmt.numbers[name] = current.number
        if current.data is not None and "sample" not in fmt.variables[name]:
            fmt.variables[name]["sample"] = text
        fmt.variables[name].setdefault("sample", f"field {current.number}")
        return name

    # --- text ---------------------------------------------------------------------------------

    def face_of(self, fmt: Format, current: Field) -> tuple[str, Face]:
        """The font's name as ZPL calls it, and how it prints here (noted when substituted)."""
        given = current.font
        if given is None:
            default = fmt.font[0]
            given = (default, fmt.font[1], fmt.font[2], fmt.aliases.get(default))
        name, height, width, alias = given
        if name == "@":
            h, w = font_size("0", height, width, (fmt.font[1], fmt.font[2]))
        else:
            h, w = font_size(name, height, width, (fmt.font[1], fmt.font[2]))
        found = face(name, h, w, alias if name == "@" or alias else None)
        if found.substituted is not None:
            self.note(
                current.line,
                f"Font {found.substituted} is not available; Roboto is used at its size.",
                fmt,
            )
        elif found.note is not None:
            self.note(current.line, found.note, fmt, "info")
        return name, found

    def text(
        self, fmt: Format, current: Field, text: str, variable: str | None
    ) -> dict[str, Any] | None:
        name, found = self.face_of(fmt, current)
        if name == "GS":
            mapped = "".join(SYMBOLS.get(char, char) for char in text)
            if any(char in "DE" for char in text):
                self.note(current.line, "^GS UL and CSA marks are printed as their letters.", fmt)
            text = mapped
        elif name == "B":
            text = text.upper()  # font B has capitals only
        orientation = current.orientation or fmt.orientation
        rotation = ROTATIONS.get(orientation, 0)
        height = found.size_dots
        obj: dict[str, Any] = {"type": "text", "id": self.object_id(fmt, "text")}
        if variable:
            obj["expression"] = variable
        else:
            obj["content"] = text
        obj.update(
            {
                "font": found.family,
                "size_pt": round(height * 72 / self.dpi, 3),
                "weight": found.weight,
            }
        )
        if found.scale_x is not None:
            obj["scale_x"] = min(10.0, max(0.1, found.scale_x))
        lines = 1
        if current.block is not None:
            block_w, lines, spacing, justification = current.block
            lines = min(100, lines)
            if block_w > 0:
                obj["width_mm"] = dots_to_mm(block_w, self.dpi)
                obj["wrap"] = True
            obj["max_lines"] = lines
            obj["line_spacing"] = min(4.0, max(0.5, round((height + spacing) / height, 3)))
            obj["align"] = {"C": "center", "R": "right"}.get(justification, "left")
            if justification == "J":
                self.note(current.line, "^FB justified text is set flush left.", fmt)
            if "content" in obj:
                obj["content"] = obj["content"].replace("\\&", "\n")
        elif "content" in obj and not obj["content"]:
            return None
        x, y = self.text_start(fmt, current)
        ascent, descent, width, advance = self.metrics(obj, text)
        if not current.typeset:  # ^FO: the cell's top-left; its baseline three quarters down
            low = height * 3 // 4
            left, top = {
                0: (x, y + low - ascent),
                90: (x + height - low - descent, y),
                180: (x, y + height - low - descent),
                270: (x + low - ascent, y),
            }[rotation]
        else:
            if lines > 1:  # ^FT with ^FB: the origin is the baseline of the block's last line
                shift = (lines - 1) * round(obj["line_spacing"] * height)
                x, y = {0: (x, y - shift), 90: (x + shift, y), 180: (x, y + shift)}.get(
                    rotation, (x - shift, y)
                )
            else:
                fmt.pen = {0: (x + advance, y), 90: (x, y + advance), 180: (x - advance, y)}.get(
                    rotation, (x, y - advance)
                )
            left, top = {
                0: (x, y - ascent),
                90: (x - descent, y),
                180: (x - width, y - descent),
            }.get(rotation, (x - ascent, y - width))
        obj["x_mm"] = dots_to_mm(left, self.dpi)
        obj["y_mm"] = dots_to_mm(top, self.dpi)
        if rotation:
            obj["rotation"] = rotation
        return obj

    def text_start(self, fmt: Format, current: Field) -> tuple[int, int]:
        if current.continues:
            if fmt.pen is not None:
                return fmt.pen
            return fmt.home
        return current.x, current.y

    def metrics(self, obj: dict[str, Any], text: str) -> tuple[int, int, int, int]:
        """Our face's ascent and descent, the box width of the (first) line and how far it
        advances the pen, in dots."""

        size_px = obj["size_pt"] / 72 * self.dpi
        face_ = font(obj["font"], obj["weight"], size_px)
        ascent, descent = face_.getmetrics()
        scale = obj.get("scale_x") or 1.0
        sample = text.split("\n")[0] or " "
        left, _, right, _ = face_.getbbox(sample, anchor="ls")
        width = round((int(right) - min(0, int(left))) * scale)
        advance = round(face_.getlength(sample) * scale)
        if "width_mm" in obj:
            width = round(obj["width_mm"] / 25.4 * self.dpi)
        return int(ascent), int(descent), width, advance
