"""Zebra status answers → typed values: `~HS` (host status), `~HQES` (error and warning flags),
`~HI` (identification) and SGD `getvar` answers, as the ZPL II Programming Guide documents them.

`~HS` answers three STX … ETX CR LF strings:
  1. `aaa,b,c,dddd,eee,f,g,h,iii,j,k,l`: interface settings, paper out, pause, label length,
     formats in the receive buffer, buffer full, diagnostic mode, partial format, unused,
     corrupt RAM, under temperature, over temperature.
  2. `mmm,n,o,p,q,r,s,t,uuuuuuuu,v,www`: function settings, unused, head up, ribbon out, thermal
     transfer, print mode, print width mode, label waiting, labels remaining in the batch, format
     while printing, graphics stored.
  3. `xxxx,y`: password, static RAM.
`~HQES` answers `ERRORS: f gggggggg hhhhhhhh` and `WARNINGS: …` (flag, group 2, group 1 in hex).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STX, ETX = b"\x02", b"\x03"


class StatusFormatError(ValueError):
    """The printer's answer is not in the documented format."""


# ~HQES error group 1 (Zebra's table), in the order a person should fix them.
ERROR_FLAGS: tuple[tuple[int, str], ...] = (
    (0x00000004, "head_open"),
    (0x00000001, "paper_out"),
    (0x00000002, "ribbon_out"),
    (0x00000008, "cutter_fault"),
    (0x00000010, "head_over_temperature"),
    (0x00000020, "motor_over_temperature"),
    (0x00000040 | 0x00000080 | 0x00000200, "printhead_fault"),
    (0x00000100, "invalid_firmware_config"),
    (0x00001000 | 0x00002000 | 0x00004000 | 0x00008000, "paper_jam"),
    (0x00010000, "paused"),
)
_KNOWN_ERRORS = 0
for _bits, _ in ERROR_FLAGS:
    _KNOWN_ERRORS |= _bits

# The order in which hold reasons are named (the first one is "the" reason).
REASON_ORDER = (
    "head_open",
    "paper_out",
    "ribbon_out",
    "cutter_fault",
    "head_over_temperature",
    "motor_over_temperature",
    "printhead_fault",
    "invalid_firmware_config",
    "paper_jam",
    "printer_error",
    "paused",
)


@dataclass(frozen=True)
class HostStatus:
    """The fields of `~HS` that decide whether a label can print now."""

    paper_out: bool
    paused: bool
    label_length: int
    formats_in_buffer: int
    buffer_full: bool
    partial_format: bool
    under_temperature: bool
    over_temperature: bool
    head_open: bool
    ribbon_out: bool
    thermal_transfer: bool
    labels_remaining: int

    @property
    def reasons(self) -> tuple[str, ...]:
        found = {
            "head_open": self.head_open,
            "paper_out": self.paper_out,
            # Without thermal transfer there is no ribbon to run out of.
            "ribbon_out": self.ribbon_out and self.thermal_transfer,
            "paused": self.paused,
        }
        return tuple(r for r in REASON_ORDER if found.get(r))

    @property
    def busy(self) -> bool:
        """Labels received or being printed that have not come out yet."""
        return self.formats_in_buffer > 0 or self.labels_remaining > 0 or self.partial_format


@dataclass(frozen=True)
class ErrorStatus:
    """`~HQES`: error and warning flags (group 1 only; group 2 is reserved)."""

    errors: int
    warnings: int

    @property
    def reasons(self) -> tuple[str, ...]:
        found = {name for bits, name in ERROR_FLAGS if self.errors & bits}
        if self.errors & ~_KNOWN_ERRORS:
            found.add("printer_error")
        return tuple(r for r in REASON_ORDER if r in found)


@dataclass(frozen=True)
class Identification:
    """`~HI`: model, firmware, resolution (dots per mm → dpi), memory."""

    model: str
    firmware: str
    dots_per_mm: int | None
    memory: str | None

    @property
    def dpi(self) -> int | None:
        return DPI_BY_DOTS_PER_MM.get(self.dots_per_mm) if self.dots_per_mm else None


DPI_BY_DOTS_PER_MM = {6: 152, 8: 203, 12: 300, 24: 600}


