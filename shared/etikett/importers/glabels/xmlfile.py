"""A gLabels file as XML: decompressed if gzipped, read with no DTD, entity or external
reference (defusedxml), its depth and element count bounded while it is read.
"""

from __future__ import annotations

import io
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from etikett.importers.conversion import MAX_XML_DEPTH, MAX_XML_ELEMENTS, refuse
from etikett_engine.errors import ProblemCode


def parse(data: bytes) -> Element:
    """The XML tree, read with no DTD, entity or external reference, depth and size bounded."""

    depth = elements = 0
    root: Element | None = None
    try:
        for event, element in iterparse(
            io.BytesIO(data),
            events=("start", "end"),
            forbid_dtd=True,
            forbid_entities=True,
            forbid_external=True,
        ):
            if event == "start":
                depth += 1
                elements += 1
                root = element if root is None else root
                if depth > MAX_XML_DEPTH or elements > MAX_XML_ELEMENTS:
                    raise refuse(
                        ProblemCode.IMPORT_TOO_COMPLEX,
                        f"The XML nests deeper than {MAX_XML_DEPTH} levels or holds more than "
                        f"{MAX_XML_ELEMENTS} elements.",
                        max_depth=MAX_XML_DEPTH,
                        max_elements=MAX_XML_ELEMENTS,
                    )
            else:
                depth -= 1
    except DefusedXmlException as error:
        raise refuse(
            ProblemCode.IMPORT_UNSAFE_XML,
            "The XML declares a DTD, an entity or an external reference; such files are not read.",
            reason=type(error).__name__,
        ) from None
    except ParseError as error:
        raise refuse(
            ProblemCode.IMPORT_UNREADABLE,
            f"The XML is not well-formed: {error}.",
            reason="xml",
            line=error.position[0] if error.position else None,
        ) from None
    assert root is not None
    return root


def local_name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
