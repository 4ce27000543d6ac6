"""Labels rendered on site: a label version's document and one record → the printer's job and
the preview PNG of exactly the raster printed, by the engine's renderer (`etikett_engine.render`),
the code, fonts and encoders the service renders with (tests/integration/runners/
test_render_identity.py proves the bytes equal over the Vorlagen matrix)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class RenderedLabel:
    job: bytes  # the printer's bytes, `copies` labels
    png: bytes  # the raster printed, as the service's previews show it (b"" if not asked)
    width_dots: int
    height_dots: int


def render_label(
    document: Mapping[str, Any],
    record: Mapping[str, Any],
    serials: Mapping[str, Any],
    *,
    language: str,
    copies: int,
    now: datetime,
    preview: bool = True,
) -> RenderedLabel:
    """As the service renders a print job's record: the record's variables resolved without
    samples, `serials` (counter name → value taken) as the counters, `now` as the expressions'
    time; `preview=False` leaves the PNG out (empty), for a print that needs only the job. Render
    errors raise as the engine's problems (a label that cannot print)."""
    # Pillow, zint and the fonts load with the first label, not with the Runner.
    from etikett_engine.dsl.label import LabelDocument
    from etikett_engine.render import encode_job, render, resolve_variables, to_png

    label = LabelDocument.model_validate(document)
    values = resolve_variables(label, dict(record), use_samples=False, now=now, counters=serials)
    image = render(label, values, now=now, counters=serials)
    return RenderedLabel(
        job=encode_job(image, language, copies=copies, dpi=label.dpi),
        png=to_png(image) if preview else b"",
        width_dots=image.width,
        height_dots=image.height,
    )
