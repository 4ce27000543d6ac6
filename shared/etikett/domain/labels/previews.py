"""Previews: a label rendered with variables to the 1-bit raster its printer will print. A saved
version as a PNG (`preview`), or any document, saved or not, laid out for a designer (`layout`):
the raster, each object's box in dots from that very layout, the findings and the values."""

import base64
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import Field

from etikett import clock
from etikett.domain import documents
from etikett.domain.counters import counter_values
from etikett.domain.labels import label_versions
from etikett.store.labels import MAX_DOCUMENT_BYTES, pack
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.dsl.preflight import LabelFinding
from etikett_engine.errors import PayloadTooLarge, ProblemCode
from etikett_engine.model import Model

if TYPE_CHECKING:
    from etikett_engine.render.preflight import Placed


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
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett_engine.render import resolve_variables, to_png
    from etikett_engine.render.preflight import render_checked

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


# --- layouts for designers -------------------------------------------------------------------

DotBox = list[int]


class ObjectBox(Model):
    id: str
    index: int = Field(description="Position in `objects` (drawing order).")
    type: str
    box: DotBox = Field(
        description="[left, top, right, bottom] in label dots (right and bottom exclusive): "
        "the object's box after rotation, where the renderer placed it. For an object that "
        "could not be drawn (`drawn: false`), its declared size at its anchor.",
        examples=[[81, 41, 425, 97]],
    )
    ink: DotBox | None = Field(
        description="Where it prints any dot (same form), or null when it prints none."
    )
    drawn: bool = Field(description="False when it could not be laid out (see the findings).")
    text: str | None = Field(
        default=None, description="What a text or barcode object shows with these values."
    )
    module_dots: int | None = Field(
        default=None, description="Barcodes: the module (narrow bar) width the renderer used."
    )
    bar_height_dots: int | None = Field(
        default=None, description="Linear barcodes: the bars' height, without the text under them."
    )


class Layout(Model):
    width_dots: int
    height_dots: int
    dpi: int
    png_base64: str = Field(
        description="The 1-bit PNG print raster, the very dots the printer gets (base64)."
    )
    objects: list[ObjectBox] = Field(description="Every object, in document order.")
    findings: list[LabelFinding] = Field(
        description="Preflight findings of exactly this layout, errors first."
    )
    values: dict[str, Any] | None = Field(
        description="The variables the label was laid out with (computed ones included), or "
        "null when they do not resolve (a finding says why)."
    )


def layout(
    document: dict[str, Any], variables: dict[str, Any] | None, size_hint: int | None = None
) -> Layout:
    """Lay out `document` (saved or not) with `variables` (else the samples and defaults); the
    counters show their next value. Bounded like a saved document: its schema (every length,
    count and range), at most what a version may store, CEL by its limits, the raster by
    the renderer's. `size_hint`: the request body's length, which spares measuring small ones."""
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett_engine.render import to_png
    from etikett_engine.render.preflight import lay_out_for_design

    _ensure_storable(document, size_hint)
    parsed = documents.validate(LabelDocument, document)
    serials = counter_values.next_values(parsed)
    laid_out = lay_out_for_design(parsed, variables, counters=serials)
    image = laid_out.image
    placed = {item.index: item for item in laid_out.placed}
    return Layout(
        width_dots=image.width,
        height_dots=image.height,
        dpi=parsed.dpi,
        png_base64=base64.b64encode(to_png(image)).decode(),
        objects=[
            _object_box(index, obj, placed.get(index), parsed.dpi)
            for index, obj in enumerate(parsed.objects)
        ],
        findings=laid_out.findings,
        values=None
        if laid_out.values is None
        else {k: _json(v) for k, v in laid_out.values.items()},
    )


def _ensure_storable(document: dict[str, Any], size_hint: int | None) -> None:
    """No larger than a version may be: compressed as stored, at most `MAX_DOCUMENT_BYTES`.
    A body no longer than that cannot compress to more, so only larger ones are compressed."""
    if size_hint is not None and size_hint <= MAX_DOCUMENT_BYTES:
        return
    size = len(pack(document))
    if size > MAX_DOCUMENT_BYTES:
        raise PayloadTooLarge(
            f"The document is {size} bytes compressed; a version holds at most "
            f"{MAX_DOCUMENT_BYTES}.",
            ProblemCode.DOCUMENT_TOO_LARGE,
            size=size,
            limit=MAX_DOCUMENT_BYTES,
        )


def _object_box(index: int, obj: Any, item: "Placed | None", dpi: int) -> ObjectBox:
    if item is not None:
        return ObjectBox(
            id=obj.id,
            index=index,
            type=obj.type,
            box=list(item.box),
            ink=None if item.tight is None else list(item.tight),
            drawn=True,
            text=item.text,
            **_barcode_sizes(obj, dpi),
        )
    return ObjectBox(
        id=obj.id, index=index, type=obj.type, box=_declared_box(obj, dpi), ink=None, drawn=False
    )


def _barcode_sizes(obj: Any, dpi: int) -> dict[str, int]:
    if obj.type != "barcode":
        return {}
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett_engine.render.barcode import SPECS, bar_height_dots, module_dots

    sizes = {"module_dots": module_dots(obj, dpi)}
    if SPECS[obj.symbology].kind == "linear":
        sizes["bar_height_dots"] = bar_height_dots(obj, dpi)
    return sizes


def _declared_box(obj: Any, dpi: int) -> DotBox:
    """An object that was not drawn: the size it declares (or 5 mm) at its anchor, turned."""
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett_engine.render.units import length_dots, mm_to_dots

    width = getattr(obj, "width_mm", None) or getattr(obj, "length_mm", None) or 5.0
    height = getattr(obj, "height_mm", None) or getattr(obj, "thickness_mm", None) or 5.0
    w, h = length_dots(width, dpi), length_dots(height, dpi)
    if obj.rotation in (90, 270):
        w, h = h, w
    left, top = mm_to_dots(obj.x_mm, dpi), mm_to_dots(obj.y_mm, dpi)
    return [left, top, left + w, top + h]


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return clock.rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    return value