def frames(data: bytes) -> list[bytes]:
    """The complete STX … ETX frames in `data` (without STX and ETX)."""
    found: list[bytes] = []
    position = 0
    while True:
        start = data.find(STX, position)
        if start < 0:
            return found
        end = data.find(ETX, start + 1)
        if end < 0:
            return found
        found.append(data[start + 1 : end])
        position = end + 1


def _fields(frame: bytes, minimum: int, what: str) -> list[str]:
    try:
        text = frame.decode("ascii")
    except UnicodeDecodeError:
        raise StatusFormatError(f"{what}: not ASCII") from None
    fields = [f.strip() for f in text.split(",")]
    if len(fields) < minimum:
        raise StatusFormatError(f"{what}: {len(fields)} fields, expected {minimum}: {text!r}")
    return fields


def _flag(value: str, what: str) -> bool:
    if value not in ("0", "1"):
        raise StatusFormatError(f"{what}: flag {value!r} is not 0 or 1")
    return value == "1"


def _number(value: str, what: str) -> int:
    if not value.isdigit():
        raise StatusFormatError(f"{what}: {value!r} is not a number")
    return int(value)


def parse_host_status(data: bytes) -> HostStatus:
    """Parse a whole `~HS` answer (three frames; the third is not needed)."""
    found = frames(data)
    if len(found) < 2:
        raise StatusFormatError(f"~HS: {len(found)} of 3 strings")
    one = _fields(found[0], 12, "~HS string 1")
    two = _fields(found[1], 11, "~HS string 2")
    return HostStatus(
        paper_out=_flag(one[1], "paper out"),
        paused=_flag(one[2], "pause"),
        label_length=_number(one[3], "label length"),
        formats_in_buffer=_number(one[4], "formats in buffer"),
        buffer_full=_flag(one[5], "buffer full"),
        partial_format=_flag(one[7], "partial format"),
        under_temperature=_flag(one[10], "under temperature"),
        over_temperature=_flag(one[11], "over temperature"),
        head_open=_flag(two[2], "head up"),
        ribbon_out=_flag(two[3], "ribbon out"),
        thermal_transfer=_flag(two[4], "thermal transfer"),
        labels_remaining=_number(two[8], "labels remaining"),
    )


_HQES_LINE = re.compile(
    rb"(ERRORS|WARNINGS):\s*([01])\s+([0-9A-Fa-f]{8})\s+([0-9A-Fa-f]{8})", re.IGNORECASE
)


def parse_error_status(data: bytes) -> ErrorStatus:
    """Parse a `~HQES` answer."""
    values: dict[str, int] = {}
    for match in _HQES_LINE.finditer(data):
        kind = match[1].decode().upper()
        values[kind] = int(match[4], 16) if match[2] == b"1" else 0
    if "ERRORS" not in values:
        raise StatusFormatError(f"~HQES: no ERRORS line in {data[:120]!r}")
    return ErrorStatus(errors=values["ERRORS"], warnings=values.get("WARNINGS", 0))


def parse_identification(data: bytes) -> Identification:
    """Parse a `~HI` answer: `<STX>model,firmware,dots per mm,memory[,options]<ETX>`."""
    found = frames(data)
    if not found:
        raise StatusFormatError("~HI: no answer frame")
    fields = _fields(found[0], 2, "~HI")
    dots = fields[2] if len(fields) > 2 else ""
    return Identification(
        model=fields[0],
        firmware=fields[1],
        dots_per_mm=int(dots) if dots.isdigit() else None,
        memory=fields[3] if len(fields) > 3 and fields[3] else None,
    )


def parse_getvar(data: bytes) -> str | None:
    """An SGD `getvar` answer: the value in double quotes; None for `"?"` (unknown variable)."""
    start = data.find(b'"')
    end = data.find(b'"', start + 1)
    if start < 0 or end < 0:
        raise StatusFormatError(f"getvar: no quoted value in {data[:60]!r}")
    value = data[start + 1 : end].decode("ascii", "replace").strip()
    return None if value == "?" else value


def combined_reasons(host: HostStatus | None, errors: ErrorStatus | None) -> tuple[str, ...]:
    """Why the printer holds labels now, from both answers, most important first."""
    found = set(host.reasons if host else ()) | set(errors.reasons if errors else ())
    return tuple(r for r in REASON_ORDER if r in found)
