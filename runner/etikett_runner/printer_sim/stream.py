"""The byte stream of one connection → ZPL commands and SGD lines, however the bytes are split.

A ZPL command is a prefix (`^` format, `~` control), a two-letter code and parameters that run to
the next prefix, so most commands are complete only when the next one starts. Commands without
parameters that a client waits on (`^XZ`, `~HS`, `~HI`, `~HQxx`, …) are acted on as soon as their
code has arrived: a Runner that sends `~HS` and waits must get its answer. CR and LF inside
parameters are dropped, as printers do. `^GFB` carries b raw bytes, read by count. SGD commands
(`! U1 getvar "name"`) are recognised between commands; anything else outside a command is noise
and skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Parameterless commands, complete as soon as their code is known.
_IMMEDIATE = frozenset({"^XA", "^XZ", "^FS", "~HS", "~HI", "~PS", "~PP", "~JA"})
_PREFIXES = b"^~"
# Where the next command (or SGD line, or line end) starts: one scan that stops at the first.
_COMMAND_START = re.compile(rb"[\^~]")
_ITEM_START = re.compile(rb"[\^~!]")
_LINE_END = re.compile(rb"[\r\n]")
_GETVAR = re.compile(rb'! *U1? +getvar +"([^"\r\n]*)"', re.IGNORECASE)
_GFB_HEADER = re.compile(rb"\^GF([BC]),([0-9]{1,9}),[^,^~]*,[^,^~]*,", re.IGNORECASE)
# One command's parameters may not grow past this (a 600 dpi 4x39 in label in plain hex is
# ~14 MB): a stream that never sends the next command must not take the simulator's memory.
MAX_PENDING = 32 * 1024 * 1024


class StreamError(ValueError):
    """The connection sent something that cannot be a command (too long); it is closed."""


@dataclass(frozen=True)
class Command:
    name: str  # prefix and code, upper case: "^GF", "~HS", "~HQ"
    params: str  # CR/LF removed; bytes mapped 1:1 (latin-1)
    data: bytes | None = None  # the payload of ^GFB / ^GFC


@dataclass(frozen=True)
class Sgd:
    line: str  # the whole command, e.g. '! U1 getvar "odometer.total_label_count"'
    getvar: str | None  # the variable asked for, if it is a getvar


Item = Command | Sgd


class ZplStream:
    """Feed bytes as they arrive; get the complete commands back in order."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan = 0  # where the search for the next prefix resumes: linear, not quadratic

    def feed(self, chunk: bytes) -> list[Item]:
        self._buf += chunk
        return self._drain(final=False)

    def close(self) -> list[Item]:
        """End of stream: a command still waiting for the next prefix is complete now."""
        items = self._drain(final=True)
        self._buf.clear()
        return items

    @property
    def pending(self) -> int:
        return len(self._buf)

    def _drain(self, *, final: bool) -> list[Item]:
        items: list[Item] = []
        while True:
            item, used = self._next(final)
            if used:
                del self._buf[:used]
                self._scan = 0
            if item is not None:
                items.append(item)
            elif not used:
                return items

    def _next(self, final: bool) -> tuple[Item | None, int]:
        """(an item or None, bytes consumed); (None, 0) means: wait for more bytes."""
        buf = self._buf
        if not buf:
            return None, 0
        first = buf[0]
        if first == ord("!"):
            return self._sgd(final)
        if first not in _PREFIXES:
            start = _find_any(buf, _ITEM_START, 1)  # noise between commands (CR/LF, spaces)
            return None, len(buf) if start < 0 else start
        if len(buf) < 3:
            return (None, len(buf)) if final else (None, 0)
        name = chr(first) + buf[1:3].decode("latin-1").upper()
        if name in _IMMEDIATE:
            return Command(name, ""), 3
        if name == "~HQ":  # ~HQES etc.: the query type is always two letters
            if len(buf) < 5:
                return (None, len(buf)) if final else (None, 0)
            return Command(name, buf[3:5].decode("latin-1").upper()), 5
        if name == "^GF":
            binary = self._binary_graphic(final)
            if binary is not None:
                return binary
        end = _find_any(buf, _COMMAND_START, max(3, self._scan))
        if end < 0:
            if len(buf) > MAX_PENDING:
                raise StreamError(f"{name} parameters exceed {MAX_PENDING} bytes")
            if not final:
                self._scan = len(buf)
                return None, 0
            end = len(buf)
        return Command(name, _params(buf[3:end])), end

    def _binary_graphic(self, final: bool) -> tuple[Item | None, int] | None:
        """^GFB/^GFC: the header, then exactly b bytes that may hold anything. None: ASCII data."""
        buf = self._buf
        if len(buf) < 4:
            return (None, len(buf)) if final else (None, 0)
        if bytes(buf[3:4]).upper() not in (b"B", b"C"):
            return None
        header = _GFB_HEADER.match(buf)
        if header is None:
            if len(buf) < 64 and not final and _find_any(buf, _COMMAND_START, 1) < 0:
                return None, 0  # the header is still arriving
            return None  # malformed: read as an ordinary command, which parse_gf refuses
        count = int(header[2])
        if count > MAX_PENDING:
            raise StreamError(f"^GF{header[1].decode()} announces more than {MAX_PENDING} bytes")
        end = header.end() + count
        if len(buf) < end:
            return (None, len(buf)) if final else (None, 0)
        params = _params(buf[3 : header.end()])
        return Command("^GF", params, bytes(buf[header.end() : end])), end

    def _sgd(self, final: bool) -> tuple[Item | None, int]:
        buf = self._buf
        rest = bytes(buf[1:16]).lstrip(b" ")
        if rest and not rest.upper().startswith(b"U"):
            return None, 1  # a lone "!" between commands: noise
        match = _GETVAR.match(buf)
        if match is not None:  # complete at its closing quote: no line end needed to answer
            return Sgd(match[0].decode("latin-1"), match[1].decode("latin-1")), match.end()
        end = _find_any(buf, _LINE_END, 1)
        if end >= 0:
            return Sgd(buf[:end].decode("latin-1"), None), end + 1
        if final or len(buf) > 4096:
            return None, len(buf)
        return None, 0


def _find_any(buf: bytearray, chars: re.Pattern[bytes], start: int) -> int:
    """Where the first of `chars` is at or after `start`, or -1."""
    found = chars.search(buf, start)
    return -1 if found is None else found.start()


def _params(raw: bytes | bytearray) -> str:
    return raw.replace(b"\r", b"").replace(b"\n", b"").decode("latin-1")
