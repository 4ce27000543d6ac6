"""Preflight of each object where it lands: an object that cannot be drawn, fonts that do not
load, text that overflows its box, barcode modules smaller than a printer dot, ink outside the
label, and barcodes' quiet zones clear of other ink and on the label.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from PIL import Image

from etikett_engine.dsl.preflight import LabelFinding, pointer
from etikett_engine.errors import EtikettError
from etikett_engine.render.barcode import SPECS, bar_height_dots, module_dots
from etikett_engine.render.fonts import font
from etikett_engine.render.preflight.findings import dots_to_mm, label_finding
from etikett_engine.render.text import OVERFLOW_KEY, overflow
from etikett_engine.render.units import MM_PER_INCH, mm_to_dots

if TYPE_CHECKING:
    from etikett_engine.dsl.label import BarcodeObject, LabelObject, TextObject

Box = tuple[int, int, int, int]  # left, top, right, bottom (exclusive), label dots

LINEAR_QUIET: dict[str, tuple[int, int]] = {"ean13": (11, 7), "upca": (9, 9)}  # else 10/10
MATRIX_QUIET: dict[str, int] = {"qr": 4, "datamatrix": 1, "gs1-datamatrix": 1, "pdf417": 2}


@dataclass(slots=True)
class Placed:
    index: int
    obj: LabelObject
    raw: Image.Image  # the object's ink, unrotated
    ink: Image.Image  # as placed: rotated
    box: Box
    tight: Box | None  # where it prints any dot, in label dots
    text: str | None = None  # what a text or barcode object shows


def font_loads(obj: TextObject) -> bool:
    return _loads(obj.font, obj.weight)


@cache
def _loads(family: str, weight: int) -> bool:

    try:
        font(family, weight, 10)
    except Exception:  # fontpkg raises its own errors for a missing family or file
        return False
    return True


def ink_box(ink: Image.Image) -> Box | None:
    """Where the ink has dots; noted on the ink itself (cached inks are never drawn on)."""
    if _BOX_KEY not in ink.info:
        ink.info[_BOX_KEY] = ink.getbbox()
    found: Box | None = ink.info[_BOX_KEY]
    return found


_BOX_KEY = "etikett.ink_box"


def unrenderable(index: int, obj: LabelObject, error: EtikettError) -> LabelFinding:
    literal = getattr(obj, "expression", None) is None
    if obj.type == "barcode" and literal:
        return label_finding(
            "label.barcode_invalid",
            pointer("objects", index, "content"),
            obj.id,
            f"The barcode {obj.id!r} cannot encode its content: "
            f"{error.params.get('message') or error.detail}",
            extra={k: v for k, v in error.params.items() if k != "object_id"},
        )
    return label_finding(
        "label.sample_failed",
        pointer("objects", index),
        obj.id,
        f"{obj.id!r} could not be laid out with the samples, so it was not checked: {error.detail}",
    )


def text_findings(
    index: int, obj: TextObject, text: str, dpi: int, ink: Image.Image | None = None
) -> list[LabelFinding]:
    """Text that misses its box; read from the text's ink when it was drawn (it notes that)."""
    if ink is not None and OVERFLOW_KEY in ink.info:
        missed: dict[str, int] | None = ink.info[OVERFLOW_KEY]
    else:
        missed = overflow(obj, text, dpi)
    if missed is None:
        return []
    parts = []
    if "width_dots" in missed:
        parts.append(f"{missed['width_dots']} dots wide in a {missed['box_width_dots']}-dot box")
    if "height_dots" in missed:
        parts.append(f"{missed['height_dots']} dots tall in a {missed['box_height_dots']}-dot box")
    if "max_lines" in missed:
        parts.append(f"lines past max_lines {missed['max_lines']} are cut off")
    return [
        label_finding(
            "label.text_overflow",
            pointer("objects", index),
            obj.id,
            f"The text of {obj.id!r} does not fit its box: {'; '.join(parts)}.",
            missed,
        )
    ]


