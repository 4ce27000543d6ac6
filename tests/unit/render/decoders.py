"""Strict decoders of the printer jobs we emit, written independently of the encoders.

A real printer drops a graphic whose CRC or byte count is wrong, so these refuse anything that
is not exactly right: every count, the CRC over the base64 text, canonical base64, a complete zlib
stream with nothing after it, the whole ACS grammar, and the row padding bits.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass

from PIL import Image


class DecodeError(AssertionError):
    pass


@dataclass(frozen=True)
class Job:
    width: int  # dots
    height: int
    row_bytes: int
    copies: int
    black_is_one: bytes  # the raster, 1 = black dot, rows padded to whole bytes
    header: dict[str, str]

    def image(self) -> Image.Image:
        return Image.frombytes("1", (self.width, self.height), self.black_is_one, "raw", "1;I")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise DecodeError(message)


def _check_padding(raw: bytes, width: int, row_bytes: int, pad_bit: int) -> None:
    spare = row_bytes * 8 - width
    if not spare:
        return
    mask = (1 << spare) - 1
    for row in range(len(raw) // row_bytes):
        last = raw[(row + 1) * row_bytes - 1]
        _require(
            last & mask == (mask if pad_bit else 0), f"row {row}: padding bits must be {pad_bit}"
        )


# ------------------------------------------------------------------------------------------ ZPL

_ZPL = re.compile(
    r"\^XA\n\^PW(?P<pw>[0-9]+)\n\^LL(?P<ll>[0-9]+)\n\^LH0,0\n"
    r"\^FO0,0\^GFA,(?P<b>[0-9]+),(?P<c>[0-9]+),(?P<d>[0-9]+),(?P<data>[^\^~]*)\^FS\n"
    r"\^PQ(?P<copies>[0-9]+)\n\^XZ\n"
)
_Z64 = re.compile(r":Z64:(?P<b64>[A-Za-z0-9+/]*={0,2}):(?P<crc>[0-9A-F]{4})")
_SMALL = "GHIJKLMNOPQRSTUVWXY"
_LARGE = "ghijklmnopqrstuvwxyz"
_HEX = "0123456789ABCDEF"


def decode_zpl(job: bytes) -> Job:
    text = job.decode("ascii")
    match = _ZPL.fullmatch(text)
    _require(match is not None, f"not the expected ZPL job: {text[:80]!r}…")
    assert match is not None
    width, height = int(match["pw"]), int(match["ll"])
    b, c, d = int(match["b"]), int(match["c"]), int(match["d"])
    _require(d == (width + 7) // 8, f"^GFA bytes per row {d} != ceil({width} / 8)")
    _require(c == d * height, f"^GFA field count {c} != {d} x {height}")
    _require(b == c, f"^GFA binary count {b} != field count {c} (ASCII download)")
    data = match["data"]
    if data.startswith(":Z64:"):
        raw = decode_z64(data, c)
    elif data.startswith(":"):
        raise DecodeError(f"unsupported ^GFA data {data[:8]!r}")
    else:
        raw = decode_acs(data, c, d)
    _check_padding(raw, width, d, 0)
    return Job(width, height, d, int(match["copies"]), raw, match.groupdict())


def decode_z64(data: str, total: int) -> bytes:
    match = _Z64.fullmatch(data)
    _require(match is not None, "Z64 data is not :Z64:<base64>:<4 hex digits>")
    assert match is not None
    text = match["b64"].encode("ascii")
    _require(len(text) % 4 == 0, "base64 length is not a multiple of 4")
    crc = binascii.crc_hqx(text, 0)
    _require(f"{crc:04X}" == match["crc"], f"CRC {match['crc']} != {crc:04X}")
    compressed = base64.b64decode(text, validate=True)
    _require(base64.b64encode(compressed) == text, "base64 is not canonical")
    inflater = zlib.decompressobj()
    raw = inflater.decompress(compressed)
    _require(inflater.eof and not inflater.unused_data, "zlib stream incomplete or trailing data")
    _require(len(raw) == total, f"{len(raw)} bytes after inflating, ^GFA says {total}")
    return raw


def decode_acs(data: str, total: int, row_bytes: int) -> bytes:
    """Plain hex or ZPL's ASCII compression: G-Y/g-z counts, `,` `!` row fills, `:` repeats."""
    width = 2 * row_bytes
    if re.fullmatch(r"[0-9A-F]*", data):  # plain hex, a subset of the grammar: decode at once
        _require(len(data) == 2 * total, f"{len(data)} hex digits, ^GFA says {total} bytes")
        return bytes.fromhex(data)
    rows: list[str] = []
    row: list[str] = []
    count = 0

    def finish(digits: str) -> None:
        _require(len(digits) == width, f"row {len(rows)} has {len(digits)} hex digits")
        rows.append(digits)
        row.clear()

    for position, char in enumerate(data):
        if char in _SMALL:
            count += _SMALL.index(char) + 1
        elif char in _LARGE:
            count += (_LARGE.index(char) + 1) * 20
        elif char in _HEX:
            row.append(char * (count or 1))
            count = 0
            filled = sum(len(part) for part in row)
            _require(filled <= width, f"row {len(rows)} overflows at {position}")
            if filled == width:
                finish("".join(row))
        elif char in ",!":
            _require(count == 0, f"a repeat count before {char!r} at {position}")
            filled = "".join(row)
            finish(filled + ("0" if char == "," else "F") * (width - len(filled)))
        elif char == ":":
            _require(count == 0 and not row, f"':' inside a row at {position}")
            _require(bool(rows), "':' repeats a row that does not exist")
            finish(rows[-1])
        else:
            raise DecodeError(f"unexpected {char!r} at {position}")
    _require(count == 0 and not row, "data ends inside a row")
    raw = bytes.fromhex("".join(rows))
    _require(len(raw) == total, f"{len(raw)} bytes decoded, ^GFA says {total}")
    return raw


