"""Millimetres and points to printer dots: the one rounding rule every object uses.

A length in mm becomes `round(mm / 25.4 * dpi)` dots (Python's `round`: half to even, the same
expression as the label size). Positions and sizes are rounded independently, so an object keeps
its size in dots wherever it is placed.
"""

from __future__ import annotations

MM_PER_INCH = 25.4
POINTS_PER_INCH = 72.0


def mm_to_dots(mm: float, dpi: int) -> int:
    return round(mm / MM_PER_INCH * dpi)


def length_dots(mm: float, dpi: int) -> int:
    """A size that must stay visible: at least one dot."""
    return max(1, mm_to_dots(mm, dpi))


def pt_to_px(points: float, dpi: int) -> float:
    return points / POINTS_PER_INCH * dpi


def label_dots(width_mm: float, height_mm: float, dpi: int) -> tuple[int, int]:
    return length_dots(width_mm, dpi), length_dots(height_mm, dpi)


# Pixel values of mode "1" images: the label raster is WHITE paper with BLACK dots; an object's
# ink mask is INK where it prints a dot, BLANK elsewhere.
BLACK = 0
WHITE = 255
INK = 255
BLANK = 0
