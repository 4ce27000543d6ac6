"""How many labels a ZPL job prints: each `^XA … ^XZ` format that draws something prints `^PQ`
copies (default 1). Used to confirm a job by the printer's counter when the job does not say."""

from __future__ import annotations

import re

_FORMAT = re.compile(rb"\^XA(.*?)\^XZ", re.DOTALL | re.IGNORECASE)
_QUANTITY = re.compile(rb"\^PQ\s*([0-9]{1,8})", re.IGNORECASE)
# Commands that put something on the label; a format without any (^XA^JUS^XZ) prints nothing.
_DRAWS = re.compile(rb"\^(?:F[DVOT]|G[FBCDES]|XG|IM|B[0-9A-Z])", re.IGNORECASE)


def count_zpl_labels(data: bytes) -> int:
    """Labels the formats in `data` print (`^PQ` of each format, its last one counting)."""
    total = 0
    for match in _FORMAT.finditer(data):
        body = match[1]
        if not _DRAWS.search(body):
            continue
        quantities = _QUANTITY.findall(body)
        total += int(quantities[-1]) if quantities else 1
    return total
