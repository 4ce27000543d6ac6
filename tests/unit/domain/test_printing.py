"""A print's records are rendered once per distinct record: the encoded job repeats a label's
bytes for a repeated record instead of drawing it again. Renders are counted by the ink cache's
lookups: one per render of this label (its text object)."""

from __future__ import annotations

from typing import Any

from etikett.domain.printing.print_work import PrintWork
from etikett_engine.render.cache import INK_CACHE
from etikett_engine.render.raster import clear_caches
from unit.render.decoders import decode_zpl

DOCUMENT: dict[str, Any] = {
    "size": {"width_mm": 40, "height_mm": 20},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string"}],
    "objects": [
        {"id": "title", "type": "text", "x_mm": 3, "y_mm": 3, "size_pt": 12, "expression": "name"},
    ],
}


def _work(records: list[dict[str, Any]], serials: list[dict[str, Any]]) -> PrintWork:
    return PrintWork.model_validate(
        {
            "document": DOCUMENT,
            "records": records,
            "serials": serials,
            "copies": 2,
            "language": "zpl",
            "now": "2026-05-04T10:00:00.000Z",
        }
    )


def _labels(data: bytes) -> list[bytes]:
    return [part + b"^XZ\n" for part in data.split(b"^XZ\n") if part.strip()]


def test_each_distinct_record_renders_once() -> None:
    names = ["Anna", "Berta", "Anna", "Anna", "Berta", "Anna"]
    clear_caches()
    data = _work([{"name": n} for n in names], [{}] * len(names)).encode()
    # Two renders for two distinct records (six would be 6 lookups, four of them hits).
    assert (INK_CACHE.misses, INK_CACHE.hits) == (2, 0)
    labels = _labels(data)
    assert len(labels) == 6 and all(b"^PQ2" in label for label in labels)
    assert labels[0] == labels[2] == labels[3] == labels[5] and labels[1] == labels[4]
    assert decode_zpl(labels[0]).image().tobytes() != decode_zpl(labels[1]).image().tobytes()


def test_records_alike_but_for_their_serials_are_distinct() -> None:
    clear_caches()
    data = _work([{"name": "Anna"}] * 3, [{"c": 1}, {"c": 2}, {"c": 1}]).encode()
    assert INK_CACHE.hits + INK_CACHE.misses == 2  # two renders: serials 1 and 2
    labels = _labels(data)
    assert len(labels) == 3 and labels[0] == labels[2]
