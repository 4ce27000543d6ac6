"""Previews: a label version rendered with variables to the 1-bit raster its printer will print."""

from __future__ import annotations

from typing import Any, NamedTuple

from etikett.domain import counter_values, label_versions


class Preview(NamedTuple):
    png: bytes
    width_dots: int
    height_dots: int
    dpi: int
    version: int
    findings: int  # preflight findings of this very layout


def preview(
    label_id: str,
    version: int | None,
    variables: dict[str, Any],
    *,
    samples: bool = True,
    counters: dict[str, Any] | None = None,
) -> Preview:
    """Missing entered variables take (with `samples`) their sample, then their default: a
    designer sees a filled label; print requests get no samples. Counters show their next
    values unless `counters` names others (nothing is taken). The preview's own layout is
    preflighted on the way; an object that cannot be drawn (a barcode its data cannot encode) is
    left out and counted as a finding, so one bad object never hides the rest of the label
    (printing refuses it)."""
    from etikett.render import resolve_variables, to_png
    from etikett.render.preflight import render_checked

    number, document = label_versions.label_document(label_id, version)
    serials = {**counter_values.next_values(document), **(counters or {})}
    values = resolve_variables(document, variables, use_samples=samples, counters=serials)
    image, findings = render_checked(document, values, counters=serials, lenient=True)
    return Preview(
        png=to_png(image),
        width_dots=image.width,
        height_dots=image.height,
        dpi=document.dpi,
        version=number,
        findings=len(findings),
    )
