"""Which format a file is in, and its conversion: ZPL II formats or a gLabels document (see
`etikett.importers`)."""

from __future__ import annotations

from etikett.importers.conversion import MAX_LABELS, Conversion, gunzip, refuse
from etikett.importers.glabels import convert_glabels
from etikett.importers.zpl import convert_zpl
from etikett_engine.errors import ProblemCode


def convert(
    name: str, data: bytes, *, dpi: int, max_expanded: int, max_labels: int = MAX_LABELS
) -> Conversion:
    """The labels of a ZPL or gLabels file. `dpi` is the density ZPL dots are meant for (and the
    density gLabels documents get); `max_expanded` bounds what compressed input may grow to,
    `max_labels` how many labels one file may hold."""
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, max_expanded)
    if not data.strip():
        raise refuse(ProblemCode.IMPORT_EMPTY, "The file is empty.", reason="empty")
    text_start = data.lstrip()[:64]
    if text_start.startswith(b"\xef\xbb\xbf"):
        text_start = text_start[3:]
    if text_start.startswith(b"<"):
        return convert_glabels(name, data, dpi=dpi, max_expanded=max_expanded)
    if b"^XA" in data.upper() or b"^xa" in data:
        return convert_zpl(name, data, dpi=dpi, max_expanded=max_expanded, max_labels=max_labels)
    raise refuse(
        ProblemCode.IMPORT_UNREADABLE,
        "The file is neither a ZPL format (^XA…^XZ) nor a gLabels document.",
        reason="unknown_format",
    )
