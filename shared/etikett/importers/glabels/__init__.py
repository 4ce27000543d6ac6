"""gLabels 3 and 4 documents (`.glabels`, XML, possibly gzip-compressed) → a label document.

The template's label size becomes the label's; text, barcode, box, line, ellipse and embedded
image objects keep their place and size (lengths in pt, in, mm, cm or pc); merge fields
(`${name}` in gLabels 4, `<Field name=…/>` in gLabels 3, a barcode's `field`) become variables.
Objects turned by 90°, 180° or 270° keep their turn; other transforms, colours, shadows, italic
and non-rectangular label shapes are noted in the report. The XML is read without a DTD, entity or
external reference (defusedxml), its depth and element count bounded while it is read.

The package: xmlfile.py reads the XML, converter.py walks the document, objects.py turns each
object into a label object, reader.py holds what they share.
"""

from __future__ import annotations

from etikett.importers.conversion import Conversion, refuse
from etikett.importers.glabels.converter import Converter
from etikett.importers.glabels.xmlfile import local_name, parse
from etikett_engine.errors import ProblemCode

__all__ = ["convert_glabels"]


def convert_glabels(name: str, data: bytes, *, dpi: int, max_expanded: int) -> Conversion:
    root = parse(data)
    local = local_name(root.tag)
    if local != "Glabels-document":
        raise refuse(
            ProblemCode.IMPORT_UNREADABLE,
            f"The XML is a {local!r} document, not a gLabels document.",
            reason="not_glabels",
        )
    return Converter(name, dpi).run(root)