# ----------------------------------------------------------------------------------------- TSPL

_TSPL_HEAD = re.compile(
    rb"SIZE (?P<w>[0-9]+(?:\.[0-9]+)?) mm,(?P<h>[0-9]+(?:\.[0-9]+)?) mm\r\n"
    rb"GAP (?P<gap>[0-9]+(?:\.[0-9]+)?) mm,0 mm\r\nCLS\r\n"
    rb"BITMAP 0,0,(?P<wb>[0-9]+),(?P<rows>[0-9]+),0,"
)
_TSPL_TAIL = re.compile(rb"\r\nPRINT 1,(?P<copies>[0-9]+)\r\n")


def decode_tspl(job: bytes, dpi: int) -> Job:
    head = _TSPL_HEAD.match(job)
    _require(head is not None, f"not the expected TSPL job: {job[:60]!r}")
    assert head is not None
    row_bytes, height = int(head["wb"]), int(head["rows"])
    size = row_bytes * height
    body = job[head.end() : head.end() + size]
    tail = _TSPL_TAIL.fullmatch(job[head.end() + size :])
    _require(len(body) == size and tail is not None, "BITMAP byte count or PRINT line is wrong")
    assert tail is not None
    width = round(float(head["w"]) / 25.4 * dpi)
    _require(round(float(head["h"]) / 25.4 * dpi) == height, "SIZE height != BITMAP rows")
    _require(row_bytes == (width + 7) // 8, "BITMAP width bytes != ceil(SIZE width / 8)")
    _check_padding(body, width, row_bytes, 1)  # TSPL: 1 = no dot
    raw = bytes(255 - value for value in body)
    return Job(
        width,
        height,
        row_bytes,
        int(tail["copies"]),
        raw,
        {k: v.decode() for k, v in head.groupdict().items()},
    )


# ------------------------------------------------------------------------------------------ EPL

_EPL_HEAD = re.compile(
    rb"\r\nN\r\nq(?P<q>[0-9]+)\r\nQ(?P<Q>[0-9]+),(?P<gap>[0-9]+)\r\n"
    rb"GW0,0,(?P<wb>[0-9]+),(?P<rows>[0-9]+),"
)
_EPL_TAIL = re.compile(rb"\r\nP(?P<copies>[0-9]+)\r\n")


def decode_epl(job: bytes) -> Job:
    head = _EPL_HEAD.match(job)
    _require(head is not None, f"not the expected EPL job: {job[:60]!r}")
    assert head is not None
    width, height = int(head["q"]), int(head["Q"])
    row_bytes, rows = int(head["wb"]), int(head["rows"])
    _require(rows == height, "GW rows != Q label length")
    _require(row_bytes == (width + 7) // 8, "GW width bytes != ceil(q / 8)")
    size = row_bytes * rows
    body = job[head.end() : head.end() + size]
    tail = _EPL_TAIL.fullmatch(job[head.end() + size :])
    _require(len(body) == size and tail is not None, "GW byte count or P line is wrong")
    assert tail is not None
    _check_padding(body, width, row_bytes, 1)  # EPL: 1 = no dot
    raw = bytes(255 - value for value in body)
    return Job(
        width,
        height,
        row_bytes,
        int(tail["copies"]),
        raw,
        {k: v.decode() for k, v in head.groupdict().items()},
    )
