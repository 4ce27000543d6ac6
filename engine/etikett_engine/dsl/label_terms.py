"""The label document's vocabulary: densities, rotations, symbologies, fonts, inks, bounds, and
the annotations that the console's generated property panels read (`ui`)."""

from typing import Any, Literal

DPI = Literal[203, 300, 600]
Rotation = Literal[0, 90, 180, 270]
VariableType = Literal["string", "integer", "number", "date", "boolean"]
Symbology = Literal[
    "code128",
    "gs1-128",
    "ean13",
    "upca",
    "code39",
    "itf14",
    "qr",
    "datamatrix",
    "gs1-datamatrix",
    "pdf417",
]
FontFamily = Literal["Roboto", "Roboto Condensed", "Roboto Mono", "Noto Sans"]
# How an object's dots reach the label: black adds dots, white clears them, reverse inverts what
# lies under them (ZPL ^FR, ^LR; gLabels' white fills). Absent: black.
Ink = Literal["black", "white", "reverse"]

# Titles for people (symbologies as printers and scanners name them), in `Symbology`'s order.
SYMBOLOGY_TITLES = {
    "code128": "Code 128",
    "gs1-128": "GS1-128",
    "ean13": "EAN-13",
    "upca": "UPC-A",
    "code39": "Code 39",
    "itf14": "ITF-14",
    "qr": "QR Code",
    "datamatrix": "Data Matrix",
    "gs1-datamatrix": "GS1 DataMatrix",
    "pdf417": "PDF417",
}
# Symbologies whose content is a GS1 element string in `(AI)value` notation.
GS1_SYMBOLOGIES = ("gs1-128", "gs1-datamatrix")

MAX_MM = 1000.0
# No label is smaller; below it a size rounds to no dots (and DynamoDB holds no number under
# 1e-130, which `gt=0` alone would let through).
MIN_LABEL_MM = 1.0
RESERVED_NAMES = frozenset({"now", "counters", "value"})  # names CEL expressions get from us


def ui(group: str | None = None, unit: str | None = None, **extra: Any) -> dict[str, Any]:
    """Annotations for forms generated from the schema (the console's property panels): the
    section a field belongs in (`x-group`), its unit (`x-unit`: mm, pt, dots, degrees), and
    others such as `x-cel` (a CEL expression) or `x-enum-titles` (names of an enum's values)."""
    found: dict[str, Any] = {f"x-{k.replace('_', '-')}": v for k, v in extra.items()}
    if group is not None:
        found["x-group"] = group
    if unit is not None:
        found["x-unit"] = unit
    return found


CEL = ui(cel=True)