def module_findings(index: int, obj: BarcodeObject, dpi: int) -> list[LabelFinding]:
    if obj.module_width_mm is not None and mm_to_dots(obj.module_width_mm, dpi) < 1:
        dot_mm = round(MM_PER_INCH / dpi, 4)
        return [
            label_finding(
                "label.module_too_narrow",
                pointer("objects", index, "module_width_mm"),
                obj.id,
                f"The module of {obj.id!r} ({obj.module_width_mm} mm) is narrower than one dot "
                f"({dot_mm} mm) at {dpi} dpi; it would print as one dot, wider than designed.",
                module_mm=obj.module_width_mm,
                dot_mm=dot_mm,
                dpi=dpi,
            )
        ]
    if module_dots(obj, dpi) == 1:
        dot_mm = round(MM_PER_INCH / dpi, 4)
        finding = label_finding(
            "label.module_too_narrow",
            pointer("objects", index),
            obj.id,
            f"The module of {obj.id!r} is a single dot ({dot_mm} mm) at {dpi} dpi; thermal heads "
            "print single-dot bars unevenly. Two dots or more scan reliably.",
            module_dots=1,
            dot_mm=dot_mm,
            dpi=dpi,
        )
        return [finding.model_copy(update={"severity": "warning"})]
    return []


def outside_findings(item: Placed, width: int, height: int, dpi: int) -> list[LabelFinding]:
    if item.tight is None:
        return []
    left, top, right, bottom = item.tight
    if left >= 0 and top >= 0 and right <= width and bottom <= height:
        return []  # the usual case, decided without building the edges
    beyond = {
        "left": max(0, -left),
        "top": max(0, -top),
        "right": max(0, right - width),
        "bottom": max(0, bottom - height),
    }
    beyond = {edge: dots for edge, dots in beyond.items() if dots}
    if not beyond:
        return []
    obj = item.obj
    whole = right <= 0 or bottom <= 0 or left >= width or top >= height
    edges = ", ".join(f"{dots} dots past the {edge} edge" for edge, dots in beyond.items())
    code = "label.barcode_clipped" if obj.type == "barcode" else "label.object_outside"
    what = "barcode" if obj.type == "barcode" else obj.type
    furthest = dots_to_mm(max(beyond.values()), dpi)
    message = (
        f"The {what} {obj.id!r} lies entirely outside the label."
        if whole
        else f"The {what} {obj.id!r} is cut off: {edges} ({furthest} mm)."
    )
    return [
        label_finding(
            code,
            pointer("objects", item.index),
            obj.id,
            message,
            edges=beyond,
            entirely=whole,
        )
    ]


def quiet_zone_findings(
    item: Placed, obj: BarcodeObject, placed: list[Placed], width: int, height: int, dpi: int
) -> list[LabelFinding]:
    spec = SPECS[obj.symbology]
    module = module_dots(obj, dpi)
    zones = _zones(obj, spec.kind, module, dpi, item)
    if not zones:
        return []
    problems: dict[str, Any] = {}
    label = (0, 0, width, height)
    # Most objects are nowhere near: only those reaching into the zones' outline are looked at.
    u0, u1 = min(z[0] for z in zones), min(z[1] for z in zones)
    u2, u3 = max(z[2] for z in zones), max(z[3] for z in zones)
    near = [
        other
        for other in placed
        if other is not item
        and other.obj.ink != "white"
        and other.tight is not None
        and other.tight[0] < u2
        and other.tight[2] > u0
        and other.tight[1] < u3
        and other.tight[3] > u1
    ]
    for zone in zones:
        if not _inside(zone, label):
            problems["off_label"] = True
        z0, z1, z2, z3 = zone
        for other in near:
            tight = other.tight  # decided without a crop where the boxes do not meet
            if (
                tight is None
                or tight[0] >= z2
                or tight[2] <= z0
                or tight[1] >= z3
                or tight[3] <= z1
            ):
                continue
            hit = _ink_in(other, zone)
            if hit is not None:
                problems.setdefault("intruders", [])
                if other.obj.id not in problems["intruders"]:
                    problems["intruders"].append(other.obj.id)
    if not problems:
        return []
    reasons = []
    if problems.get("off_label"):
        reasons.append("it runs off the label")
    if problems.get("intruders"):
        reasons.append("other ink lies in it (" + ", ".join(problems["intruders"]) + ")")
    quiet = MATRIX_QUIET.get(obj.symbology) or LINEAR_QUIET.get(obj.symbology, (10, 10))
    finding = label_finding(
        "label.barcode_quiet_zone",
        pointer("objects", item.index),
        obj.id,
        f"The quiet zone of {obj.id!r} is not clear: {' and '.join(reasons)}.",
        quiet_zone_modules=quiet,
        module_dots=module,
        **problems,
    )
    if not problems.get("intruders"):  # only the label's edge: scanners often cope
        finding = finding.model_copy(update={"severity": "warning"})
    return [finding]


