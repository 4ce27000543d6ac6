"""Raster rows as printer bytes: rows padded to whole bytes, most significant bit leftmost."""

from __future__ import annotations

from PIL import Image

# Pillow packs a row least significant bit first ("1;IR") in about 60 % of the time its most
# significant bit first packers ("1;I", "1") take on these machines (bench/README.md), and one
# `translate` of the packed bytes turns each round: byte → its bits in reverse order (and, for
# languages where a 0 bit prints black, complemented too). The padding bits come out the same.
_REVERSED = bytes(int(f"{value:08b}"[::-1], 2) for value in range(256))
_REVERSED_INVERTED = bytes(255 - value for value in _REVERSED)


def bytes_per_row(image: Image.Image) -> int:
    return (image.width + 7) // 8


def black_is_one(image: Image.Image) -> bytes:
    """1 = black dot; the padding bits at the end of a row are 0 (no dot)."""
    return _mode1(image).tobytes("raw", "1;IR").translate(_REVERSED)


def black_is_zero(image: Image.Image) -> bytes:
    """0 = black dot; the padding bits at the end of a row are 1 (no dot)."""
    return _mode1(image).tobytes("raw", "1;IR").translate(_REVERSED_INVERTED)


def _mode1(image: Image.Image) -> Image.Image:
    if image.mode != "1":
        raise ValueError(f"a label raster is a mode '1' image, not {image.mode!r}")
    return image
