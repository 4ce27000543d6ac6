"""Field and graphic data as ZPL writes it: Code 128 subset invocations, QR code data with its
error correction, and ^GF graphic data (hex, ACS compression, :Z64:, :B64:).
"""

from __future__ import annotations

import base64
import binascii
import re

from etikett.importers.conversion import inflate, refuse
from etikett_engine.errors import ProblemCode

_ACS_COUNTS = {chr(ord("G") + i): i + 1 for i in range(19)} | {
    chr(ord("g") + i): 20 * (i + 1) for i in range(20)
}


_INVOCATIONS = {">;": "", ">:": "", ">9": "", ">5": "", ">6": "", ">7": "", ">8": "\x1d", ">0": ">"}
_STARTS = {">9": "A", ">:": "B", ">;": "C"}
_SWITCHES = {">7": "A", ">6": "B", ">5": "C"}


def code128(data: str, mode: str) -> tuple[str, str]:
    """(symbology, data) of a ^BC field: mode D and data that starts with FNC1 are GS1-128."""
    if mode == "D":
        # The printer strips parentheses and spaces for encoding: (AI) notation stays readable.
        cleaned = re.sub(r">[;:9567]", "", data).replace(">8", "\x1d")
        if "(" not in cleaned:
            cleaned = cleaned.replace(" ", "")
        return "gs1-128", cleaned.lstrip("\x1d")
    if ">" not in data:
        return "code128", data
    out = re.sub(r">[;:95670]|>8", lambda m: _INVOCATIONS[m.group(0)], data)
    if out.startswith("\x1d"):
        return "gs1-128", out[1:]
    return "code128", out.replace("\x1d", "")


def code_set(data: str, mode: str) -> str | None:
    """The one code set a ^BC field in mode N prints all its data in: B unless a start code
    (`>9` A, `>:` B, `>;` C) names another; None when the data switches sets itself or the
    printer's automatic mode chooses (modes A, D, U)."""
    if mode != "N":
        return None
    chosen = _STARTS.get(data[:2], "B")
    rest = data[2:] if data[:2] in _STARTS else data
    if re.search(r">[5678]", rest):
        return None
    return chosen


def fits_code_set(data: str, chosen: str) -> bool:
    """Whether Code 128 code set `chosen` encodes all of `data`."""
    if chosen == "C":
        return data.isascii() and data.isdigit() and len(data) % 2 == 0
    low, high = (0, 96) if chosen == "A" else (32, 128)
    return all(low <= ord(c) < high for c in data)


def code128_modules(data: str) -> int:
    """How many modules wide a printer draws ^BC mode N data with its invocation codes, start
    (B unless given), symbol characters, check character and stop pattern included."""
    current = _STARTS.get(data[:2], "B")
    position = 2 if data[:2] in _STARTS else 0
    symbols = 0
    while position < len(data):
        pair = data[position : position + 2]
        if pair in _SWITCHES:
            current = _SWITCHES[pair]
            symbols += 1
            position += 2
        elif pair[:1] == ">" and len(pair) == 2:
            symbols += 1  # FNC1 (>8), a literal '>' (>0) and the rest: one symbol character
            position += 2
        elif current == "C" and pair.isdigit() and len(pair) == 2:
            symbols += 1
            position += 2
        else:
            symbols += 1
            position += 1
    return 11 * (symbols + 2) + 13


def qr_data(data: str) -> tuple[str, str | None]:
    """The text of a ^BQ field (`QA,text`, `MM,Atext`, …) and its error correction level. The
    printer reads the first three characters as the switches whatever they are, so data without
    them loses its first three characters (the level is then None)."""
    match = re.match(r"^([HQML])([AM]),(.*)$", data, re.DOTALL)
    if match is None:
        return data[3:], None
    ecc, mode, rest = match.groups()
    if mode == "M" and rest[:1] in ("N", "A", "K"):
        rest = rest[1:]
    elif mode == "M" and rest[:1] == "B" and rest[1:5].isdigit():
        rest = rest[5:]
    return rest, ecc


def decode_graphic(data: str, total: int, row_bytes: int, where: str, line: int) -> bytes:
    """The bytes of a ^GFA graphic (hex with ACS compression, or :Z64:/:B64:), exactly `total`."""
    if data.startswith((":Z64:", ":B64:")):
        body = data[5:]
        encoded, _, crc = body.rpartition(":")
        if not encoded:
            encoded, crc = body, ""
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the base64 data is broken.",
                line=line,
            ) from None
        if (
            crc
            and re.fullmatch(r"[0-9A-Fa-f]{4}", crc)
            and int(crc, 16) != binascii.crc_hqx(encoded.encode("ascii"), 0)
        ):
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the CRC does not match the data.",
                line=line,
            )
        out = inflate(raw, total, where) if data.startswith(":Z64:") else raw
    else:
        out = _acs(data, total, row_bytes, where, line)
    if len(out) < total:
        raise refuse(
            ProblemCode.IMPORT_GRAPHIC_INVALID,
            f"{where} declares {total} bytes but carries {len(out)}.",
            line=line,
            declared=total,
            present=len(out),
        )
    return out[:total]


def _acs(data: str, total: int, row_bytes: int, where: str, line: int) -> bytes:
    """ASCII hex with Zebra's ACS compression: G-Y and g-z repeat counts, `,` fills the row with
    0, `!` with 1, `:` repeats the previous row. Never builds more than `total` bytes."""
    row_hex = row_bytes * 2
    wanted = total * 2
    out: list[str] = []
    done = 0
    row = ""
    count = 0
    previous = "0" * row_hex
    for char in data:
        if char in _ACS_COUNTS:
            count += _ACS_COUNTS[char]
            continue
        if char in "0123456789ABCDEFabcdef":
            row += char.upper() * min(max(1, count), wanted - done - len(row) + row_hex)
        elif char == ",":
            row += "0" * (row_hex - len(row) % row_hex if len(row) % row_hex else row_hex)
        elif char == "!":
            row += "F" * (row_hex - len(row) % row_hex if len(row) % row_hex else row_hex)
        elif char == ":":
            row += previous
        elif char in " \r\n\t":
            continue
        else:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: {char!r} is not graphic data.",
                line=line,
            )
        count = 0
        while len(row) >= row_hex:
            previous = row[:row_hex]
            out.append(previous)
            done += row_hex
            row = row[row_hex:]
        if done >= wanted:
            break
    return bytes.fromhex("".join(out))  # a partial last row is missing data, not padding
