"""ZPL II label formats (`^XA … ^XZ`) → label documents, one per format.

Positions and sizes are printer dots at the density the caller names (ZPL does not say it); they
become millimetres that the renderer turns back into exactly those dots. Covered: `^PW ^LL ^LH
^LS`, `^FO ^FT` (text baselines from the font's metrics), `^A0 ^A@ ^Ax ^CF`, `^FD ^FV ^FN` (a field
number becomes a variable whose sample is the field's data), `^FH` hex escapes, `^CI` encodings,
`^FR ^FW`, `^FB` blocks, `^GB ^GE ^GC ^GD`, `^GFA` (hex, ACS compression, `:Z64:`, `:B64:`) and the
barcodes `^BC ^BE ^BU ^B3 ^B2 ^BQ ^BX ^B7` with `^BY`, GS1 data included; a field with any other
barcode (`^BA ^B1 ^BK …`) is dropped with a warning. Whatever cannot be carried over exactly is a
note in the report with its line; printer settings (`^PQ ~SD …`) are noted as not part of a label.

The package: syntax.py reads commands, reader.py holds a conversion's state, fields.py and
graphics.py turn fields and graphics into objects, converter.py drives them format by format,
data.py decodes barcode and graphic data.
"""

from __future__ import annotations

from etikett.importers.conversion import MAX_LABELS, Conversion
from etikett.importers.zpl.converter import Converter

__all__ = ["convert_zpl"]


def convert_zpl(
    name: str, data: bytes, *, dpi: int, max_expanded: int, max_labels: int = MAX_LABELS
) -> Conversion:
    return Converter(name, dpi, max_expanded, max_labels).run(data)
