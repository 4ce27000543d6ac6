"""Text objects: lines laid out in a box (wrap, alignment, max_lines, line spacing, shrink to fit).

A text object's box is `width_mm` x `height_mm`; without a width the box is as wide as the widest
line, without a height as tall as the lines. Line i's baseline lies at `ascent + i x pitch`, where
`pitch = round(line_spacing x size_px)` and `size_px = size_pt / 72 x dpi`; the block is
`ascent + descent + (n - 1) x pitch` tall. Glyphs are drawn 1-bit (no anti-aliasing) and clipped
to the box. `shrink_to_fit` reduces the size in half-pixel steps until every line fits the width,
the lines fit the height and `max_lines` cuts nothing off (never below 2 px). `valign` places
the lines in a taller box (top, middle, bottom). `scale_x` widens or narrows the glyphs: the
lines are laid out at the font's own width in a box `1 / scale_x` as wide, drawn anti-aliased,
then stretched and thresholded to 1 bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.errors import ensure_renderable
from etikett_engine.render.fonts import font
from etikett_engine.render.units import BLANK, INK, length_dots, pt_to_px

if TYPE_CHECKING:
    from PIL.ImageFont import FreeTypeFont

    from etikett_engine.dsl.label import TextObject

MIN_SIZE_PX = 2.0


@dataclass(frozen=True)
class Line:
    text: str
    left: int  # ink extent relative to the pen position
    right: int


@dataclass(frozen=True)
class Layout:
    face: FreeTypeFont  # measures (and draws anti-aliased, for `scale_x`); 1-bit: fonts.font
    lines: tuple[Line, ...]
    ascent: int
    descent: int
    pitch: int
    truncated: bool

    @property
    def width(self) -> int:
        return max((line.right - min(0, line.left) for line in self.lines), default=0)

    @property
    def height(self) -> int:
        if not self.lines:
            return 0
        return self.ascent + self.descent + (len(self.lines) - 1) * self.pitch


def render_text(obj: TextObject, text: str, dpi: int) -> Image.Image:
    """The object's ink (mode "1", 255 = black dot), unrotated, exactly its box."""
    key = _key(obj, text, dpi)
    return INK_CACHE.get(key, lambda: _draw(obj, text, dpi, key))


def overflow(obj: TextObject, text: str, dpi: int) -> dict[str, int] | None:
    """How the laid-out text misses its box (after shrinking), or None when it fits: the widest
    line and the block height against the box in dots, and lines cut by `max_lines`. Known
    without a second layout for text drawn before (`render_text` notes it)."""
    if obj.width_mm is None and obj.height_mm is None and obj.max_lines is None:
        return None
    key = _key(obj, text, dpi)
    if key in _MISSES:
        return _MISSES[key]
    box_w = _box_width(obj, dpi)
    box_h = length_dots(obj.height_mm, dpi) if obj.height_mm is not None else None
    size_px = pt_to_px(obj.size_pt, dpi)
    layout = _layout(obj, text, size_px, box_w)
    if obj.shrink_to_fit and (box_w is not None or box_h is not None):
        layout = _shrink(obj, text, size_px, box_w, box_h, layout)
    return _note(key, layout, box_w, box_h, obj.max_lines)


def _box_width(obj: TextObject, dpi: int) -> int | None:
    """The box's width in the font's own (unscaled) dots: what the lines are laid out in."""
    if obj.width_mm is None:
        return None
    width = length_dots(obj.width_mm, dpi)
    if obj.scale_x is None or obj.scale_x == 1:
        return width
    return max(1, int(width / obj.scale_x))


# How each text drawn (by its cache key) missed its box, None if it fit; bounded like a cache.
# The ink of a text notes it too, under OVERFLOW_KEY in its `info`.
OVERFLOW_KEY = "etikett.text_overflow"
_MISSES: dict[tuple[object, ...], dict[str, int] | None] = {}
_MAX_MISSES = 4096


def _note(
    key: tuple[object, ...],
    layout: Layout,
    box_w: int | None,
    box_h: int | None,
    max_lines: int | None,
) -> dict[str, int] | None:
    found = _missed(layout, box_w, box_h, max_lines)
    if len(_MISSES) >= _MAX_MISSES:
        _MISSES.clear()
    _MISSES[key] = found
    return found


def _missed(
    layout: Layout, box_w: int | None, box_h: int | None, max_lines: int | None
) -> dict[str, int] | None:
    if _fits(layout, box_w, box_h):
        return None
    found: dict[str, int] = {}
    if box_w is not None and layout.width > box_w:
        found.update(width_dots=layout.width, box_width_dots=box_w)
    if box_h is not None and layout.height > box_h:
        found.update(height_dots=layout.height, box_height_dots=box_h)
    if layout.truncated:
        found["max_lines"] = max_lines or 0
    return found


def _key(obj: TextObject, text: str, dpi: int) -> tuple[object, ...]:
    return (
        "text",
        text,
        dpi,
        obj.font,
        obj.size_pt,
        obj.weight,
        obj.width_mm,
        obj.height_mm,
        obj.align,
        obj.wrap,
        obj.shrink_to_fit,
        obj.max_lines,
        obj.line_spacing,
        obj.valign,
        obj.scale_x,
    )


