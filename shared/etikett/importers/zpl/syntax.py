"""The syntax of ZPL: commands as tokens, their arguments, and the names ZPL gives things
(orientations, encodings, printer settings, bitmap fonts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROTATIONS = {"N": 0, "R": 90, "I": 180, "B": 270}
PRINTER_SETTINGS = {
    "PQ": "print quantity",
    "PR": "print speed",
    "MD": "darkness",
    "SD": "darkness",
    "MM": "print mode",
    "MN": "media tracking",
    "MT": "media type",
    "MF": "media feed",
    "PM": "mirror image",
    "JU": "configuration",
    "JZ": "reprint after error",
    "LT": "label top",
    "PF": "slew",
    "JM": "dots per millimetre",
    "JS": "backfeed",
    "TA": "tear-off",
    "PP": "programmable pause",
    "JB": "flash",
    "HS": "status",
    "HI": "host identification",
    "CC": "caret change",
    "CT": "tilde change",
    "CD": "delimiter change",
    "XB": "suppress backfeed",
    "FX": "comment",
}
BITMAP_FONTS = set("ABCDEFGHPQRSTUV")
STORED_IMAGES = {"IM": "image move", "XG": "recall graphic", "IL": "image load"}
SUPPORTED_BARCODES = ("BC", "BE", "BU", "B3", "B2", "BQ", "BX", "B7")
# ZPL barcodes the label model has no symbology for: a field using one is dropped with a warning
# (printing its data as text would put digits where a scanner expects bars).
UNSUPPORTED_BARCODES = {
    "B0": "Aztec",
    "BO": "Aztec",
    "B1": "Code 11",
    "B4": "Code 49",
    "B5": "Planet Code",
    "B8": "EAN-8",
    "B9": "UPC-E",
    "BA": "Code 93",
    "BB": "CODABLOCK",
    "BD": "MaxiCode",
    "BF": "MicroPDF417",
    "BI": "Industrial 2 of 5",
    "BJ": "Standard 2 of 5",
    "BK": "Codabar",
    "BL": "LOGMARS",
    "BM": "MSI",
    "BP": "Plessey",
    "BR": "GS1 DataBar",
    "BS": "UPC/EAN extension",
    "BT": "TLC39",
    "BZ": "postal (POSTNET)",
}


@dataclass
class Token:
    prefix: str
    name: str  # two characters, upper case (`A0`, `FO`, `B3`, …)
    params: str  # the raw text after the name, as latin-1 (bytes kept one to one)
    line: int


def tokens(data: bytes) -> list[Token]:
    """The commands in order. A command's parameters run to the next `^` or `~`; field data
    (`^FD`, `^FV`, `^FX`) to the next `^` only. Line numbers count the file's newlines."""
    text = data.decode("latin-1")
    found: list[Token] = []
    position = 0
    line = 1
    length = len(text)
    starts = [m.start() for m in re.finditer(r"[\^~]", text)]
    index = 0
    while index < len(starts):
        start = starts[index]
        line += text.count("\n", position, start)
        position = start
        name = text[start + 1 : start + 3].upper()
        if len(name) < 2:
            break
        if name in ("FD", "FV", "FX"):
            end = text.find("^", start + 3)
            end = length if end < 0 else end
            while index + 1 < len(starts) and starts[index + 1] < end:
                index += 1
        else:
            end = starts[index + 1] if index + 1 < len(starts) else length
        if name[0] == "A" and text[start] == "^":
            params = text[start + 3 : end]
        else:
            params = text[start + 3 : end]
        if name not in ("FD", "FV", "FX", "GF"):
            params = params.replace("\r", "").replace("\n", "")
        found.append(Token(text[start], name, params, line))
        index += 1
    return found


def split(params: str) -> list[str]:
    return params.split(",")


def arg(args: list[str], index: int) -> str | None:
    if index < len(args):
        value = args[index].strip()
        return value if value else None
    return None


def encoding_of(number: int) -> str:
    if number in (28, 29, 30):
        return "utf-8"
    if number == 27:
        return "cp1252"
    return "cp850"


def identifier(name: str | None) -> str | None:
    if not name:
        return None
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_").lower()
    if not cleaned:
        return None
    if cleaned[0].isdigit():
        cleaned = "f_" + cleaned
    return cleaned[:64] if cleaned not in ("now", "counters", "value") else f"{cleaned}_field"