def _zones(obj: BarcodeObject, kind: str, module: int, dpi: int, item: Placed) -> list[Box]:
    """The quiet zones in label dots: beside the bars of linear codes, around 2D symbols."""
    left, top = item.box[0], item.box[1]
    return [
        (z[0] + left, z[1] + top, z[2] + left, z[3] + top)
        for z in _ink_zones(obj, kind, module, dpi, item.raw)
    ]


def _ink_zones(obj: BarcodeObject, kind: str, module: int, dpi: int, ink: Image.Image) -> list[Box]:
    """The zones in the turned ink's own coordinates. The ink is drawn from the symbology, the
    data, the module and the bar height, which fix the zones too: they are noted on the ink, per
    rotation, like its dot box."""
    key = f"{_ZONES_KEY}.{obj.rotation}"
    found: list[Box] | None = ink.info.get(key)
    if found is not None:
        return found
    bars_height = bar_height_dots(obj, dpi) if kind == "linear" else ink.height
    bars = ink.crop((0, 0, ink.width, min(bars_height, ink.height))).getbbox()
    local: list[Box] = []
    if bars is not None:
        x0, y0, x1, y1 = bars
        if kind == "linear":
            before, after = LINEAR_QUIET.get(obj.symbology, (10, 10))
            local = [(x0 - before * module, y0, x0, y1), (x1, y0, x1 + after * module, y1)]
        else:
            q = MATRIX_QUIET.get(obj.symbology, 2) * module
            local = [
                (x0 - q, y0 - q, x1 + q, y0),
                (x0 - q, y1, x1 + q, y1 + q),
                (x0 - q, y0, x0, y1),
                (x1, y0, x1 + q, y1),
            ]
    found = [turn_box(zone, ink.width, ink.height, obj.rotation) for zone in local]
    ink.info[key] = found
    return found


_ZONES_KEY = "etikett.quiet_zones"


def turn_box(box: Box, w: int, h: int, rotation: int) -> Box:
    """A rectangle of an unrotated w x h ink, in the ink's coordinates once turned clockwise."""
    x0, y0, x1, y1 = box
    if rotation == 90:
        return (h - y1, x0, h - y0, x1)
    if rotation == 180:
        return (w - x1, h - y1, w - x0, h - y0)
    if rotation == 270:
        return (y0, w - x1, y1, w - x0)
    return box


def _inside(zone: Box, label: Box) -> bool:
    return (
        zone[0] >= label[0] and zone[1] >= label[1] and zone[2] <= label[2] and zone[3] <= label[3]
    )


def _ink_in(item: Placed, region: Box) -> Box | None:
    """Where the item prints dots inside `region` (label dots). Noted on the item's ink per
    place relative to it (a few per ink: the quiet zones of the barcodes near it)."""
    box, tight = item.box, item.tight
    if tight is None:
        return None
    left, top = max(tight[0], region[0]), max(tight[1], region[1])
    right, bottom = min(tight[2], region[2]), min(tight[3], region[3])
    if left >= right or top >= bottom:
        return None
    inside = (left - box[0], top - box[1], right - box[0], bottom - box[1])
    key = f"{_INK_IN_KEY}.{item.obj.rotation}.{inside}"
    noted = item.raw.info
    if key in noted:
        found: Box | None = noted[key]
        return found
    found = item.ink.crop(inside).getbbox()
    if len(noted) < _MAX_NOTED:
        noted[key] = found
    return found


_INK_IN_KEY = "etikett.ink_in"
_MAX_NOTED = 64
