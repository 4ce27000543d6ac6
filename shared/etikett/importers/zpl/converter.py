"""The conversion of a ZPL file: formats (`^XA … ^XZ`) command by command, then each as a
label document.
"""

from __future__ import annotations

import contextlib
import copy
import re
from typing import Any

from etikett.importers.conversion import Conversion, Imported, dots_to_mm, refuse
from etikett.importers.gs1 import element_string
from etikett.importers.zpl.barcodes import recalled_code128
from etikett.importers.zpl.extent import content_extent, turned_upside_down
from etikett.importers.zpl.fields import FieldReader
from etikett.importers.zpl.fonts import font_size
from etikett.importers.zpl.graphics import GraphicReader, stored_key
from etikett.importers.zpl.reader import Field, Format
from etikett.importers.zpl.syntax import (
    PRINTER_SETTINGS,
    ROTATIONS,
    STORED_IMAGES,
    SUPPORTED_BARCODES,
    UNSUPPORTED_BARCODES,
    Token,
    arg,
    encoding_of,
    split,
    tokens,
)
from etikett_engine.dsl.label import MAX_MM, LabelDocument
from etikett_engine.errors import ProblemCode
from etikett_engine.render.preflight import preflight
from etikett_engine.render.units import MM_PER_INCH


class Converter(FieldReader, GraphicReader):
    """One ZPL file → label documents, one per format, and the report."""

    # --- the file -----------------------------------------------------------------------------

    def run(self, data: bytes) -> Conversion:
        fmt: Format | None = None
        current = Field()
        started = False
        for token in tokens(data):
            name = token.name
            if token.prefix == "~" and name in ("DG", "DY"):
                self.store_graphic(name, token.params, token.line, fmt)
                continue
            if name == "XA":
                if fmt is not None:
                    self.note(token.line, "^XA inside a format: the format so far ends here.", fmt)
                    self.finish(fmt)
                if len(self.result.labels) >= self.max_labels:
                    raise refuse(
                        ProblemCode.IMPORT_TOO_COMPLEX,
                        f"More than {self.max_labels} label formats in one file; split the file.",
                        limit=self.max_labels,
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
            current.placed = True
            current.continues = name == "FT" and not params.strip(" ,")
            current.line = line
            if name == "FO" and arg(args, 2) == "1":
                self.note(
                    line,
                    "^FO right justification is not kept: the field is placed from its left edge.",
                    fmt,
                )
            return current
        if (name[0] == "A" and token.prefix == "^") or name == "GS":
            if name == "GS":
                current.font = ("GS", self.optional_int(args, 1), self.optional_int(args, 2), None)
            else:
                current.font = self.font(fmt, name[1], args)
            orientation = (arg(args, 0) or "").upper()[:1]
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
        if name in SUPPORTED_BARCODES or name in UNSUPPORTED_BARCODES:
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
        elif name == "CW":
            letter, _, font_file = token.params.partition(",")
            if letter.strip() and font_file.strip():
                fmt.aliases[letter.strip()[:1].upper()] = font_file.strip()
        elif name == "LS":
            fmt.shift = self.int_arg(args, 0, 0)
        elif name == "CF":
            font = (arg(args, 0) or fmt.font[0])[:1].upper()
            height = self.int_arg(args, 1, fmt.font[1])
            if arg(args, 2) is not None or not arg(args, 1):
                width = self.int_arg(args, 2, fmt.font[2])
            else:  # the height alone: font 0 as wide as high, a bitmap font magnified alike
                width = font_size(font, height, None, (height, height))[1]
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
            fmt.stores = stored_key(token.params.split(",")[0])
        elif name == "XF":
            fmt.recalls = token.params.split(",")[0].strip()
        elif name == "MU":
            if (arg(args, 0) or "D").upper()[:1] != "D":
                self.note(
                    line,
                    "^MU units other than dots are not supported: values are read as dots.",
                    fmt,
                )
        elif name == "LR":
            fmt.reverse_all = (arg(args, 0) or "N").upper()[:1] == "Y"
        elif name == "PO":
            fmt.inverted = (arg(args, 0) or "N").upper()[:1] == "I"
        elif name in STORED_IMAGES and self.recall_graphic(fmt, current, name, args, line):
            pass
        elif name in STORED_IMAGES:
            # The image lives in the printer's memory, not in the file: the label loses it.
            stored = (arg(args, 0) or "").strip() or "(unnamed)"
            where = "" if name == "IL" else f" at ({current.x}, {current.y}) dots"
            self.note(
                line,
                f"^{name} ({STORED_IMAGES[name]}) prints the image {stored} stored on the "
                f"printer{where}; it is not in the file and was not imported.",
                fmt,
                once=False,
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

    # --- the document -------------------------------------------------------------------------

    def finish(self, fmt: Format) -> None:
        if fmt.recalls is not None and self.merge(fmt):
            return
        if not fmt.objects:  # skipped: its notes concern no document (the next takes its index)
            for note in self.result.report:
                if note.document == fmt.index:
                    note.document = None
        if fmt.recalls is not None and not fmt.objects:
            self.note(
                fmt.line,
                f"The format recalls a stored format ({fmt.recalls}) the file does not hold, "
                "with field data only; import the stored format itself.",
                None,
            )
            return
        if not fmt.objects:
            self.note(fmt.line, "A format without fields was skipped.", None)
            return
        if fmt.stores is not None:
            self.stored[fmt.stores] = (fmt, len(self.result.labels), False)
        self.result.labels.append(self.build(fmt))

    def merge(self, fmt: Format) -> bool:
        """A format that recalls one the file stored (^XF after ^DF): the stored label with this
        format's ^FN data as its variables' samples and this format's own fields added."""
        assert fmt.recalls is not None
        entry = self.stored.get(stored_key(fmt.recalls))
        if entry is None:
            return False
        stored, index, recalled = entry
        for note in self.result.report:
            if note.document == fmt.index:
                note.document = index
        if recalled:
            self.note(
                fmt.line,
                f"The stored format {fmt.recalls} is recalled again with other data; the label "
                "was imported once, with the first recall's data as samples.",
                None,
                "info",
            )
            return True
        merged = copy.deepcopy(stored)
        for obj in fmt.objects:
            line = fmt.lines.get(obj["id"], fmt.line)
            obj["id"] = self.object_id(merged, obj["type"])
            merged.lines[obj["id"]] = line
            merged.objects.append(obj)
        for name, variable in fmt.variables.items():
            merged.variables.setdefault(name, variable)
        gs1 = {
            obj.get("expression")
            for obj in merged.objects
            if obj.get("symbology") in ("gs1-128", "gs1-datamatrix")
        }
        code128s = {
            obj.get("expression"): obj
            for obj in merged.objects
            if obj.get("symbology") == "code128"
        }
        for name, number in merged.numbers.items():
            if number in fmt.field_data:
                sample = fmt.field_data[number]
                if name in gs1:
                    try:
                        sample = element_string(sample.replace(">8", "\x1d"))
                    except ValueError:
                        continue
                elif name in code128s:
                    sample = recalled_code128(code128s[name], sample)
                merged.variables[name]["sample"] = sample
        merged.width = fmt.width or merged.width
        merged.length = fmt.length or merged.length
        self.stored[stored_key(fmt.recalls)] = (merged, index, True)
        self.result.labels[index] = self.build(merged)
        self.note(
            fmt.line,
            f"The format fills in the stored format {fmt.recalls} of this file: one label, its "
            "^FN fields variables with this data as samples.",
            None,
            "info",
        )
        return True

    def build(self, fmt: Format) -> Imported:

        width, length = fmt.width, fmt.length
        default_width = round(4 * self.dpi)
        least = round(1.0 / MM_PER_INCH * self.dpi) + 1
        document: dict[str, Any] = {
            "size": {
                "width_mm": dots_to_mm(width or default_width, self.dpi),
                "height_mm": dots_to_mm(length or int(MAX_MM / MM_PER_INCH * self.dpi), self.dpi),
            },
            "dpi": self.dpi,
            "variables": list(fmt.variables.values()),
            "objects": fmt.objects,
        }
        if width is None or length is None:
            try:
                right, bottom = content_extent(document)
            except ValueError:  # an object the schema refuses: the domain says which
                right, bottom = 0, round(6 * self.dpi)
            if width is None:
                width = max(default_width, right)
                self.note(
                    fmt.line,
                    f"No ^PW: the label is taken as {width} dots wide"
                    + (" (4 in)." if width == default_width else ", as wide as its content."),
                    fmt,
                    "info",
                )
            if length is None:
                length = max(least, bottom)
                self.note(
                    fmt.line,
                    f"No ^LL: the label is as long as its content, {length} dots "
                    f"({dots_to_mm(length, self.dpi)} mm).",
                    fmt,
                    "info",
                )
            document["size"] = {
                "width_mm": dots_to_mm(width, self.dpi),
                "height_mm": dots_to_mm(length, self.dpi),
            }
        if fmt.inverted:
            with contextlib.suppress(ValueError):  # an invalid object: the domain refuses it
                turned_upside_down(document, width, length, self.dpi)
            self.note(fmt.line, "^POI: the label is turned upside down, as it prints.", fmt, "info")
        self.findings(fmt, document)
        base = self.name.rsplit(".", 1)[0] if "." in self.name else self.name
        name = fmt.name or base or "Imported label"
        if fmt.name is None and fmt.index > 0:
            name = f"{name} ({fmt.index + 1})"
        return Imported(name=name[:200], document=document)

    def findings(self, fmt: Format, document: dict[str, Any]) -> None:
        """Preflight errors of the imported label, each in the report with its object's line:
        what prints cut off or cannot encode is seen at import, not only later."""

        try:
            found = preflight(LabelDocument.model_validate(document))
        except Exception:  # the domain validates the document and refuses it with its errors
            return
        for finding in found:
            if finding.severity != "error":
                continue
            line = fmt.lines.get(finding.object_id or "", fmt.line)
            self.note(
                line,
                f"{finding.message} ({finding.code})",
                fmt,
                once=False,
            )
