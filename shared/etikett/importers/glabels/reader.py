"""What every part of a gLabels conversion uses: its state, the report, lengths and their units,
object ids, merge fields as variables, colours, and the small value conversions.
"""

from __future__ import annotations

import re
from typing import Any
from xml.etree.ElementTree import Element

from etikett.importers.conversion import Conversion, Note, Severity, refuse
from etikett_engine.dsl.label import MAX_MM, MIN_LABEL_MM
from etikett_engine.errors import ProblemCode

UNITS_MM = {"pt": 25.4 / 72, "in": 25.4, "mm": 1.0, "cm": 10.0, "pc": 25.4 / 6, "": 25.4 / 72}
FIELD = re.compile(r"\$\{([^}]+)\}")


def flag(value: str | None, default: bool = False) -> bool:
    if value is None:
        return default
    return value.strip().lower() in ("true", "1", "yes")


def cel_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class Reader:
    """The state of one conversion and what every part of it uses."""

    def __init__(self, name: str, dpi: int) -> None:
        self.name = name
        self.dpi = dpi
        self.result = Conversion(format="glabels")
        self.variables: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self.files: dict[str, bytes] = {}
        self.version = 4  # the document format's major version (3: glabels 3.x, 4: glabels-qt)

    def note(self, element: str | None, message: str, severity: Severity = "warning") -> None:
        if any(n.message == message and n.element == element for n in self.result.report):
            return
        self.result.report.append(Note(severity, message, element=element, document=0))

    def size(self, width: str | None, height: str | None, where: str) -> tuple[float, float]:
        w, h = self.length(width, where), self.length(height, where)
        if not (MIN_LABEL_MM <= w <= MAX_MM and MIN_LABEL_MM <= h <= MAX_MM):
            raise refuse(
                ProblemCode.IMPORT_SIZE_INVALID,
                f"The label size {width} × {height} ({where}) is not {MIN_LABEL_MM:g} to "
                f"{MAX_MM:g} mm.",
                element=where,
            )
        return round(w, 4), round(h, 4)

    def length(self, value: str | None, where: str, default: float = 0.0) -> float:
        """A gLabels length (`12pt`, `1in`, `25.4mm`, `2cm`, `1pc`, plain points) in mm."""
        if value is None or not value.strip():
            return default
        match = re.fullmatch(r"\s*(-?[0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([a-z]*)\s*", value)
        if match is None or match.group(2) not in UNITS_MM:
            self.note(where, f"The length {value!r} is not understood; 0 is used.")
            return default
        mm = float(match.group(1)) * UNITS_MM[match.group(2)]
        return max(-MAX_MM, min(MAX_MM, mm))

    def next_id(self, kind: str) -> str:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{kind}_{self.counts[kind]}"

    def variable(self, name: str) -> str:
        identifier = re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_").lower() or "field"
        if identifier[0].isdigit():
            identifier = "f_" + identifier
        if identifier in ("now", "counters", "value"):
            identifier += "_field"
        identifier = identifier[:64]
        self.variables.setdefault(
            identifier,
            {
                "name": identifier,
                "type": "string",
                "description": f"gLabels merge field {name}",
                "sample": name,
            },
        )
        return identifier

    def color(self, node: Element, attribute: str, where: str) -> bool:
        """Whether the colour prints (opaque, darker than middle grey); other colours are noted."""
        return self.ink(node, attribute, where) == "black"

    def ink(self, node: Element, attribute: str, where: str) -> str | None:
        """How a colour prints on a 1-bit label: `black` (dark), `white` (light: it clears what
        lies under it), None (transparent). Colours that are neither black nor white are noted."""
        value = node.get(attribute)
        if value is None:
            return "black"
        try:
            rgba = int(value, 0)
        except ValueError:
            return "black"
        if rgba & 0xFF == 0:
            return None
        r, g, b = (rgba >> 24) & 0xFF, (rgba >> 16) & 0xFF, (rgba >> 8) & 0xFF
        luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
        found = "black" if luminance < 0.5 else "white"
        if (r, g, b) not in ((0, 0, 0), (255, 255, 255)):
            self.note(where, f"The colour {value} prints {found}.")
        return found
