"""Boxes, lines and ellipses as ink (mode "1", 255 = black dot), unrotated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from etikett.render.errors import ensure_renderable
from etikett.render.units import BLANK, INK, length_dots

if TYPE_CHECKING:
    from etikett.dsl.label import BoxObject, EllipseObject, LineObject


def render_box(obj: BoxObject, dpi: int) -> Image.Image:
    """The frame lies inside the box; a fill covers the whole box."""
    width, height = length_dots(obj.width_mm, dpi), length_dots(obj.height_mm, dpi)
    ensure_renderable(width, height, obj.id)
    ink = Image.new("1", (width, height), BLANK)
    line = min(length_dots(obj.line_mm, dpi), (min(width, height) + 1) // 2)
    radius = min(round(obj.corner_radius_mm / 25.4 * dpi), min(width, height) // 2)
    draw = ImageDraw.Draw(ink)
    shape = (0, 0, width - 1, height - 1)
    if radius > 0:
        draw.rounded_rectangle(
            shape, radius=radius, fill=INK if obj.fill else None, outline=INK, width=line
        )
    else:
        draw.rectangle(shape, fill=INK if obj.fill else None, outline=INK, width=line)
    return ink


def render_line(obj: LineObject, dpi: int) -> Image.Image:
    """Rotation 0: `length` to the right, `thickness` downwards from the anchor."""
    length, thickness = length_dots(obj.length_mm, dpi), length_dots(obj.thickness_mm, dpi)
    ensure_renderable(length, thickness, obj.id)
    return Image.new("1", (length, thickness), INK)


def render_ellipse(obj: EllipseObject, dpi: int) -> Image.Image:
    width, height = length_dots(obj.width_mm, dpi), length_dots(obj.height_mm, dpi)
    ensure_renderable(width, height, obj.id)
    ink = Image.new("1", (width, height), BLANK)
    line = min(length_dots(obj.line_mm, dpi), (min(width, height) + 1) // 2)
    ImageDraw.Draw(ink).ellipse(
        (0, 0, width - 1, height - 1), fill=INK if obj.fill else None, outline=INK, width=line
    )
    return ink
