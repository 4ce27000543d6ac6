"""Status answers in Zebra's documented formats: `~HS`, `~HQES`, `~HI` and SGD `getvar`.

`~HS` (ZPL II Programming Guide, "~HS Host Status Return") answers three lines, each
STX … ETX CR LF:
  1. `aaa,b,c,dddd,eee,f,g,h,iii,j,k,l`: communication settings, paper out, pause, label length
     (dots), formats in the receive buffer, buffer full, diagnostic mode, partial format, unused
     (000), corrupt RAM, under temperature, over temperature.
  2. `mmm,n,o,p,q,r,s,t,uuuuuuuu,v,www`: function settings, unused, head up, ribbon out, thermal
     transfer, print mode (2 = tear-off), print width mode, label waiting, labels remaining in the
     batch, format while printing (always 1), graphics stored.
  3. `xxxx,y`: password, static RAM installed.
`~HQES` answers error and warning flags with two 8-digit hex groups each (group 2, group 1).
"""

from __future__ import annotations

from dataclasses import dataclass

STX, ETX, CRLF = b"\x02", b"\x03", b"\r\n"

# ~HQES error group 1 bits (Zebra's table of ~HQES errors).
ERROR_MEDIA_OUT = 0x00000001
ERROR_RIBBON_OUT = 0x00000002
ERROR_HEAD_OPEN = 0x00000004
ERROR_PAUSED = 0x00010000


@dataclass(frozen=True)
class StatusSnapshot:
    paper_out: bool
    paused: bool
    head_open: bool
    ribbon_out: bool
    label_length: int  # dots, the current ^LL
    formats_in_buffer: int  # received, not started printing (held ones included)
    labels_remaining: int  # copies still to print of the batch being printed
    partial_format: bool  # some connection is inside ^XA … without ^XZ yet
    odometer: int


def host_status(status: StatusSnapshot) -> bytes:
    """The three `~HS` lines."""
    return b"".join(STX + line.encode("ascii") + ETX + CRLF for line in _host_status_lines(status))


def _host_status_lines(s: StatusSnapshot) -> list[str]:
    line1 = (
        f"030,{_flag(s.paper_out)},{_flag(s.paused)},{min(s.label_length, 9999):04d},"
        f"{min(s.formats_in_buffer, 999):03d},0,0,{_flag(s.partial_format)},000,0,0,0"
    )
    # mmm = 001: die-cut media, thermal transfer (bit 0), as the q flag says too.
    line2 = (
        f"001,0,{_flag(s.head_open)},{_flag(s.ribbon_out)},1,2,6,0,"
        f"{min(s.labels_remaining, 99_999_999):08d},1,000"
    )
    return [line1, line2, "1234,0"]


def error_status(s: StatusSnapshot) -> bytes:
    """The `~HQES` block: "1" + the bits when an error is present, else "0" and zeros."""
    errors = (
        (ERROR_MEDIA_OUT if s.paper_out else 0)
        | (ERROR_RIBBON_OUT if s.ribbon_out else 0)
        | (ERROR_HEAD_OPEN if s.head_open else 0)
        | (ERROR_PAUSED if s.paused else 0)
    )
    text = (
        "\r\n\r\n  PRINTER STATUS                            \r\n"
        f"   ERRORS:         {_flag(bool(errors))} 00000000 {errors:08X}      \r\n"
        "   WARNINGS:       0 00000000 00000000      \r\n"
    )
    return STX + text.encode("ascii") + ETX


def host_identification(model: str, firmware: str, dpi: int, memory: str) -> bytes:
    """`~HI`: `<STX>model,firmware,dots per mm,memory<ETX>`."""
    text = f"{model},{firmware},{dots_per_mm(dpi)},{memory}"
    return STX + text.encode("ascii", "replace") + ETX


def getvar(name: str, status: StatusSnapshot, values: dict[str, str]) -> bytes:
    """SGD `getvar`: the value in double quotes, no line end; "?" for an unknown name."""
    key = name.strip().lower()
    if key == "odometer.total_label_count":
        value = str(status.odometer)
    elif key == "device.host_status":
        value = ",".join(_host_status_lines(status))
    else:
        value = values.get(key, "?")
    return b'"' + value.encode("ascii", "replace") + b'"'


def dots_per_mm(dpi: int) -> int:
    return round(dpi / 25.4)  # 203 → 8, 300 → 12, 600 → 24


def _flag(value: bool) -> str:
    return "1" if value else "0"
