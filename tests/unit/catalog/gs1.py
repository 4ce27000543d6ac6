"""An independent GS1 reader for the tests: `(AI)value` element strings, check digits, dates."""

from __future__ import annotations

import datetime as dt
import re

GS = "\x1d"
# The application identifiers the Vorlagen use: fixed length (digits) or variable (None).
FIXED = {"00": 18, "01": 14, "02": 14, "11": 6, "15": 6, "17": 6}
VARIABLE = {"10": 20, "21": 20, "37": 8}
_ELEMENT = re.compile(r"\((\d{2,4})\)([^()]+)")


def mod10(digits: str) -> str:
    """The GS1 check digit of the digits (weights 3, 1, … from the right)."""
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(digits)))
    return str((10 - total % 10) % 10)


def valid_check_digit(number: str) -> bool:
    return number.isdigit() and len(number) >= 8 and mod10(number[:-1]) == number[-1]


def parse(element_string: str) -> list[tuple[str, str]]:
    """`(01)0950…(10)AB` → [("01", "0950…"), ("10", "AB")]; raises AssertionError if malformed."""
    elements = _ELEMENT.findall(element_string)
    assert "".join(f"({ai}){value}" for ai, value in elements) == element_string, element_string
    return elements


def problems(element_string: str) -> list[str]:
    """What is wrong with the element string by GS1's rules (empty when it is valid)."""
    found: list[str] = []
    for ai, value in parse(element_string):
        if ai in FIXED:
            if len(value) != FIXED[ai] or not value.isdigit():
                found.append(f"({ai}) needs {FIXED[ai]} digits, got {value!r}")
            elif ai in ("00", "01", "02") and not valid_check_digit(value):
                found.append(f"({ai}) {value} has a wrong check digit")
            elif ai in ("11", "15", "17"):
                day = value[4:] if value[4:] != "00" else "01"  # DD 00: the end of the month
                try:
                    dt.date(2000 + int(value[:2]), int(value[2:4]), int(day))
                except ValueError:
                    found.append(f"({ai}) {value} is not a date YYMMDD")
        elif ai in VARIABLE:
            if not 1 <= len(value) <= VARIABLE[ai]:
                found.append(f"({ai}) takes 1 to {VARIABLE[ai]} characters, got {value!r}")
            if ai == "37" and not value.isdigit():
                found.append(f"(37) takes digits, got {value!r}")
        else:
            found.append(f"({ai}) is not an AI these tests know")
    return found


def raw(element_string: str) -> str:
    """The data a scanner transmits: AIs and values, GS after a variable-length value that is
    not the last one."""
    elements = parse(element_string)
    parts = []
    for index, (ai, value) in enumerate(elements):
        parts.append(ai + value)
        if ai not in FIXED and index < len(elements) - 1:
            parts.append(GS)
    return "".join(parts)
