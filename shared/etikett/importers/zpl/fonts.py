"""ZPL fonts as the printer sizes them, and the shipped faces that print closest to them.

Sizes follow the ZPL II guide: the scalable font 0 takes any height and width (one omitted
equals the other; both omitted, the `^CF` default); the bitmap fonts A-H and GS only print at
whole multiples of their cell (a value is rounded to the nearest multiple, at least one; 0 is
the native cell). A height is the font's em in dots, as Zebra's renderers and Labelary draw it.
Faces: font 0 (CG Triumvirate Bold Condensed) → Roboto Condensed bold; the fixed-pitch bitmap
fonts → Roboto Mono, its 0.6 em advance stretched so that characters are as far apart as the
printer's cells (cell width plus gap, `1.2 × width`); fonts downloaded to the printer (`^A@`,
`^CW`, digits 1-9) → Roboto, noted as substituted.
"""

from __future__ import annotations

from dataclasses import dataclass

# Cell height × width in dots of Zebra's built-in bitmap fonts (ZPL II guide, "Fonts and Bar
# Codes"), and of the symbol font ^GS.
BITMAP_CELLS: dict[str, tuple[int, int]] = {
    "A": (9, 5),
    "B": (11, 7),
    "C": (18, 10),
    "D": (18, 10),
    "E": (28, 15),
    "F": (26, 13),
    "G": (60, 40),
    "H": (21, 13),
    "GS": (24, 24),
}
# Printer-resident names of font 0 (`^A@…E:TT0003M_.FNT`, `^CW…`): the same CG Triumvirate.
FONT_ZERO_FILES = ("TT0003M_", "TT0003M")
MONO_ADVANCE_EM = 0.6  # Roboto Mono's advance, 1229/2048 em
# ^GS characters: registered, copyright, trademark; UL and CSA marks have no character.
SYMBOLS = {"A": "®", "B": "©", "C": "™", "D": "UL", "E": "CSA"}


@dataclass(frozen=True)
class Face:
    """How a ZPL font prints here: the family, weight, em size in dots, glyph stretch, and what
    was substituted (None: the usual, metrics-compatible mapping)."""

    family: str
    weight: int
    size_dots: int
    scale_x: float | None
    substituted: str | None = None
    note: str | None = None  # an approximation worth an info line


def font_size(
    name: str, height: int | None, width: int | None, default: tuple[int, int]
) -> tuple[int, int]:
    """(height, width) in dots the printer uses for font `name` given `^A` values (None: the
    value was omitted) and the `^CF` default (height, width)."""
    cell = BITMAP_CELLS.get(name)
    if cell is None:  # scalable: one omitted equals the other, both omitted the ^CF default
        if height is None and width is None:
            height, width = default
        h = height if height is not None else width
        w = width if width is not None else height
        h, w = h or w or default[0], w or h or default[1]
        return max(10, h or 10), max(10, w or 10)  # Zebra never prints font 0 under 10 dots
    cell_h, cell_w = cell
    if not height and not width:
        return cell_h, cell_w
    if height:
        times_h = max(1, round(height / cell_h))
    if width:
        times_w = max(1, round(width / cell_w))
    if not height:
        times_h = times_w
    if not width:
        times_w = times_h
    return cell_h * times_h, cell_w * times_w


def face(name: str, height: int, width: int, alias: str | None = None) -> Face:
    """The face that prints font `name` at `height` × `width` dots; `alias` is the file a `^CW`
    or `^A@` names for it."""
    if alias is not None:
        stem = alias.split(":")[-1].rsplit(".", 1)[0].upper()
        if stem in FONT_ZERO_FILES:
            return face("0", height, width)
        scale = None if width == height or not width else round(width / height, 3)
        return Face("Roboto", 500, height, scale, substituted=alias or "(unnamed)")
    if name == "0":
        scale = None if abs(width - height) <= max(1, height // 50) else round(width / height, 3)
        return Face("Roboto Condensed", 700, height, scale)
    if name == "GS":
        return Face("Noto Sans", 500, height, None)
    if name in BITMAP_CELLS:
        # Characters as far apart as the printer's cells: advance 0.6 em × scale = 1.2 × width.
        scale = round(1.2 * width / (MONO_ADVANCE_EM * height), 3)
        weight = 700 if name == "B" else 500
        return Face(
            "Roboto Mono",
            weight,
            height,
            None if abs(scale - 1) < 0.01 else scale,
            note=f"Bitmap font {name} ({height} × {width} dots) is printed with Roboto Mono, "
            "its characters as far apart as the printer's.",
        )
    scale = None if width == height or not width else round(width / height, 3)
    return Face("Roboto", 500, height, scale, substituted=f"font {name}")
