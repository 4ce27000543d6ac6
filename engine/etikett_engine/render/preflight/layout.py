"""Every object of a label laid out as a preview lays it out, with the findings of each object
and of their geometry on the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from etikett_engine.dsl.label import BarcodeObject, TextObject
from etikett_engine.dsl.preflight import LabelFinding, pointer
from etikett_engine.errors import EtikettError
from etikett_engine.render.barcode import render_barcode
from etikett_engine.render.errors import MAX_DOTS, LayoutTooComplex
from etikett_engine.render.ink_plan import TURN
from etikett_engine.render.preflight.findings import label_finding
from etikett_engine.render.preflight.objects import (
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
from etikett_engine.render.raster import object_ink
from etikett_engine.render.text import render_text
from etikett_engine.render.units import label_dots, mm_to_dots
from etikett_engine.render.values import declared_types, object_text

if TYPE_CHECKING:
    from etikett_engine.dsl.label import LabelDocument, TextObject


class Budget:
    """What one layout may do across its objects, counted as it goes (every single object is
    bounded by the schema and the renderer already): characters shaped or encoded, and dots of
    ink drawn. Deterministic: the same document is refused the same way on every machine.
    20,000 characters is ten times a dense label's; wrapping long text costs the most."""

    CHARACTERS = 20_000
    DOTS = 4 * MAX_DOTS

    def __init__(self, characters: int = CHARACTERS, dots: int = DOTS) -> None:
        self.limits = (characters, dots)
        self.characters = characters
        self.dots = dots

    def spend(self, obj_id: str, characters: int = 0, dots: int = 0) -> None:
        self.characters -= characters
        self.dots -= dots
        if self.characters < 0:
            raise LayoutTooComplex("characters of text and barcode data", self.limits[0], obj_id)
        if self.dots < 0:
            raise LayoutTooComplex("dots of ink", self.limits[1], obj_id)


def lay_out(
    document: LabelDocument,
    values: Mapping[str, Any],
    counters: Mapping[str, Any] | None,
    now: datetime | None,
    findings: list[LabelFinding],
    *,
    strict: bool,
    budget: Budget | None = None,
) -> list[Placed]:
    """Each object's ink where it lands, in document order; per-object findings on the way.
    Unless `strict`, an object that cannot be drawn becomes a finding instead of an error. With
    a `budget`, the layout stops (`label.too_complex`) once it is spent.

    This runs on every preview, so what a check needs is read from the ink where the renderer
    noted it (its dot box, a text's overflow) and checks that cannot apply are not called."""

    dpi = document.dpi
    declared = declared_types(document)
    placed: list[Placed] = []
    for index, obj in enumerate(document.objects):
        text = ""
        try:
            if isinstance(obj, TextObject):
                if not font_loads(obj):
                    findings.append(_font_unknown(index, obj))
                    continue
                text = object_text(obj, values, declared, now=now, counters=counters)
                if budget is not None:
                    budget.spend(obj.id, characters=len(text))
                ink = render_text(obj, text, dpi)
            elif isinstance(obj, BarcodeObject):
                text = object_text(obj, values, declared, now=now, counters=counters)
                if budget is not None:
                    budget.spend(obj.id, characters=len(text))
                ink = render_barcode(obj, text, dpi)
            else:
                ink = object_ink(obj, values, declared, dpi)
        except LayoutTooComplex:
            raise  # never a finding: the whole layout stops
        except EtikettError as error:
            if strict:
                raise
            findings.append(unrenderable(index, obj, error))
            continue
        if budget is not None:
            budget.spend(obj.id, dots=ink.width * ink.height)
        rotation = obj.rotation
        turned = ink.transpose(TURN[rotation]) if rotation else ink
        left, top = mm_to_dots(obj.x_mm, dpi), mm_to_dots(obj.y_mm, dpi)
        width, height = turned.size
        tight = ink_box(ink)
        if tight is not None:
            if rotation:
                tight = turn_box(tight, ink.width, ink.height, rotation)
            tight = (left + tight[0], top + tight[1], left + tight[2], top + tight[3])
        box = (left, top, left + width, top + height)
        shows = text if isinstance(obj, TextObject | BarcodeObject) else None
        placed.append(Placed(index, obj, ink, turned, box, tight, shows))
        if isinstance(obj, TextObject):
            if obj.width_mm is not None or obj.height_mm is not None or obj.max_lines is not None:
                findings += text_findings(index, obj, text, dpi, ink)
        elif isinstance(obj, BarcodeObject):
            findings += module_findings(index, obj, dpi)
    return placed


def _font_unknown(index: int, obj: TextObject) -> LabelFinding:
    return label_finding(
        "label.font_unknown",
        pointer("objects", index, "font"),
        obj.id,
        f"The font {obj.font!r} at weight {obj.weight} cannot be loaded.",
        font=obj.font,
        weight=obj.weight,
    )


def geometry(
    document: LabelDocument, placed: list[Placed], size: tuple[int, int] | None = None
) -> list[LabelFinding]:
    """Ink past the label's edges and barcodes' quiet zones; `size`: the label in dots."""

    dpi = document.dpi
    width, height = size or label_dots(document.size.width_mm, document.size.height_mm, dpi)
    findings: list[LabelFinding] = []
    for item in placed:
        tight = item.tight
        if item.obj.ink == "white":  # clears dots: nothing of it prints, off the label or not
            continue
        if tight is not None and (
            tight[0] < 0 or tight[1] < 0 or tight[2] > width or tight[3] > height
        ):
            findings += outside_findings(item, width, height, dpi)
        if isinstance(item.obj, BarcodeObject):
            findings += quiet_zone_findings(item, item.obj, placed, width, height, dpi)
    return findings
