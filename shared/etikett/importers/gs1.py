"""GS1 element strings from barcode data as label printers receive it: application identifiers
with FNC1 (`\\x1d`) after variable-length fields, or already in `(AI)value` notation."""

from __future__ import annotations

import re

FNC1 = "\x1d"

# Data lengths of the AIs whose length is fixed (GS1 General Specifications, figure 7.8.5-2 and
# the AI table); every other AI runs to the next FNC1 or the end.
FIXED: dict[str, int] = {
    "00": 18, "01": 14, "02": 14, "03": 14, "04": 16,
    "11": 6, "12": 6, "13": 6, "14": 6, "15": 6, "16": 6, "17": 6, "18": 6, "19": 6,
    "20": 2, "31": 6, "32": 6, "33": 6, "34": 6, "35": 6, "36": 6, "41": 13,
}  # fmt: skip


def ai_length(digits: str) -> int:
    """How many digits the AI starting with these two digits has."""
    first = digits[:2]
    if first in ("23", "24", "25", "40", "41", "42", "71"):
        return 3
    if first in ("31", "32", "33", "34", "35", "36", "39", "43", "70", "72", "80", "81", "82"):
        return 4
    return 2


def element_string(data: str) -> str:
    """`(AI)value…` for GS1 data; raises ValueError when it is not a GS1 element string."""
    data = data.strip()
    if data.startswith("("):
        data = data.replace(" ", "")
        if not re.fullmatch(r"(\(\d{2,4}\)[^()]+)+", data):
            raise ValueError("the (AI)value notation is broken")
        return data
    data = data.lstrip(FNC1)
    parts: list[str] = []
    position = 0
    while position < len(data):
        size = ai_length(data[position : position + 2])
        ai = data[position : position + size]
        if len(ai) < size or not ai.isdigit():
            raise ValueError(f"no application identifier at position {position}")
        position += size
        fixed = FIXED.get(ai[:2])
        if fixed is not None:
            value = data[position : position + fixed]
            if len(value) < fixed:
                raise ValueError(f"AI ({ai}) needs {fixed} characters")
            position += fixed
            if data[position : position + 1] == FNC1:
                position += 1
        else:
            end = data.find(FNC1, position)
            end = len(data) if end < 0 else end
            value = data[position:end]
            position = end + 1
        if not value:
            raise ValueError(f"AI ({ai}) has no data")
        parts.append(f"({ai}){value}")
    if not parts:
        raise ValueError("no data")
    return "".join(parts)


# AIs whose data ends in a GS1 mod-10 check digit (GTIN, SSCC, GLN, GSIN, GSRN …): the digits
# that carry it. zint refuses a wrong one; a printer encodes whatever it is sent.
CHECKED = {
    "00": 18, "01": 14, "02": 14, "402": 17, "8017": 18, "8018": 18,
    "410": 13, "411": 13, "412": 13, "413": 13, "414": 13, "415": 13, "416": 13, "417": 13,
}  # fmt: skip
# AIs whose data starts with such a key and goes on (GDTI 253 and GCN 255 with a serial, GRAI 8003
# with a serial, ITIP 8006 and 8026 with piece and total): the digits of that key.
CHECKED_PREFIX = {"253": 13, "255": 13, "8003": 14, "8006": 14, "8026": 14}


def with_check_digits(elements: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The `(AI)value…` string with every check digit right, and (AI, wrong, right) for each
    one that was not."""
    changes: list[tuple[str, str, str]] = []

    def fix(match: re.Match[str]) -> str:
        ai, value = match.group(1), match.group(2)
        size = CHECKED.get(ai)
        if size is None or len(value) != size:
            size = CHECKED_PREFIX.get(ai)
            if size is None or len(value) < size:
                return match.group(0)
        key, rest = value[:size], value[size:]
        if not key.isdigit():
            return match.group(0)
        total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(key[:-1])))
        right = str((10 - total % 10) % 10)
        if key[-1] != right:
            changes.append((ai, key[-1], right))
            return f"({ai}){key[:-1]}{right}{rest}"
        return match.group(0)

    return re.sub(r"\((\d{2,4})\)([^()]+)", fix, elements), changes
