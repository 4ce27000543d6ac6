"""What the conversion of a ZPL file reads into: a format (one label) and the field being
defined, and the reader's own parts every kind of object uses (the report, numbers, ids).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from etikett.importers.conversion import Conversion, Note, Severity, refuse
from etikett.importers.zpl.syntax import arg
from etikett_engine.dsl.label import MAX_MM, MIN_LABEL_MM
from etikett_engine.errors import ProblemCode

NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d*)?")


@dataclass
class Field:
    x: int = 0
    y: int = 0
    typeset: bool = False  # ^FT: baseline / bottom origin
    placed: bool = False  # ^FO or ^FT seen: a field of the layout, not data for a stored format
    font: tuple[str, int | None, int | None, str | None] | None = None  # name, h, w, file
    orientation: str | None = None
    hex_indicator: str | None = None
    block: tuple[int, int, int, str] | None = None  # width, lines, spacing, justification
    number: int | None = None
    number_name: str | None = None
    barcode: tuple[str, list[str], int] | None = None  # command, params, line
    data: str | None = None
    reverse: bool = False
    line: int = 0
    continues: bool = False  # ^FT without coordinates: after the previous field


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
    recalls: str | None = None  # ^XF: the stored format this one fills in
    stores: str | None = None  # ^DF: the name this format is stored under
    field_data: dict[int, str] = field(default_factory=dict)  # ^FNn^FD… of a recalling format
    aliases: dict[str, str] = field(default_factory=dict)  # ^CW letter → font file
    reverse_all: bool = False  # ^LRY
    inverted: bool = False  # ^POI
    pen: tuple[int, int] | None = None  # where the next ^FT without coordinates starts
    lines: dict[str, int] = field(default_factory=dict)  # object id → line of the file
    numbers: dict[str, int] = field(default_factory=dict)  # variable → its ^FN number


class Reader:
    """The state of one conversion and what every part of it uses."""

    def __init__(self, name: str, dpi: int, max_expanded: int, max_labels: int) -> None:
        self.name = name
        self.dpi = dpi
        self.budget = max_expanded  # graphic bytes the whole file may expand to
        self.max_expanded = max_expanded
        self.pngs: dict[str, str] = {}  # PNG of each stored graphic recalled, by its name
        self.max_labels = max_labels
        self.result = Conversion(format="zpl")
        self.noted: set[tuple[int | None, str]] = set()
        self.graphics: dict[str, Any] = {}  # ~DG/~DY graphics by their stored name
        self.stored: dict[str, tuple[Format, int, bool]] = {}  # ^DF name → format, label, recalled

    # --- report -------------------------------------------------------------------------------

    def note(
        self,
        line: int | None,
        message: str,
        fmt: Format | None,
        severity: Severity = "warning",
        *,
        once: bool = True,
    ) -> None:
        """`once`: the same message once per label (a font note, say); a dropped field is
        reported every time, since each is a different part of the label."""
        key = (fmt.index if fmt else None, message)
        if once and key in self.noted:
            return
        self.noted.add(key)
        self.result.report.append(
            Note(severity, message, line=line, document=fmt.index if fmt else None)
        )

    # --- numbers ------------------------------------------------------------------------------

    def int_arg(self, args: list[str], index: int, default: int) -> int:
        """The number at the start of the argument (what follows it, a `;` comment say, is not
        part of it), or `default` when there is none."""
        value = arg(args, index)
        if value is None:
            return default
        match = NUMBER.match(value)
        if match is None:
            return default
        return int(float(match.group(0)))

    def optional_int(self, args: list[str], index: int) -> int | None:
        value = self.int_arg(args, index, -1)
        return None if value < 0 else value

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

    def font(
        self, fmt: Format, letter: str, args: list[str]
    ) -> tuple[str, int | None, int | None, str | None]:
        """A ^A command as given: font name, height and width (None: omitted) and the font file
        it names (^A@) or its ^CW alias names."""
        height, width = self.optional_int(args, 1), self.optional_int(args, 2)
        if letter == "@":
            return ("@", height, width, (arg(args, 3) or "").strip())
        name = letter.upper()
        return (name, height, width, fmt.aliases.get(name))

    def object_id(self, fmt: Format, kind: str) -> str:
        fmt.counts[kind] = fmt.counts.get(kind, 0) + 1
        return f"{kind}_{fmt.counts[kind]}"
