"""ZPL II: one label as a `^GFA` graphic field, Z64 (default), ACS or plain hex.

`^GFA,b,c,d,data`: b and c are both the uncompressed total (rows x bytes per row) — Zebra's ^GF
reference: b "should match parameter c" for ASCII downloads, c is the graphic field's total bytes —
and d the bytes per row. Data bits: 1 = black dot, rows padded to whole bytes with 0. Z64 is
`:Z64:` + base64(zlib(rows)) + `:` + CRC-16/XMODEM of the base64 text as 4 uppercase hex digits.
ACS: hex digits with repeat counts (G-Y = 1-19, g-z = 20-400 by 20), `,` = rest of the row 0,
`!` = rest of the row 1 (F), `:` = the previous row again.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Literal

from PIL import Image

from etikett_engine.render.bits import black_is_one, bytes_per_row
from etikett_engine.render.deflate import zlib_stream

Compression = Literal["z64", "acs", "hex"]

_SMALL = "GHIJKLMNOPQRSTUVWXY"  # 1..19
_LARGE = "ghijklmnopqrstuvwxyz"  # 20..400, steps of 20
_RUN = re.compile(r"([0-9A-F])\1+")


def encode_zpl(image: Image.Image, *, copies: int = 1, compression: Compression = "z64") -> bytes:
    """A complete job for one label (`copies` times): ^XA … ^XZ."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    field = graphic_field(image, compression=compression)
    return (
        f"^XA\n^PW{image.width}\n^LL{image.height}\n^LH0,0\n^FO0,0{field}^FS\n^PQ{copies}\n^XZ\n"
    ).encode("ascii")


def graphic_field(image: Image.Image, *, compression: Compression = "z64") -> str:
    row_bytes = bytes_per_row(image)
    raw = black_is_one(image)
    total = len(raw)
    if compression == "z64":
        data = z64(raw)
    elif compression == "acs":
        data = acs(raw, row_bytes)
    elif compression == "hex":
        data = raw.hex().upper()
    else:
        raise ValueError(f"unknown compression {compression!r}")
    return f"^GFA,{total},{total},{row_bytes},{data}"


def z64(raw: bytes) -> str:
    text = base64.b64encode(zlib_stream(raw))
    return f":Z64:{text.decode('ascii')}:{binascii.crc_hqx(text, 0):04X}"


def acs(raw: bytes, row_bytes: int) -> str:
    parts: list[str] = []
    previous: bytes | None = None
    for start in range(0, len(raw), row_bytes):
        row = raw[start : start + row_bytes]
        if row == previous:
            parts.append(":")
            continue
        previous = row
        parts.append(_acs_row(row.hex().upper()))
    return "".join(parts)


def repeat_count(count: int) -> str:
    """The ACS prefix for `count` repeats of the next hex digit (counts add up: `zzG` = 801)."""
    prefix = "z" * ((count - 1) // 400) if count > 400 else ""
    rest = count - 400 * len(prefix)
    if rest >= 20:
        prefix += _LARGE[rest // 20 - 1]
    if rest % 20:
        prefix += _SMALL[rest % 20 - 1]
    return prefix


def _acs_row(digits: str) -> str:
    tail = ""
    stripped = digits.rstrip("0")
    if len(stripped) < len(digits) - 1:
        digits, tail = stripped, ","
    else:
        stripped = digits.rstrip("F")
        if len(stripped) < len(digits) - 1:
            digits, tail = stripped, "!"
    return _RUN.sub(_run, digits) + tail


def _run(match: re.Match[str]) -> str:
    run = match.group(0)
    return repeat_count(len(run)) + run[0] if len(run) > 2 else run
