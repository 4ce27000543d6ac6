"""Label versions parsed once per warm process.

A version never changes once saved, so its parsed `LabelDocument` is kept (by label and number)
and handed to every preview, Copilot and CEL evaluation that reads it: no second read of the
version, no second unpacking and validation, and what the renderer keeps per document (the
preflight of its expressions) is kept per version. Parsed documents are values: nobody changes
one in place (every change is a patch that makes a new version). Bounded by the versions'
stored size, so a few large image labels cannot fill a container's memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from etikett.store.labels import VersionRecord
from etikett_engine.dsl.label import LabelDocument

MAX_KEPT_BYTES = 8 * 1024 * 1024  # of stored (compressed) documents
MAX_KEPT = 256

_kept: OrderedDict[tuple[str, int], tuple[LabelDocument, int]] = OrderedDict()
_kept_bytes = 0
_lock = threading.Lock()


def kept(label_id: str, version: int) -> LabelDocument | None:
    """The version as parsed before in this process, if it still is kept."""
    with _lock:
        found = _kept.get((label_id, version))
        if found is None:
            return None
        _kept.move_to_end((label_id, version))
        return found[0]


def parsed(record: VersionRecord) -> LabelDocument:
    """The record's document, parsed and kept for the next reader of the same version."""
    global _kept_bytes
    key = (record.label_id, record.version)
    document = kept(*key)
    if document is not None:
        return document
    document = LabelDocument.model_validate(record.document)
    size = len(record.blob)
    if size * 4 > MAX_KEPT_BYTES:  # one version may not push out everything else
        return document
    with _lock:
        if key not in _kept:
            _kept[key] = (document, size)
            _kept_bytes += size
            while _kept_bytes > MAX_KEPT_BYTES or len(_kept) > MAX_KEPT:
                _, (_, evicted) = _kept.popitem(last=False)
                _kept_bytes -= evicted
    return document


def forget() -> None:
    """Keep nothing (tests that swap the store under a warm process)."""
    global _kept_bytes
    with _lock:
        _kept.clear()
        _kept_bytes = 0
