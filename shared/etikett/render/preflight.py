"""Preflight: what a label version would print wrong, found before anyone prints it.

The label is laid out as a preview lays it out (entered variables take their default, then their
sample; counters their next value) and every object's ink is checked where it lands: inside the
label, barcodes whole and with their quiet zones clear of other ink and on the label, modules at
least a printer dot, boxed text fitting its box, fonts that load. Expressions are compiled against
the declared variables; declared variables no expression uses are reported. Inks come from the
renderer's cache, so a preflight right after a preview (or before one) draws nothing twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from PIL import Image

from etikett.dsl.preflight import LABEL_FINDING_CODES, LabelFinding, pointer
from etikett.errors import EtikettError
from etikett.render.barcode import SPECS, bar_height_dots, module_dots, render_barcode
from etikett.render.errors import ensure_renderable
from etikett.render.raster import _TURN, object_ink
from etikett.render.text import overflow, render_text
from etikett.render.units import BLACK, MM_PER_INCH, WHITE, label_dots, mm_to_dots
from etikett.render.values import declared_types, object_text, resolve_variables

if TYPE_CHECKING:
    from etikett.dsl.label import BarcodeObject, LabelDocument, LabelObject, TextObject

Box = tuple[int, int, int, int]  # left, top, right, bottom (exclusive), label dots

LINEAR_QUIET: dict[str, tuple[int, int]] = {"ean13": (11, 7), "upca": (9, 9)}  # else 10/10
MATRIX_QUIET: dict[str, int] = {"qr": 4, "datamatrix": 1, "gs1-datamatrix": 1, "pdf417": 2}


@dataclass
class _Placed:
    index: int
    obj: LabelObject
    raw: Image.Image  # the object's ink, unrotated
    ink: Image.Image  # as placed: rotated
    box: Box
    tight: Box | None  # where it prints any dot, in label dots


def preflight(
    document: LabelDocument,
    *,
    values: Mapping[str, Any] | None = None,
    counters: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> list[LabelFinding]:
    """Every finding of the document, errors first, then in document order. Laid out with
    `values` (resolved variables) or else with the samples and defaults, as a preview."""
    findings = list(_expressions(document))
    if values is None:
        values = _values(document, counters, now, findings)
    if values is None:
        return _ordered(findings)
    placed = _lay_out(document, values, counters, now, findings, strict=False)
    return _ordered(findings + _geometry(document, placed))


def render_checked(
    document: LabelDocument,
    values: Mapping[str, Any],
    *,
    counters: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> tuple[Image.Image, list[LabelFinding]]:
    """The raster `render` draws and the findings of exactly that layout, each object laid out
    once (a preview's preflight costs only the checks). Render errors raise as in `render`."""
    findings = list(_expressions(document))
    placed = _lay_out(document, values, counters, now, findings, strict=True)
    dpi = document.dpi
    size = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    ensure_renderable(*size)
    canvas = Image.new("1", size, WHITE)
    for item in placed:
        canvas.paste(BLACK, item.box[:2], item.ink)
    return canvas, _ordered(findings + _geometry(document, placed))


def _lay_out(
    document: LabelDocument,
    values: Mapping[str, Any],
    counters: Mapping[str, Any] | None,
    now: datetime | None,
    findings: list[LabelFinding],
    *,
    strict: bool,
) -> list[_Placed]:
    """Each object's ink where it lands, in document order; per-object findings on the way.
    Unless `strict`, an object that cannot be drawn becomes a finding instead of an error."""
    from etikett.dsl.label import BarcodeObject, TextObject

    dpi = document.dpi
    declared = declared_types(document)
    placed: list[_Placed] = []
    for index, obj in enumerate(document.objects):
        if obj.type == "text" and not _font_loads(obj):
            findings.append(
                _finding(
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
            findings.append(_unrenderable(index, obj, error))
            continue
        turned = ink.transpose(_TURN[obj.rotation]) if obj.rotation else ink
        left, top = mm_to_dots(obj.x_mm, dpi), mm_to_dots(obj.y_mm, dpi)
        box = (left, top, left + turned.width, top + turned.height)
        tight = _ink_box(ink)
        if tight is not None:
            tight = _turn(tight, ink.width, ink.height, obj.rotation)
            tight = (left + tight[0], top + tight[1], left + tight[2], top + tight[3])
        placed.append(_Placed(index, obj, ink, turned, box, tight))
        if obj.type == "text":
            findings += _text(index, obj, text, dpi)
        if obj.type == "barcode":
            findings += _module(index, obj, dpi)
    return placed


def _geometry(document: LabelDocument, placed: list[_Placed]) -> list[LabelFinding]:
    from etikett.dsl.label import BarcodeObject

    dpi = document.dpi
    width, height = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    findings: list[LabelFinding] = []
    for item in placed:
        findings += _outside(item, width, height, dpi)
        if isinstance(item.obj, BarcodeObject):
            findings += _quiet_zone(item, item.obj, placed, width, height, dpi)
    return findings


def count_errors(findings: list[LabelFinding]) -> int:
    return sum(1 for finding in findings if finding.severity == "error")


# --- expressions and variables ------------------------------------------------------------------


def _expressions(document: LabelDocument) -> tuple[LabelFinding, ...]:
    """Compiled against the declared variables; cached by the expressions and declarations."""
    key = (
        tuple((v.name, v.type, v.expression) for v in document.variables),
        tuple(getattr(o, "expression", None) for o in document.objects),
        tuple(o.id for o in document.objects),
    )
    found = _EXPRESSION_FINDINGS.get(key)
    if found is None:
        if len(_EXPRESSION_FINDINGS) >= 1024:
            _EXPRESSION_FINDINGS.clear()
        found = _EXPRESSION_FINDINGS[key] = tuple(_check_expressions(document))
    return found


_EXPRESSION_FINDINGS: dict[tuple[Any, ...], tuple[LabelFinding, ...]] = {}


def _check_expressions(document: LabelDocument) -> list[LabelFinding]:
    from etikett import cel
    from etikett.dsl.label import BarcodeObject, TextObject

    declared = declared_types(document)
    sources: list[tuple[str, str | None, str]] = [
        (pointer("variables", i, "expression"), None, v.expression)
        for i, v in enumerate(document.variables)
        if v.expression is not None
    ]
    sources += [
        (pointer("objects", i, "expression"), o.id, o.expression)
        for i, o in enumerate(document.objects)
        if isinstance(o, TextObject | BarcodeObject) and o.expression is not None
    ]
    findings: list[LabelFinding] = []
    used: set[str] = set()
    for path, object_id, source in sources:
        try:
            cel.check(source, declared)
            used |= cel.Expression(source).names
        except EtikettError as error:
            message = str(error.params.get("message") or error.detail)
            code = "label.variable_undeclared" if "undeclared" in message else "label.cel_invalid"
            findings.append(
                _finding(
                    code,
                    path,
                    object_id,
                    error.detail,
                    line=error.params.get("line"),
                    column=error.params.get("column"),
                )
            )
    for index, variable in enumerate(document.variables):
        if variable.name not in used:
            findings.append(
                _finding(
                    "label.variable_unused",
                    pointer("variables", index),
                    None,
                    f"The variable {variable.name!r} is declared but no expression uses it.",
                    variable=variable.name,
                )
            )
    return findings


def _values(
    document: LabelDocument,
    counters: Mapping[str, Any] | None,
    now: datetime | None,
    findings: list[LabelFinding],
) -> dict[str, Any] | None:
    """The preview's values; variables without a usable value are left empty (and reported on
    the objects that need them)."""
    from etikett.render.errors import VariablesInvalid

    try:
        return resolve_variables(document, {}, use_samples=True, now=now, counters=counters)
    except VariablesInvalid as error:
        broken = {item["variable"] for item in error.params.get("errors", [])}
    relaxed = document.model_copy(
        update={
            "variables": [
                v.model_copy(
                    update={"required": False, "expression": None, "default": None, "sample": None}
                )
                if v.name in broken
                else v.model_copy(update={"required": False})
                for v in document.variables
            ]
        }
    )
    try:
        return resolve_variables(relaxed, {}, use_samples=True, now=now, counters=counters)
    except VariablesInvalid:
        findings.append(
            _finding(
                "label.sample_failed",
                "/variables",
                None,
                "The variables' samples and defaults do not resolve; nothing was laid out.",
            )
        )
        return None


# --- objects ------------------------------------------------------------------------------------


def _font_loads(obj: TextObject) -> bool:
    return _loads(obj.font, obj.weight)


@cache
def _loads(family: str, weight: int) -> bool:
    from etikett.render.fonts import font

    try:
        font(family, weight, 10)
    except Exception:  # fontpkg raises its own errors for a missing family or file
        return False
    return True


def _ink_box(ink: Image.Image) -> Box | None:
    """Where the ink has dots; noted on the ink itself (cached inks are never drawn on)."""
    if _BOX_KEY not in ink.info:
        ink.info[_BOX_KEY] = ink.getbbox()
    found: Box | None = ink.info[_BOX_KEY]
    return found


_BOX_KEY = "etikett.ink_box"


def _unrenderable(index: int, obj: LabelObject, error: EtikettError) -> LabelFinding:
    literal = getattr(obj, "expression", None) is None
    if obj.type == "barcode" and literal:
        return _finding(
            "label.barcode_invalid",
            pointer("objects", index, "content"),
            obj.id,
            f"The barcode {obj.id!r} cannot encode its content: "
            f"{error.params.get('message') or error.detail}",
            extra={k: v for k, v in error.params.items() if k != "object_id"},
        )
    return _finding(
        "label.sample_failed",
        pointer("objects", index),
        obj.id,
        f"{obj.id!r} could not be laid out with the samples, so it was not checked: {error.detail}",
    )


def _text(index: int, obj: TextObject, text: str, dpi: int) -> list[LabelFinding]:
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
        _finding(
            "label.text_overflow",
            pointer("objects", index),
            obj.id,
            f"The text of {obj.id!r} does not fit its box: {'; '.join(parts)}.",
            missed,
        )
    ]


def _module(index: int, obj: BarcodeObject, dpi: int) -> list[LabelFinding]:
    dot_mm = round(MM_PER_INCH / dpi, 4)
    if obj.module_width_mm is not None and mm_to_dots(obj.module_width_mm, dpi) < 1:
        return [
            _finding(
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
        finding = _finding(
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


def _outside(item: _Placed, width: int, height: int, dpi: int) -> list[LabelFinding]:
    if item.tight is None:
        return []
    left, top, right, bottom = item.tight
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
    message = (
        f"The {what} {obj.id!r} lies entirely outside the label."
        if whole
        else f"The {what} {obj.id!r} is cut off: {edges} ({_mm(max(beyond.values()), dpi)} mm)."
    )
    return [
        _finding(
            code,
            pointer("objects", item.index),
            obj.id,
            message,
            edges=beyond,
            entirely=whole,
        )
    ]


def _quiet_zone(
    item: _Placed, obj: BarcodeObject, placed: list[_Placed], width: int, height: int, dpi: int
) -> list[LabelFinding]:
    spec = SPECS[obj.symbology]
    module = module_dots(obj, dpi)
    zones = _zones(obj, spec.kind, module, dpi, item)
    if not zones:
        return []
    problems: dict[str, Any] = {}
    label = (0, 0, width, height)
    for zone in zones:
        if not _inside(zone, label):
            problems["off_label"] = True
        z0, z1, z2, z3 = zone
        for other in placed:
            tight = other.tight  # most objects are nowhere near: decided without a crop
            if (
                other is item
                or tight is None
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
    finding = _finding(
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


def _zones(obj: BarcodeObject, kind: str, module: int, dpi: int, item: _Placed) -> list[Box]:
    """The quiet zones in label dots: beside the bars of linear codes, around 2D symbols."""
    ink = item.raw
    bars_height = bar_height_dots(obj, dpi) if kind == "linear" else ink.height
    bars = ink.crop((0, 0, ink.width, min(bars_height, ink.height))).getbbox()
    if bars is None:
        return []
    x0, y0, x1, y1 = bars
    if kind == "linear":
        left, right = LINEAR_QUIET.get(obj.symbology, (10, 10))
        local = [(x0 - left * module, y0, x0, y1), (x1, y0, x1 + right * module, y1)]
    else:
        q = MATRIX_QUIET.get(obj.symbology, 2) * module
        local = [
            (x0 - q, y0 - q, x1 + q, y0),
            (x0 - q, y1, x1 + q, y1 + q),
            (x0 - q, y0, x0, y1),
            (x1, y0, x1 + q, y1),
        ]
    turned = [_turn(zone, ink.width, ink.height, obj.rotation) for zone in local]
    return [
        (z[0] + item.box[0], z[1] + item.box[1], z[2] + item.box[0], z[3] + item.box[1])
        for z in turned
    ]


def _turn(box: Box, w: int, h: int, rotation: int) -> Box:
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


def _ink_in(item: _Placed, region: Box) -> Box | None:
    box, tight = item.box, item.tight
    if tight is None:
        return None
    left, top = max(tight[0], region[0]), max(tight[1], region[1])
    right, bottom = min(tight[2], region[2]), min(tight[3], region[3])
    if left >= right or top >= bottom:
        return None
    return item.ink.crop((left - box[0], top - box[1], right - box[0], bottom - box[1])).getbbox()


# --- shape ----------------------------------------------------------------------------------------


def _finding(
    code: str,
    path: str,
    object_id: str | None,
    message: str,
    extra: Mapping[str, Any] | None = None,
    **params: Any,
) -> LabelFinding:
    severity, _ = LABEL_FINDING_CODES[code]
    params = {**(extra or {}), **params}
    return LabelFinding(
        code=code,
        severity=severity,
        path=path,
        object_id=object_id,
        message=message,
        params={k: v for k, v in params.items() if v is not None},
    )


def _mm(dots: int, dpi: int) -> float:
    return round(dots * MM_PER_INCH / dpi, 2)


def _ordered(findings: list[LabelFinding]) -> list[LabelFinding]:
    """Errors first, then by where they point (stable within a path)."""
    return sorted(findings, key=lambda f: (f.severity != "error", _path_key(f.path)))


def _path_key(path: str) -> tuple[Any, ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("/")[1:])
