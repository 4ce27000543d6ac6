"""Label rendering: document + print data → the exact 1-bit raster, PNG previews and printer jobs.

Importing this package loads Pillow (zint and fonts load on first use); modules outside
`etikett.render` import it lazily, inside the functions that render.
"""

from etikett.render.epl import encode_epl
from etikett.render.errors import BarcodeInvalid, ImageInvalid, LabelTooLarge, VariablesInvalid
from etikett.render.raster import clear_caches, dots, render, to_png
from etikett.render.tspl import encode_tspl
from etikett.render.values import resolve_variables
from etikett.render.zpl import encode_zpl

__all__ = [
    "BarcodeInvalid",
    "ImageInvalid",
    "LabelTooLarge",
    "VariablesInvalid",
    "clear_caches",
    "dots",
    "encode_epl",
    "encode_tspl",
    "encode_zpl",
    "render",
    "resolve_variables",
    "to_png",
]
