"""EPL2 (Eltron/Zebra): one label as a `GW` direct graphic write.

EPL's GW data prints a dot for a 0 bit (1 = no dot), rows of `width bytes` MSB first; row padding
is 1 (white).
"""

from __future__ import annotations

from PIL import Image

from etikett_engine.render.bits import black_is_zero, bytes_per_row

MM_PER_INCH = 25.4


def encode_epl(
    image: Image.Image, *, copies: int = 1, dpi: int = 203, gap_mm: float = 3.0
) -> bytes:
    """N, q<width>, Q<height>,<gap>, GW0,0,…, P<copies>."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    gap = max(0, round(gap_mm / MM_PER_INCH * dpi))
    head = (
        f"\r\nN\r\nq{image.width}\r\nQ{image.height},{gap}\r\n"
        f"GW0,0,{bytes_per_row(image)},{image.height},"
    ).encode("ascii")
    return head + black_is_zero(image) + f"\r\nP{copies}\r\n".encode("ascii")
