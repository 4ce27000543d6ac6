"""A label document and its resolved values → the exact 1-bit raster the printer prints.

The raster is a PIL image in mode "1" (0 = black dot), `round(width_mm / 25.4 x dpi)` x
`round(height_mm / 25.4 x dpi)` dots. Objects are drawn in list order and only ever add black dots
(nothing prints white over an earlier object). Lengths become dots by `etikett_engine.render.units`:
`round(mm / 25.4 x dpi)`, position and size rounded independently.

Rotation (0/90/180/270, clockwise, as seen on the label with y growing downwards) turns the
object's box about its top-left anchor, and the rotated box is then placed with its top-left corner
at (x_mm, y_mm). So an object w x h dots occupies x..x+w, y..y+h at 0 and 180, and x..x+h, y..y+w
at 90 and 270. At 90 the object's top edge becomes the right side of the rotated box (text
reads top to bottom, a line runs down from the anchor); at 180 the object is upside down in its
own box; at 270 its top edge becomes the left side (text reads bottom to top). Parts of objects
outside the label are cut off.

An object's `ink` says how its dots reach the label: black (absent) adds them, white clears the
dots under them, reverse inverts what lies under them (white on black, black on white).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageChops, _imaging

from etikett_engine.render.barcode import render_barcode
from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.errors import ensure_renderable
from etikett_engine.render.image import render_image
from etikett_engine.render.ink_plan import TURN, put
from etikett_engine.render.png import to_png
from etikett_engine.render.shapes import render_box, render_ellipse, render_line
from etikett_engine.render.text import render_text
from etikett_engine.render.units import BLACK, WHITE, label_dots, mm_to_dots
from etikett_engine.render.values import declared_types, object_text

if TYPE_CHECKING:
    from etikett_engine.dsl.label import LabelDocument, LabelObject

__all__ = ["clear_caches", "dots", "object_ink", "paint", "render", "to_png"]

# Pillow frees an image's memory blocks at once unless told to keep some (its arena's
# `blocks_max`, 0 by default; PILLOW_BLOCKS_MAX). A label, its ink and its packed copies live
# side by side, so each render then asked the system for fresh memory and paid a page fault for
# every 4 KB it touched: ≈ 0.45 ms of a 4 × 6 in label's 1 ms on these machines (bench/README.md).
# Four kept blocks (each at most Pillow's 16 MB block size) are reused by the next label instead.
BLOCKS_KEPT = 4
if _imaging.get_blocks_max() < BLOCKS_KEPT:
    _imaging.set_blocks_max(BLOCKS_KEPT)


def render(
    document: LabelDocument,
    values: Mapping[str, Any],
    *,
    now: datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> Image.Image:
    """Draw every object of the document; `values` are the resolved variables."""
    dpi = document.dpi
    size = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    ensure_renderable(*size)
    canvas = Image.new("1", size, WHITE)
    declared = declared_types(document)
    for obj in document.objects:
        ink = object_ink(obj, values, declared, dpi, now=now, counters=counters)
        paint(canvas, obj, ink, (mm_to_dots(obj.x_mm, dpi), mm_to_dots(obj.y_mm, dpi)))
    return canvas


def paint(canvas: Image.Image, obj: LabelObject, ink: Image.Image, at: tuple[int, int]) -> None:
    """Put one object's ink (unrotated, as `object_ink` makes it) on the label, turned by the
    object's rotation, its top-left corner at `at`, as the object's `ink` says."""
    if obj.ink is None or obj.ink == "black":
        put(canvas, ink, obj.rotation, at, BLACK)
    elif obj.ink == "white":
        put(canvas, ink, obj.rotation, at, WHITE)
    else:  # reverse: only the part on the label (a crop past the edge would read as black)
        if obj.rotation:
            ink = ink.transpose(TURN[obj.rotation])
        left, top = max(0, at[0]), max(0, at[1])
        right = min(canvas.width, at[0] + ink.width)
        bottom = min(canvas.height, at[1] + ink.height)
        if left >= right or top >= bottom:
            return
        mask = ink.crop((left - at[0], top - at[1], right - at[0], bottom - at[1]))
        under = canvas.crop((left, top, right, bottom))
        canvas.paste(ImageChops.logical_xor(under, mask), (left, top))


def object_ink(
    obj: LabelObject,
    values: Mapping[str, Any],
    declared: Mapping[str, Any],
    dpi: int,
    *,
    now: datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> Image.Image:
    """One object's ink, unrotated: mode "1", 255 where it prints a black dot."""
    if obj.type == "text":
        return render_text(obj, object_text(obj, values, declared, now=now, counters=counters), dpi)
    if obj.type == "barcode":
        data = object_text(obj, values, declared, now=now, counters=counters)
        return render_barcode(obj, data, dpi)
    if obj.type == "box":
        return render_box(obj, dpi)
    if obj.type == "line":
        return render_line(obj, dpi)
    if obj.type == "ellipse":
        return render_ellipse(obj, dpi)
    return render_image(obj, dpi)


def clear_caches() -> None:
    """Forget every cached object ink (loaded fonts stay): benchmarks, memory."""
    INK_CACHE.clear()


def dots(image: Image.Image) -> tuple[int, int]:
    """(width, height) in printer dots."""
    return image.size
