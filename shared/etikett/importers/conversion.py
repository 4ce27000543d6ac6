"""What an import answers and the bounds every format's converter keeps: the labels found, the
report of what could not be carried over, the refusal, and the helpers the formats share
(decompression with a limit, dots to millimetres, images as PNG)."""

from __future__ import annotations

import base64
import io
import zlib
from dataclasses import dataclass, field
from typing import Any, Literal

from etikett_engine.errors import EtikettError, PayloadTooLarge, ProblemCode

Format = Literal["zpl", "glabels"]
Severity = Literal["warning", "info"]

MAX_LABELS = 50  # formats (labels) per file
MAX_OBJECTS = 2000  # per label, as the label schema allows
MAX_XML_DEPTH = 32
MAX_XML_ELEMENTS = 20_000


@dataclass
class Note:
    """One thing the import could not carry over exactly, in plain words."""

    severity: Severity
    message: str
    line: int | None = None
    element: str | None = None
    document: int | None = None  # index of the label it concerns

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"severity": self.severity, "message": self.message}
        for key in ("line", "element", "document"):
            value = getattr(self, key)
            if value is not None:
                found[key] = value
        return found


@dataclass
class Imported:
    """One label found in the file: a suggested name and its (valid) label document."""

    name: str
    document: dict[str, Any]


@dataclass
class Conversion:
    format: Format
    labels: list[Imported] = field(default_factory=list)
    report: list[Note] = field(default_factory=list)


class ImportRefused(EtikettError):
    """The file cannot be imported at all; nothing is created."""

    code, title = ProblemCode.IMPORT_UNREADABLE, "The file cannot be imported"


def refuse(code: ProblemCode, detail: str, **params: Any) -> ImportRefused:
    return ImportRefused(detail, code, **params)


def gunzip(data: bytes, limit: int) -> bytes:
    """The gzip stream's content, refused once it would pass `limit` bytes (a gzip bomb is
    stopped after `limit` bytes of work, not after it filled the memory)."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as error:
        raise refuse(
            ProblemCode.IMPORT_UNREADABLE, f"The gzip stream is broken: {error}.", reason="gzip"
        ) from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise PayloadTooLarge(
            f"The file expands to more than {limit} bytes.",
            ProblemCode.IMPORT_TOO_LARGE,
            limit=limit,
            expanded=True,
        )
    if not inflater.eof:
        raise refuse(ProblemCode.IMPORT_UNREADABLE, "The gzip stream is truncated.", reason="gzip")
    return out


def inflate(data: bytes, limit: int, what: str) -> bytes:
    """A zlib stream (ZPL's Z64) expanded to at most `limit` bytes."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as error:
        raise refuse(
            ProblemCode.IMPORT_GRAPHIC_INVALID, f"{what}: the compressed data is broken ({error})."
        ) from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise refuse(
            ProblemCode.IMPORT_GRAPHIC_INVALID,
            f"{what} expands to more bytes than it declares ({limit}).",
            limit=limit,
        )
    return out


def dots_to_mm(dots: float, dpi: int) -> float:
    """Dots → mm, rounded so that the renderer's `round(mm / 25.4 × dpi)` gives the dots back."""
    return round(dots * 25.4 / dpi, 4)


def png(image: Any) -> str:
    """A PIL image as base64 PNG (image objects' content)."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
