"""Raster rows as printer bytes: rows padded to whole bytes, most significant bit leftmost.

NumPy packs the dots (`packbits`, vectorised): a 4 x 6 in label at 203 dpi in ≈ 0.2 ms, where
Pillow's fastest packer ("1;IR" and a `translate`) took ≈ 0.9 ms on these machines
(bench/README.md). Pillow's raw encoder hands the raster over a band of rows at a time, a byte a
dot: one copy of a whole label would be fresh memory from the system on most labels (glibc returns
blocks that large at once), and faulting its pages in cost more than the packing saved. NumPy is
imported by the first packing, not with the renderer: a process that never packs a raster (most
of the service's functions) does not pay its ≈ 70 ms import. It is imported with OpenBLAS held to
the calling thread: packing uses no linear algebra, and OpenBLAS otherwise starts a thread per
core at import that spends 60-130 ms of CPU setting itself up beside the first label
(bench/README.md); `OPENBLAS_NUM_THREADS` set by whoever runs the engine still decides.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PIL import Image

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# A band's dots, a byte each: below glibc's threshold (128 KiB) for memory of its own.
BAND_DOTS = 120 * 1024


def bytes_per_row(image: Image.Image) -> int:
    return (image.width + 7) // 8


def black_is_one(image: Image.Image) -> bytes:
    """1 = black dot; the padding bits at the end of a row are 0 (no dot)."""
    rows = _white_is_one(image, lead=0)
    rows ^= 0xFF
    if spare := -image.width % 8:
        rows[:, -1] &= 0xFF ^ ((1 << spare) - 1)
    return rows.tobytes()


def black_is_zero(image: Image.Image, *, lead: int = 0) -> bytes:
    """0 = black dot; the padding bits at the end of a row are 1 (no dot). With `lead`, each row
    comes behind that many 0 bytes (PNG's filter type)."""
    rows = _white_is_one(image, lead=lead)
    if spare := -image.width % 8:
        rows[:, -1] |= (1 << spare) - 1
    return rows.tobytes()


def _white_is_one(image: Image.Image, *, lead: int) -> NDArray[np.uint8]:
    """The packed rows, 1 where no dot prints, padding bits 0, behind `lead` 0 bytes (which
    `black_is_one` inverts too, so it asks for none)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy's first import: see above
    import numpy as np

    if image.mode != "1":
        raise ValueError(f"a label raster is a mode '1' image, not {image.mode!r}")
    width, height = image.size
    rows = np.zeros((height, lead + bytes_per_row(image)), dtype=np.uint8)
    if not width or not height:
        return rows
    band = max(1, BAND_DOTS // width)
    for top in range(0, height, band):
        bottom = min(height, top + band)
        encoder = Image._getencoder("1", "raw", ("L", 0, 1))  # 0 / 255 a dot, no packing
        encoder.setimage(image.im, (0, top, width, bottom))
        _, status, dots = encoder.encode((bottom - top) * width)
        if status != 1:  # 1: the whole band written
            raise RuntimeError(f"Pillow's raw encoder stopped at {status} in rows {top}-{bottom}")
        band_dots = np.frombuffer(dots, dtype=np.uint8).reshape(bottom - top, width)
        rows[top:bottom, lead:] = np.packbits(band_dots, axis=1)
    return rows
