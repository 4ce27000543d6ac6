"""Raster rows as printer bytes: rows padded to whole bytes, most significant bit leftmost."""

from __future__ import annotations

from PIL import Image

# Byte → its complement, for languages where a 0 bit prints black.
_INVERT = bytes(255 - value for value in range(256))


def bytes_per_row(image: Image.Image) -> int:
    return (image.width + 7) // 8


def black_is_one(image: Image.Image) -> bytes:
    """1 = black dot; the padding bits at the end of a row are 0 (no dot)."""
    return _mode1(image).tobytes("raw", "1;I")


def black_is_zero(image: Image.Image) -> bytes:
    """0 = black dot; the padding bits at the end of a row are 1 (no dot)."""
    return black_is_one(image).translate(_INVERT)


def _mode1(image: Image.Image) -> Image.Image:
    if image.mode != "1":
        raise ValueError(f"a label raster is a mode '1' image, not {image.mode!r}")
    return image
