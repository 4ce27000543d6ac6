"""`^GF` graphic fields → raw rows (1 = black dot), checked as strictly as a printer does.

`^GFa,b,c,d,data`: a = A (ASCII), B (binary) or C (compressed binary, Zebra-proprietary: refused);
b = bytes transmitted, c = the graphic's total bytes (rows × d), d = bytes per row. ASCII data is
plain hex, ZPL's ASCII compression (ACS: `G`–`Y` = 1–19, `g`–`z` = 20–400 by 20, counts add up;
`,` fills the row with 0, `!` with 1, `:` repeats the previous row), `:Z64:` (base64 of zlib) or
`:B64:` (base64), both followed by `:` and the CRC-16/XMODEM of the base64 text as 4 hex digits.
A wrong CRC, byte count or syntax raises `GraphicError`: the printer drops such a graphic.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass

# A graphic is never larger than this (a 4.09 x 39 in label at 600 dpi is ~7 MB): the limit
# keeps a hostile or broken count (or a zlib bomb) from taking the simulator's memory.
MAX_GRAPHIC_BYTES = 16 * 1024 * 1024

_DIGITS = re.compile(r"[0-9]{1,9}")
_HEX = frozenset("0123456789ABCDEFabcdef")
_BASE64 = re.compile(r":(?P<kind>Z64|B64):(?P<text>[A-Za-z0-9+/=]*):(?P<crc>[0-9A-Fa-f]{4})")


class GraphicError(ValueError):
    """A graphic a printer would drop; `kind` is crc, byte_count, syntax, zlib or unsupported."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Graphic:
    row_bytes: int
    rows: int
    raw: bytes  # rows × row_bytes, 1 = black dot, most significant bit leftmost
    compression: str  # hex, acs, z64, b64 or binary
    crc_ok: bool | None  # None: the encoding carries no CRC

    @property
    def width(self) -> int:
        return self.row_bytes * 8


def parse_gf(params: str, binary: bytes | None = None) -> Graphic:
    """A `^GF` command's parameters (after `^GF`); `binary` holds the data of `^GFB`."""
    parts = params.split(",", 4)
    if len(parts) < 4 or (binary is None and len(parts) < 5):
        raise GraphicError("syntax", f"^GF needs a,b,c,d,data: {params[:40]!r}")
    kind = parts[0].strip().upper()
    sent, total, row_bytes = _count("b", parts[1]), _count("c", parts[2]), _count("d", parts[3])
    if row_bytes < 1 or total < 1 or total % row_bytes:
        raise GraphicError(
            "byte_count", f"^GF total {total} is not a whole number of rows of {row_bytes} bytes"
        )
    if total > MAX_GRAPHIC_BYTES:
        raise GraphicError("byte_count", f"^GF total {total} exceeds {MAX_GRAPHIC_BYTES} bytes")
    if kind == "B":
        if binary is None:
            raise GraphicError("syntax", f"^GFB header not understood: {params[:40]!r}")
        if len(binary) != total:
            raise GraphicError(
                "byte_count", f"^GFB sent {len(binary)} bytes, the field has {total}"
            )
        return Graphic(row_bytes, total // row_bytes, bytes(binary), "binary", None)
    if kind != "A":
        raise GraphicError("unsupported", f"^GF compression type {kind!r} is not supported")
    data = parts[4].strip()
    # b is "the bytes that follow d": the uncompressed total (our encoder, and what the guide asks
    # of ASCII downloads) or the data's length (zebrafy and others). Anything else is a bad count.
    if sent not in (total, len(data)):
        raise GraphicError(
            "byte_count",
            f"^GF b={sent} is neither the total {total} nor the data length {len(data)}",
        )
    if data.startswith(":"):
        raw, compression = decode_base64_data(data, total), data[1:4].lower()
        return Graphic(row_bytes, total // row_bytes, raw, compression, True)
    raw, compression = decode_ascii(data, total, row_bytes)
    return Graphic(row_bytes, total // row_bytes, raw, compression, None)


def decode_base64_data(data: str, total: int) -> bytes:
    """`:Z64:…:CRC` or `:B64:…:CRC` → exactly `total` bytes, or `GraphicError`."""
    match = _BASE64.fullmatch(data)
    if match is None:
        if data[:5] not in (":Z64:", ":B64:"):
            raise GraphicError("unsupported", f"unknown ^GF data encoding {data[:5]!r}")
        raise GraphicError("syntax", f"{data[:5]} data is not <base64>:<4 hex digit CRC>")
    text = match["text"].encode("ascii")
    crc = binascii.crc_hqx(text, 0)
    if crc != int(match["crc"], 16):
        raise GraphicError("crc", f"{match['kind']} CRC {match['crc']} != computed {crc:04X}")
    try:
        payload = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise GraphicError("syntax", f"bad base64: {exc}") from exc
    if match["kind"] == "B64":
        raw = payload
    else:
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(payload, total + 1)  # one more byte reveals "too long"
        except zlib.error as exc:
            raise GraphicError("zlib", f"bad zlib stream: {exc}") from exc
        if len(raw) <= total and not (inflater.eof and not inflater.unused_data):
            raise GraphicError("zlib", "zlib stream incomplete or followed by extra data")
    if len(raw) != total:
        raise GraphicError("byte_count", f"{len(raw)} bytes decoded, ^GF says {total}")
    return raw


def decode_ascii(data: str, total: int, row_bytes: int) -> tuple[bytes, str]:
    """Plain hex or ACS → (exactly `total` bytes, "hex" or "acs"), or `GraphicError`."""
    if _HEX.issuperset(data):  # plain hex: the common case, decoded at C speed
        if len(data) != 2 * total:
            raise GraphicError("byte_count", f"{len(data)} hex digits, ^GF says {total} bytes")
        return bytes.fromhex(data), "hex"
    width = 2 * row_bytes  # hex digits per row
    rows: list[str] = []
    row: list[str] = []
    filled = count = 0
    for position, char in enumerate(data):
        if "G" <= char <= "Y":
            count += ord(char) - ord("G") + 1
        elif "g" <= char <= "z":
            count += (ord(char) - ord("g") + 1) * 20
        elif char in _HEX:
            repeat = count or 1
            row.append(char * repeat)
            filled += repeat
            count = 0
            if filled > width:
                raise GraphicError("byte_count", f"row {len(rows)} overflows at {position}")
            if filled == width:
                rows.append("".join(row))
                row.clear()
                filled = 0
        elif char in ",!":
            if count:
                raise GraphicError("syntax", f"a repeat count before {char!r} at {position}")
            row.append(("0" if char == "," else "F") * (width - filled))
            rows.append("".join(row))
            row.clear()
            filled = 0
        elif char == ":":
            if count or filled:
                raise GraphicError("syntax", f"':' inside a row at {position}")
            if not rows:
                raise GraphicError("syntax", "':' repeats a row that does not exist")
            rows.append(rows[-1])
        else:
            raise GraphicError("syntax", f"unexpected {char!r} in ^GF data at {position}")
        if len(rows) * row_bytes > total:
            raise GraphicError("byte_count", f"more than {total // row_bytes} rows of data")
    if count or filled:
        raise GraphicError("byte_count", "^GF data ends inside a row")
    if len(rows) * row_bytes != total:
        raise GraphicError("byte_count", f"{len(rows) * row_bytes} bytes decoded, ^GF says {total}")
    return bytes.fromhex("".join(rows)), "acs"


def _count(name: str, text: str) -> int:
    text = text.strip()
    if not _DIGITS.fullmatch(text):
        raise GraphicError("syntax", f"^GF parameter {name} is not a number: {text[:20]!r}")
    return int(text)
