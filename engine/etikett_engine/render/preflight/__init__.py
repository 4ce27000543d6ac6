"""Preflight: what a label version would print wrong, found before anyone prints it.

The label is laid out as a preview lays it out (entered variables take their default, then their
sample; counters their next value) and every object's ink is checked where it lands: inside the
label, barcodes whole and with their quiet zones clear of other ink and on the label, modules at
least a printer dot, boxed text fitting its box, fonts that load. Expressions are compiled against
the declared variables; declared variables no expression uses are reported. Inks come from the
renderer's cache, so a preflight right after a preview (or before one) draws nothing twice.

The package: layout.py lays the label out, objects.py and expressions.py check what they are
about, findings.py makes and orders the findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from PIL import Image

from etikett_engine.dsl.preflight import LabelFinding
from etikett_engine.render.errors import ensure_renderable
from etikett_engine.render.preflight.expressions import expression_findings, preview_values
from etikett_engine.render.preflight.findings import ordered
from etikett_engine.render.preflight.layout import Budget, geometry, lay_out
from etikett_engine.render.preflight.objects import Placed
from etikett_engine.render.raster import paint
from etikett_engine.render.units import WHITE, label_dots
from etikett_engine.render.values import resolve_variables

if TYPE_CHECKING:
    from etikett_engine.dsl.label import LabelDocument

__all__ = [
    "LaidOut",
    "Placed",
    "count_errors",
    "lay_out_for_design",
    "preflight",
    "render_checked",
]


def preflight(
    document: LabelDocument,
    *,
    values: Mapping[str, Any] | None = None,
    counters: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> list[LabelFinding]:
    """Every finding of the document, errors first, then in document order. Laid out with
    `values` (resolved variables) or else with the samples and defaults, as a preview."""
    findings = list(expression_findings(document))
    if values is None:
        values = preview_values(document, counters, now, findings)
    if values is None:
        return ordered(findings)
    placed = lay_out(document, values, counters, now, findings, strict=False)
    return ordered(findings + geometry(document, placed))


def render_checked(
    document: LabelDocument,
    values: Mapping[str, Any],
    *,
    counters: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    lenient: bool = False,
) -> tuple[Image.Image, list[LabelFinding]]:
    """The raster `render` draws and the findings of exactly that layout, each object laid out
    once (a preview's preflight costs only the checks). Render errors raise as in `render`;
    `lenient`: an object that cannot be drawn is left out and becomes a finding on that object
    (a preview shows the rest of the label; printing never is lenient)."""
    findings = list(expression_findings(document))
    placed = lay_out(document, values, counters, now, findings, strict=not lenient)
    dpi = document.dpi
    size = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    ensure_renderable(*size)
    canvas = Image.new("1", size, WHITE)
    for item in placed:
        paint(canvas, item.obj, item.raw, item.box[:2])
    return canvas, ordered(findings + geometry(document, placed, size))


class LaidOut(NamedTuple):
    """A label as a designer sees it: the raster, where each object landed, the findings and
    the values it was laid out with (None when the variables did not resolve)."""

    image: Image.Image
    placed: list[Placed]
    findings: list[LabelFinding]
    values: dict[str, Any] | None


def lay_out_for_design(
    document: LabelDocument,
    provided: Mapping[str, Any] | None = None,
    *,
    counters: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> LaidOut:
    """The raster `render_checked` draws, but nothing stops it: an object that cannot be drawn
    (bad barcode data, CEL that fails) is left out and becomes a finding, and variables that do
    not resolve are left empty, so a designer always sees the rest of the label. `provided`:
    values to lay out with (missing ones take their default, then their sample); a value that
    does not fit its variable is an error (`label.variables_invalid`), as in a preview. Anyone
    may ask for this with any document, so its work is bounded across objects (`Budget`:
    `label.too_complex`) besides each object's own bounds."""

    findings = list(expression_findings(document))
    if provided:
        values: dict[str, Any] | None = resolve_variables(
            document, provided, use_samples=True, now=now, counters=counters
        )
    else:
        values = preview_values(document, counters, now, findings)
    dpi = document.dpi
    size = label_dots(document.size.width_mm, document.size.height_mm, dpi)
    ensure_renderable(*size)
    canvas = Image.new("1", size, WHITE)
    if values is None:
        return LaidOut(canvas, [], ordered(findings), None)
    placed = lay_out(document, values, counters, now, findings, strict=False, budget=Budget())
    for item in placed:
        paint(canvas, item.obj, item.raw, item.box[:2])
    return LaidOut(canvas, placed, ordered(findings + geometry(document, placed, size)), values)


def count_errors(findings: list[LabelFinding]) -> int:
    return sum(1 for finding in findings if finding.severity == "error")
