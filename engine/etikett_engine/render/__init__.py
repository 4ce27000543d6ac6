"""Label rendering: document + print data → the exact 1-bit raster, PNG previews and printer jobs.

Importing this package loads Pillow (zint and fonts load on first use); modules outside
`etikett_engine.render` import it lazily, inside the functions that render. The service and the
Runner (which renders on site) render with this package alone: the same dots and bytes.
"""

from etikett_engine.render.epl import encode_epl
from etikett_engine.render.errors import (
    BarcodeInvalid,
    ImageInvalid,
    LabelTooLarge,
    VariablesInvalid,
)
from etikett_engine.render.jobs import LANGUAGES, encode_job
from etikett_engine.render.raster import clear_caches, dots, render, to_png
from etikett_engine.render.tspl import encode_tspl
from etikett_engine.render.values import resolve_variables
from etikett_engine.render.zpl import encode_zpl

__all__ = [
    "LANGUAGES",
    "BarcodeInvalid",
    "ImageInvalid",
    "LabelTooLarge",
    "VariablesInvalid",
    "clear_caches",
    "dots",
    "encode_epl",
    "encode_job",
    "encode_tspl",
    "encode_zpl",
    "render",
    "resolve_variables",
    "to_png",
]
