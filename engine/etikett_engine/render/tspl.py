"""TSPL (TSC and compatible printers): one label as a `BITMAP` in overwrite mode.

TSPL's BITMAP data prints a dot for a 0 bit (1 = no dot), rows of `width bytes` MSB first, so the
raster's mode-"1" bits go out as they are and row padding is 1 (white).
"""

from __future__ import annotations

from PIL import Image

from etikett_engine.render.bits import black_is_zero, bytes_per_row

MM_PER_INCH = 25.4


def encode_tspl(
    image: Image.Image, *, copies: int = 1, dpi: int = 203, gap_mm: float = 3.0
) -> bytes:
    """SIZE, GAP, CLS, BITMAP 0,0,… (mode 0 = overwrite), PRINT 1,<copies>."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    width_mm = image.width / dpi * MM_PER_INCH
    height_mm = image.height / dpi * MM_PER_INCH
    head = (
        f"SIZE {_mm(width_mm)} mm,{_mm(height_mm)} mm\r\n"
        f"GAP {_mm(gap_mm)} mm,0 mm\r\n"
        "CLS\r\n"
        f"BITMAP 0,0,{bytes_per_row(image)},{image.height},0,"
    ).encode("ascii")
    return head + black_is_zero(image) + f"\r\nPRINT 1,{copies}\r\n".encode("ascii")


def _mm(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")