def _draw(obj: TextObject, text: str, dpi: int, key: tuple[object, ...]) -> Image.Image:
    box_w = _box_width(obj, dpi)
    box_h = length_dots(obj.height_mm, dpi) if obj.height_mm is not None else None
    size_px = pt_to_px(obj.size_pt, dpi)
    layout = _layout(obj, text, size_px, box_w)
    if obj.shrink_to_fit and (box_w is not None or box_h is not None):
        layout = _shrink(obj, text, size_px, box_w, box_h, layout)
    missed = _note(key, layout, box_w, box_h, obj.max_lines)
    width = box_w if box_w is not None else max(1, layout.width)
    height = box_h if box_h is not None else max(1, layout.height)
    scale = obj.scale_x if obj.scale_x is not None and obj.scale_x != 1 else None
    final_w = width
    if scale is not None:
        final_w = length_dots(obj.width_mm, dpi) if obj.width_mm else max(1, round(width * scale))
    ensure_renderable(max(width, final_w), height, obj.id)
    for line in layout.lines:  # Pillow draws each whole line before it is cut to the box
        ensure_renderable(line.right - min(0, line.left), layout.ascent + layout.descent, obj.id)
    ink = Image.new("1" if scale is None else "L", (width, height), BLANK)
    draw = ImageDraw.Draw(ink)
    if scale is None:
        draw.fontmode = "1"
    drawing = layout.face  # anti-aliased glyphs, stretched below; 1-bit ones on the 1-bit face
    if scale is None:
        drawing = font(obj.font, obj.weight, layout.face.size, one_bit=True)
    top = 0
    if box_h is not None and obj.valign in ("middle", "bottom") and layout.height < box_h:
        top = box_h - layout.height
        top = top // 2 if obj.valign == "middle" else top
    for index, line in enumerate(layout.lines):
        if not line.text:
            continue
        extent = line.right - min(0, line.left)
        if obj.align == "center":
            x = (width - extent) // 2
        elif obj.align == "right":
            x = width - extent
        else:
            x = 0
        baseline = top + layout.ascent + index * layout.pitch
        draw.text((x - min(0, line.left), baseline), line.text, font=drawing, fill=INK, anchor="ls")
    if scale is not None:  # stretched anti-aliased, then cut to one bit: no ragged columns
        stretched = ink.resize((final_w, height), Image.Resampling.LANCZOS)
        ink = stretched.point(lambda v: INK if v >= 128 else BLANK).convert(
            "1", dither=Image.Dither.NONE
        )
    ink.info[OVERFLOW_KEY] = missed  # read by preflight without looking the text up again
    return ink


def _fits(layout: Layout, box_w: int | None, box_h: int | None) -> bool:
    if layout.truncated:
        return False
    if box_w is not None and layout.width > box_w:
        return False
    return box_h is None or layout.height <= box_h


def _shrink(
    obj: TextObject,
    text: str,
    size_px: float,
    box_w: int | None,
    box_h: int | None,
    layout: Layout,
) -> Layout:
    if _fits(layout, box_w, box_h):
        return layout
    # The largest half-pixel size that fits (layouts grow with the size, so bisect).
    low, high = int(MIN_SIZE_PX * 2), int(size_px * 2)
    best = _layout(obj, text, low / 2, box_w)
    while low < high - 1:
        middle = (low + high) // 2
        candidate = _layout(obj, text, middle / 2, box_w)
        if _fits(candidate, box_w, box_h):
            low, best = middle, candidate
        else:
            high = middle
    return best


def _layout(obj: TextObject, text: str, size_px: float, box_w: int | None) -> Layout:
    face = font(obj.font, obj.weight, size_px)
    ascent, descent = face.getmetrics()
    wrap_at = box_w if obj.wrap else None
    lines: list[Line] = []
    for paragraph in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        lines.extend(_wrap(face, paragraph, wrap_at))
    truncated = False
    if obj.max_lines is not None and len(lines) > obj.max_lines:
        lines, truncated = lines[: obj.max_lines], True
    pitch = max(1, round(obj.line_spacing * size_px))
    return Layout(face, tuple(lines), ascent, descent, pitch, truncated)


def _measure(face: FreeTypeFont, text: str) -> Line:
    if not text:
        return Line("", 0, 0)
    left, _, right, _ = face.getbbox(text, anchor="ls")  # ink extent: what must fit the box
    return Line(text, int(left), int(right))


def _wrap(face: FreeTypeFont, paragraph: str, width: int | None) -> list[Line]:
    """Greedy: as many words per line as fit; a word wider than the box is broken anywhere."""
    whole = _measure(face, paragraph)
    if width is None or whole.right - min(0, whole.left) <= width:
        return [whole]
    lines: list[Line] = []
    current = ""
    for word in paragraph.split(" "):
        candidate = f"{current} {word}" if current else word
        measured = _measure(face, candidate)
        if measured.right - min(0, measured.left) <= width:
            current = candidate
            continue
        if current:
            lines.append(_measure(face, current))
        current = word
        while current and _extent(face, current) > width:
            cut = _longest_prefix(face, current, width)
            lines.append(_measure(face, current[:cut]))
            current = current[cut:]
    if current or not lines:
        lines.append(_measure(face, current))
    return lines


def _extent(face: FreeTypeFont, text: str) -> int:
    line = _measure(face, text)
    return line.right - min(0, line.left)


def _longest_prefix(face: FreeTypeFont, word: str, width: int) -> int:
    low, high = 1, len(word)  # at least one character per line, so wrapping always ends
    while low < high:
        middle = (low + high + 1) // 2
        if _extent(face, word[:middle]) <= width:
            low = middle
        else:
            high = middle - 1
    return low
