"""The conversion of a ZPL file: formats (`^XA … ^XZ`) command by command, then each as a
label document.
"""

from __future__ import annotations

import re

from etikett.errors import ProblemCode
from etikett.importers import Conversion, Imported, dots_to_mm, refuse
from etikett.importers.zpl.fields import FieldReader
from etikett.importers.zpl.graphics import GraphicReader
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


class Converter(FieldReader, GraphicReader):
    """One ZPL file → label documents, one per format, and the report."""

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
