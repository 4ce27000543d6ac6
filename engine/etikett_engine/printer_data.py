"""What a raw print job may send to a printer: data in the printer's own language, framed as
that language frames it, and nothing else.

A Runner connects to printers on the site's network; were any bytes allowed, a raw job to
`tcp://10.0.0.5:<port>` would make it a client of whatever listens there (an HTTP API, a
database, a line-based admin port). So, checked by the service when the job is submitted and
again by the Runner before it sends:
- ZPL: ZPL commands (`^…`, `~…`) and Zebra SGD commands (`! U1 …`). Every format `^XA` is closed
  by `^XZ`, and between formats there is nothing but whitespace, `~` commands and SGD lines; so
  the first line a listening service reads is a printer command, and no line of another protocol
  stands on its own outside a format.
- TSPL: the first line is a TSPL command (`SIZE`, `GAP`, `CLS`, …).
- EPL: the first line is an EPL2 command (`N`, `q…`, `Q…`, …).
- Never a line that is an HTTP request line (`GET / HTTP/1.1`).

Standard library only: it is part of the engine, which the Runner installs too.
"""

from __future__ import annotations

import re

LANGUAGES = ("zpl", "tspl", "epl")
_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\r\n"
_FORMAT_START = re.compile(rb"\^[Xx][Aa]")
_FORMAT_END = re.compile(rb"\^[Xx][Zz]")
# Outside formats: ~ commands (~HS, ~JA, ~DGR:…), SGD lines, whitespace.
_BETWEEN = re.compile(rb"(?:[ \t\r\n]+|~[^\r\n^~]*|! ?U1?[^\r\n]*(?:\r?\n|$))*", re.IGNORECASE)
_HTTP_REQUEST_LINE = re.compile(
    rb"[A-Z]{3,10} [^ \r\n]+ HTTP/\d(?:\.\d)?\r?(?:\n|$)", re.IGNORECASE
)
_TSPL_COMMANDS = (
    b"SIZE|GAP|BLINE|OFFSET|SPEED|DENSITY|DIRECTION|REFERENCE|SHIFT|CODEPAGE|CLS|FEED|BACKFEED|"
    b"BACKUP|FORMFEED|HOME|PRINT|SOUND|CUT|LIMITFEED|SELFTEST|SET|EOP|DOWNLOAD|KILL|MOVE|RUN|"
    b"TEXT|BARCODE|QRCODE|DMATRIX|PDF417|AZTEC|MAXICODE|BITMAP|PUTBMP|PUTPCX|BOX|BAR|CIRCLE|"
    b"ELLIPSE|ERASE|REVERSE|BLOCK|TLC39|INITIALPRINTER"
)
_TSPL_FIRST = re.compile(rb"(?:" + _TSPL_COMMANDS + rb")(?:[ \r\n]|$)")
_EPL_FIRST = re.compile(
    rb"(?:N|q\d|Q\d|R-?\d|S\d|D\d|Z[TB]|I[8A-Z]|O[A-Z]*|J[FB]|[AB]\d|b\d|GW\d|GG\d|GK|GI|GM|"
    rb"L[OESW]\d|X\d|P\d|U[NS]?|oR|r[NY]|TD|TT|FE|FK|FS|\?)(?![A-Za-z])[^\r\n]*(?:\r?\n|$)"
)


def refusal(data: bytes, language: str) -> str | None:
    """Why `data` is not a job in `language` (zpl, tspl, epl), or None when it is."""
    if not data:
        return "the job has no bytes"
    if _holds_http_request_line(data):
        return "it holds an HTTP request line"
    body = data.removeprefix(_BOM).lstrip(_WHITESPACE)
    if not body:
        return "the job holds only whitespace"
    if language == "zpl":
        return _zpl_refusal(body)
    if language == "tspl":
        first = body.splitlines()[0] if body else b""
        ok = _TSPL_FIRST.match(first.upper())
        return None if ok else "it does not start with a TSPL command (SIZE, GAP, CLS, …)"
    if language == "epl":
        return None if _EPL_FIRST.match(body) else "it does not start with an EPL2 command (N, q…)"
    return f"no printer language {language!r}"


def _holds_http_request_line(data: bytes) -> bool:
    """Whether a line of `data` is an HTTP request line; only lines holding " HTTP/" are
    looked at (a fast search: a job of megabytes costs a millisecond, not a regex pass)."""
    found = data.find(b" HTTP/")
    while found != -1:
        start = max(data.rfind(b"\n", 0, found), data.rfind(b"\r", 0, found)) + 1
        if _HTTP_REQUEST_LINE.match(data, start):
            return True
        found = data.find(b" HTTP/", found + 1)
    return False


def _zpl_refusal(body: bytes) -> str | None:
    if not body.startswith((b"^", b"~", b"!")):
        return "it does not start with a ZPL command (^XA, ~…) or an SGD command (! U1 …)"
    position = 0
    while position < len(body):
        between = _BETWEEN.match(body, position)
        position = between.end() if between else position
        if position >= len(body):
            return None
        start = _FORMAT_START.match(body, position)
        if start is None:
            snippet = body[position : position + 20]
            return f"outside a ^XA…^XZ format it holds {snippet!r}, not a ZPL or SGD command"
        end = _FORMAT_END.search(body, start.end())
        if end is None:
            return "a ^XA format is not closed by ^XZ"
        position = end.end()
    return None
