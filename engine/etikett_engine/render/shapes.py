"""Boxes, lines and ellipses as ink (mode "1", 255 = black dot), unrotated.

Inks are cached by their size in dots like texts and barcodes: a label's frame is drawn once,
and what preflight notes on an ink (its dot box, which of its dots lie in a barcode's quiet
zone) holds for every label that has the same shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.errors import ensure_renderable
from etikett_engine.render.units import BLANK, INK, length_dots

if TYPE_CHECKING:
    from etikett_engine.dsl.label import BoxObject, EllipseObject, LineObject


def render_box(obj: BoxObject, dpi: int) -> Image.Image:
    """The frame lies inside the box; a fill covers the whole box."""
    width, height = length_dots(obj.width_mm, dpi), length_dots(obj.height_mm, dpi)
    ensure_renderable(width, height, obj.id)
    line = min(length_dots(obj.line_mm, dpi), (min(width, height) + 1) // 2)
    radius = min(round(obj.corner_radius_mm / 25.4 * dpi), min(width, height) // 2)
    key = ("box", width, height, line, radius, obj.fill)
    return INK_CACHE.get(key, lambda: _box(width, height, line, radius, obj.fill))


def _box(width: int, height: int, line: int, radius: int, fill: bool) -> Image.Image:
    ink = Image.new("1", (width, height), BLANK)
    draw = ImageDraw.Draw(ink)
    shape = (0, 0, width - 1, height - 1)
    if radius > 0:
        draw.rounded_rectangle(
            shape, radius=radius, fill=INK if fill else None, outline=INK, width=line
        )
    else:
        draw.rectangle(shape, fill=INK if fill else None, outline=INK, width=line)
    return ink


def render_line(obj: LineObject, dpi: int) -> Image.Image:
    """Rotation 0: `length` to the right, `thickness` downwards from the anchor."""
    length, thickness = length_dots(obj.length_mm, dpi), length_dots(obj.thickness_mm, dpi)
    ensure_renderable(length, thickness, obj.id)
    return INK_CACHE.get(
        ("line", length, thickness), lambda: Image.new("1", (length, thickness), INK)
    )


def render_ellipse(obj: EllipseObject, dpi: int) -> Image.Image:
    width, height = length_dots(obj.width_mm, dpi), length_dots(obj.height_mm, dpi)
    ensure_renderable(width, height, obj.id)
    line = min(length_dots(obj.line_mm, dpi), (min(width, height) + 1) // 2)
    key = ("ellipse", width, height, line, obj.fill)
    return INK_CACHE.get(key, lambda: _ellipse(width, height, line, obj.fill))


def _ellipse(width: int, height: int, line: int, fill: bool) -> Image.Image:
    ink = Image.new("1", (width, height), BLANK)
    ImageDraw.Draw(ink).ellipse(
        (0, 0, width - 1, height - 1), fill=INK if fill else None, outline=INK, width=line
    )
    return ink
