"""Image objects: base64 PNG/JPEG scaled to the box and reduced to 1 bit (dithered or threshold)."""

from __future__ import annotations

import base64
import binascii
import io
from typing import TYPE_CHECKING

from PIL import Image, ImageOps, UnidentifiedImageError

from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.errors import ImageInvalid, ensure_renderable
from etikett_engine.render.units import length_dots

if TYPE_CHECKING:
    from etikett_engine.dsl.label import ImageObject

FORMATS = ("PNG", "JPEG")
MAX_SOURCE_PIXELS = 40_000_000  # a decompression bomb is refused before it is decoded


def render_image(obj: ImageObject, dpi: int) -> Image.Image:
    """The object's ink (mode "1", 255 = black dot). Transparent pixels count as white."""
    size = (length_dots(obj.width_mm, dpi), length_dots(obj.height_mm, dpi))
    ensure_renderable(*size, obj.id)
    key = ("image", obj.content_base64, size, obj.dither, obj.threshold)
    return INK_CACHE.get(
        key, lambda: _draw(obj.id, obj.content_base64, size, obj.dither, obj.threshold)
    )


def _draw(
    object_id: str, content: str, size: tuple[int, int], dither: str, threshold: int
) -> Image.Image:
    gray = _decode(object_id, content).resize(size, Image.Resampling.LANCZOS)
    if dither == "floyd-steinberg":
        bits = gray.convert("1", dither=Image.Dither.FLOYDSTEINBERG)
    else:
        bits = gray.point(lambda value: 255 if value >= threshold else 0).convert(
            "1", dither=Image.Dither.NONE
        )
    return ImageOps.invert(bits.convert("L")).convert("1", dither=Image.Dither.NONE)


def _decode(object_id: str, content: str) -> Image.Image:
    try:
        raw = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageInvalid(object_id, "content_base64 is not valid base64") from exc
    try:
        with Image.open(io.BytesIO(raw), formats=FORMATS) as source:
            width, height = source.size
            if width * height > MAX_SOURCE_PIXELS:
                raise ImageInvalid(object_id, f"{width}x{height} pixels is too large")
            source.load()
            return _flatten(ImageOps.exif_transpose(source))
    except ImageInvalid:
        raise
    except (
        UnidentifiedImageError,
        OSError,
        ValueError,
        SyntaxError,
        Image.DecompressionBombError,
    ) as exc:
        raise ImageInvalid(object_id, "not a decodable PNG or JPEG image") from exc


def _flatten(source: Image.Image) -> Image.Image:
    """Grayscale on white: transparency becomes paper."""
    if source.mode in ("RGBA", "LA", "PA") or "transparency" in source.info:
        rgba = source.convert("RGBA")
        paper = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(paper, rgba).convert("L")
    return source.convert("L")
