"""Every object of a label laid out as a preview lays it out, with the findings of each object
and of their geometry on the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from etikett.dsl.preflight import LabelFinding, pointer
from etikett.errors import EtikettError
from etikett.render.barcode import render_barcode
from etikett.render.preflight.findings import label_finding
from etikett.render.preflight.objects import (
    Placed,
    font_loads,
    ink_box,
    module_findings,
    outside_findings,
    quiet_zone_findings,
    text_findings,
    turn_box,
    unrenderable,
)
from etikett.render.raster import _TURN, object_ink
from etikett.render.text import render_text
from etikett.render.units import label_dots, mm_to_dots
from etikett.render.values import declared_types, object_text

if TYPE_CHECKING:
    from etikett.dsl.label import LabelDocument


def lay_out(
    document: LabelDocument,
    values: Mapping[str, Any],
    counters: Mapping[str, Any] | None,
    now: datetime | None,
    findings: list[LabelFinding],
    *,
    strict: bool,
) -> list[Placed]:
    """Each object's ink where it lands, in document order; per-object findings on the way.
    Unless `strict`, an object that cannot be drawn becomes a finding instead of an error."""
    from etikett.dsl.label import BarcodeObject, TextObject

    dpi = document.dpi
    declared = declared_types(document)
    placed: list[Placed] = []
    for index, obj in enumerate(document.objects):
        if obj.type == "text" and not font_loads(obj):
            findings.append(
                label_finding(
                    "label.font_unknown",
                    pointer("objects", index, "font"),
                    obj.id,
                    f"The font {obj.font!r} at weight {obj.weight} cannot be loaded.",
                    font=obj.font,
                    weight=obj.weight,
                )
            )
            continue
        try:
            text = ""
            if isinstance(obj, TextObject):
                text = object_text(obj, values, declared, now=now, counters=counters)
                ink = render_text(obj, text, dpi)
            elif isinstance(obj, BarcodeObject):
                text = object_text(obj, values, declared, now=now, counters=counters)
                ink = render_barcode(obj, text, dpi)
            else:
                ink = object_ink(obj, values, declared, dpi)
        except EtikettError as error:
            if strict:
                raise
            findings.append(unrenderable(index, obj, error))
            continue
        turned = ink.transpose(_TURN[obj.rotation]) if obj.rotation else ink
        left, top = mm_to_dots(obj.x_mm, dpi), mm_to_dots(obj.y_mm, dpi)
        box = (left, top, left + turned.width, top + turned.height)
        tight = ink_box(ink)
        if tight is not None:
            tight = turn_box(tight, ink.width, ink.height, obj.rotation)
            tight = (left + tight[0], top + tight[1], left + tight[2], top + tight[3])
        placed.append(Placed(index, obj, ink, turned, box, tight))
        if obj.type == "text":
            findings += text_findings(index, obj, text, dpi)
        if obj.type == "barcode":
            findings += module_findings(index, obj, dpi)
    return placed


def geometry(document: LabelDocument, placed: list[Placed]) -> list[LabelFinding]:
    from etikett.dsl.label import BarcodeObject

    dpi = document.dpi
    width, height = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    findings: list[LabelFinding] = []
    for item in placed:
        findings += outside_findings(item, width, height, dpi)
        if isinstance(item.obj, BarcodeObject):
            findings += quiet_zone_findings(item, item.obj, placed, width, height, dpi)
    return findings
