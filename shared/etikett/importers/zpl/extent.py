"""Where an imported label's objects print, laid out by the renderer with their samples: the
label's length when the file gives none, and the label turned upside down (`^POI`)."""

from __future__ import annotations

from typing import Any

from etikett.importers.conversion import dots_to_mm
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import resolve_variables
from etikett_engine.render.preflight.layout import lay_out

Box = tuple[int, int, int, int]


def object_boxes(document: dict[str, Any]) -> list[tuple[Box, Box | None] | None]:
    """Per object, its box and the box of its dots in label dots (None: it cannot be drawn)."""

    parsed = LabelDocument.model_validate(document)
    try:
        values = resolve_variables(parsed, {}, use_samples=True)
    except Exception:  # samples that do not resolve: every object is laid out without values
        values = {}
    found: list[tuple[Box, Box | None] | None] = [None] * len(parsed.objects)
    for item in lay_out(parsed, values, None, None, [], strict=False):
        found[item.index] = (item.box, item.tight)
    return found


def content_extent(document: dict[str, Any]) -> tuple[int, int]:
    """The right and bottom edges of every dot the objects print."""
    right = bottom = 0
    for entry in object_boxes(document):
        if entry is None or entry[1] is None:
            continue
        right, bottom = max(right, entry[1][2]), max(bottom, entry[1][3])
    return right, bottom


def turned_upside_down(document: dict[str, Any], width: int, length: int, dpi: int) -> None:
    """Every object turned half a turn about the label's centre (in place)."""

    boxes = object_boxes(document)
    for obj, entry in zip(document["objects"], boxes, strict=True):
        if entry is None:
            continue
        _, _, right, bottom = entry[0]
        obj["x_mm"] = dots_to_mm(width - right, dpi)
        obj["y_mm"] = dots_to_mm(length - bottom, dpi)
        turned = (obj.get("rotation", 0) + 180) % 360
        if turned:
            obj["rotation"] = turned
        else:
            obj.pop("rotation", None)
