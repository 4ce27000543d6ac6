"""gLabels 3 and 4 documents (`.glabels`, XML, possibly gzip-compressed) → a label document.

The template's label size becomes the label's; text, barcode, box, line, ellipse and embedded
image objects keep their place and size (lengths in pt, in, mm, cm or pc); merge fields
(`${name}` in gLabels 4, `<Field name=…/>` in gLabels 3, a barcode's `field`) become variables.
Objects turned by 90°, 180° or 270° keep their turn; other transforms, colours, shadows, italic
and non-rectangular label shapes are noted in the report. The XML is read without a DTD, entity or
external reference (defusedxml), its depth and element count bounded while it is read.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any
from xml.etree.ElementTree import Element

from etikett.dsl.label import MAX_MM, MIN_LABEL_MM
from etikett.errors import ProblemCode
from etikett.importers import (
    MAX_OBJECTS,
    MAX_XML_DEPTH,
    MAX_XML_ELEMENTS,
    Conversion,
    Imported,
    Note,
    refuse,
)
from etikett.importers.gs1 import element_string

UNITS_MM = {"pt": 25.4 / 72, "in": 25.4, "mm": 1.0, "cm": 10.0, "pc": 25.4 / 6, "": 25.4 / 72}
FIELD = re.compile(r"\$\{([^}]+)\}")
STYLES = {  # gLabels barcode styles (3: mixed case, 4: lower case) → symbology
    "code128": "code128",
    "code128b": "code128",
    "code128c": "code128",
    "code39": "code39",
    "code39ext": "code39",
    "ean-13": "ean13",
    "ean13": "ean13",
    "ean": "ean13",
    "upc-a": "upca",
    "upca": "upca",
    "i25": "itf14",
    "itf14": "itf14",
    "itf-14": "itf14",
    "datamatrix": "datamatrix",
    "iec16022": "datamatrix",
    "dm": "datamatrix",
    "qrcode": "qr",
    "qr": "qr",
    "iec18004": "qr",
    "gs1-128": "gs1-128",
    "ean128": "gs1-128",
    "ucc128": "gs1-128",
    "pdf": "pdf417",
    "pdf417": "pdf417",
}
SAMPLE_DATA = {"ean13": "400638133393", "upca": "01234567890", "itf14": "1234567890123"}
FONTS = {"mono": "Roboto Mono", "condensed": "Roboto Condensed", "noto": "Noto Sans"}


def convert_glabels(name: str, data: bytes, *, dpi: int, max_expanded: int) -> Conversion:
    root = parse(data)
    local = _local(root.tag)
    if local != "Glabels-document":
        raise refuse(
            ProblemCode.IMPORT_UNREADABLE,
            f"The XML is a {local!r} document, not a gLabels document.",
            reason="not_glabels",
        )
    return _Converter(name, dpi).run(root)


def parse(data: bytes) -> Element:
    """The XML tree, read with no DTD, entity or external reference, depth and size bounded."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

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


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _Converter:
    def __init__(self, name: str, dpi: int) -> None:
        self.name = name
        self.dpi = dpi
        self.result = Conversion(format="glabels")
        self.variables: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self.files: dict[str, bytes] = {}

    def note(self, element: str | None, message: str, severity: str = "warning") -> None:
        if any(n.message == message and n.element == element for n in self.result.report):
            return
        self.result.report.append(Note(severity, message, element=element, document=0))  # type: ignore[arg-type]

    def run(self, root: Element) -> Conversion:
        children = {_local(child.tag): child for child in root}
        for data in root.iter():
            if _local(data.tag) == "File":
                self.file(data)
        template = children.get("Template")
        if template is None:
            raise refuse(
                ProblemCode.IMPORT_UNREADABLE,
                "The gLabels document has no <Template>, so its label size is unknown.",
                reason="no_template",
            )
        width, height = self.template(template)
        objects_node = children.get("Objects")
        objects: list[dict[str, Any]] = []
        if objects_node is not None:
            if _bool(objects_node.get("rotate")):
                width, height = height, width
                self.note(
                    "Objects",
                    "The document is rotated on its sheet: width and height are swapped.",
                    "info",
                )
            for index, child in enumerate(objects_node):
                if len(objects) >= MAX_OBJECTS:
                    raise refuse(
                        ProblemCode.IMPORT_TOO_COMPLEX,
                        f"More than {MAX_OBJECTS} objects in one document.",
                        limit=MAX_OBJECTS,
                    )
                where = f"Objects/{_local(child.tag)}[{index + 1}]"
                obj = self.object(child, where)
                if obj is not None:
                    objects.append(obj)
        if "Merge" in children:
            merge = children["Merge"]
            self.note(
                "Merge",
                f"The merge source ({merge.get('type')}: {merge.get('src') or '-'}) is not "
                "imported; its fields became variables.",
                "info",
            )
        if not objects:
            raise refuse(ProblemCode.IMPORT_EMPTY, "The gLabels document has no objects to import.")
        base = self.name.rsplit(".", 1)[0] if "." in self.name else self.name
        label_name = base or template.get("description") or "Imported label"
        document = {
            "size": {"width_mm": width, "height_mm": height},
            "dpi": self.dpi,
            "variables": list(self.variables.values()),
            "objects": objects,
        }
        self.result.labels.append(Imported(name=label_name[:200], document=document))
        return self.result

    # --- template -----------------------------------------------------------------------------

    def template(self, template: Element) -> tuple[float, float]:
        for shape in template:
            kind = _local(shape.tag)
            if kind == "Label-rectangle":
                return self.size(
                    shape.get("width"), shape.get("height"), "Template/Label-rectangle"
                )
            if kind == "Label-ellipse":
                self.note(
                    "Template/Label-ellipse", "The elliptic label becomes its bounding rectangle."
                )
                return self.size(shape.get("width"), shape.get("height"), "Template/Label-ellipse")
            if kind in ("Label-round", "Label-cd"):
                radius = self.length(shape.get("radius") or shape.get("r1"), f"Template/{kind}")
                self.note(f"Template/{kind}", "The round label becomes its bounding square.")
                return self.size(str(2 * radius) + "mm", str(2 * radius) + "mm", f"Template/{kind}")
            if kind == "Label-continuous":
                return self.size(
                    shape.get("width"),
                    shape.get("height") or shape.get("default_height"),
                    f"Template/{kind}",
                )
        raise refuse(
            ProblemCode.IMPORT_UNREADABLE, "The template has no label shape.", reason="no_shape"
        )

    def size(self, width: str | None, height: str | None, where: str) -> tuple[float, float]:
        w, h = self.length(width, where), self.length(height, where)
        if not (MIN_LABEL_MM <= w <= MAX_MM and MIN_LABEL_MM <= h <= MAX_MM):
            raise refuse(
                ProblemCode.IMPORT_SIZE_INVALID,
                f"The label size {width} × {height} ({where}) is not {MIN_LABEL_MM:g} to "
                f"{MAX_MM:g} mm.",
                element=where,
            )
        return round(w, 4), round(h, 4)

    def length(self, value: str | None, where: str, default: float = 0.0) -> float:
        """A gLabels length (`12pt`, `1in`, `25.4mm`, `2cm`, `1pc`, plain points) in mm."""
        if value is None or not value.strip():
            return default
        match = re.fullmatch(r"\s*(-?[0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([a-z]*)\s*", value)
        if match is None or match.group(2) not in UNITS_MM:
            self.note(where, f"The length {value!r} is not understood; 0 is used.")
            return default
        mm = float(match.group(1)) * UNITS_MM[match.group(2)]
        return max(-MAX_MM, min(MAX_MM, mm))

    # --- objects ------------------------------------------------------------------------------

    def object(self, node: Element, where: str) -> dict[str, Any] | None:
        kind = _local(node.tag)
        handler = {
            "Object-text": self.text,
            "Object-barcode": self.barcode,
            "Object-box": self.box,
            "Object-ellipse": self.ellipse,
            "Object-line": self.line,
            "Object-image": self.image,
        }.get(kind)
        if handler is None:
            self.note(where, f"{kind} objects are not supported; dropped.")
            return None
        if _bool(node.get("shadow")):
            self.note(where, "The shadow is not kept.")
        obj = handler(node, where)
        if obj is None:
            return None
        x = self.length(node.get("x"), where)
        y = self.length(node.get("y"), where)
        if obj["type"] == "line":  # gLabels strokes the path's middle: the line's box is offset
            return self.place_line(obj, node, x, y, where)
        w, h = self.extent(obj)
        rotation, (dx, dy) = self.rotation(node, w, h, where)
        obj["x_mm"] = round(x + dx, 4)
        obj["y_mm"] = round(y + dy, 4)
        if rotation:
            obj["rotation"] = rotation
        return obj

    def place_line(
        self, obj: dict[str, Any], node: Element, x: float, y: float, where: str
    ) -> dict[str, Any]:
        vertical = obj.pop("_vertical")
        dx = self.length(node.get("dx"), where)
        dy = self.length(node.get("dy"), where)
        half = obj["thickness_mm"] / 2
        if any(node.get(f"a{i}") not in (None, d) for i, d in enumerate(("1", "0", "0", "1"))):
            self.note(where, "The line's transform is not kept.")
        if vertical:
            obj["rotation"] = 90
            x, y = x - half, y + min(0.0, dy)
        else:
            x, y = x + min(0.0, dx), y - half
        obj["x_mm"] = round(x, 4)
        obj["y_mm"] = round(y, 4)
        return obj

    def extent(self, obj: dict[str, Any]) -> tuple[float, float]:
        if obj["type"] == "line":
            return obj["length_mm"], obj["thickness_mm"]
        return obj.get("width_mm") or 0.0, obj.get("height_mm") or 0.0

    def rotation(
        self, node: Element, w: float, h: float, where: str
    ) -> tuple[int, tuple[float, float]]:
        """The turn of the object's matrix (a0..a3) and where its rotated box's corner lies
        relative to the object's origin."""
        try:
            a = [float(node.get(f"a{i}", default)) for i, default in enumerate((1, 0, 0, 1))]
        except ValueError:
            a = [1.0, 0.0, 0.0, 1.0]
        turns = {
            (1, 0, 0, 1): (0, (0.0, 0.0)),
            (0, 1, -1, 0): (90, (-h, 0.0)),
            (-1, 0, 0, -1): (180, (-w, -h)),
            (0, -1, 1, 0): (270, (0.0, -w)),
        }
        key = tuple(round(v) for v in a)
        if key in turns and all(abs(v - round(v)) < 1e-6 for v in a):
            return turns[key]
        self.note(
            where, "The object's transform (not a quarter turn) is not kept; it is placed upright."
        )
        return 0, (0.0, 0.0)

    def next_id(self, kind: str) -> str:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return f"{kind}_{self.counts[kind]}"

    def variable(self, name: str) -> str:
        identifier = re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_").lower() or "field"
        if identifier[0].isdigit():
            identifier = "f_" + identifier
        if identifier in ("now", "counters", "value"):
            identifier += "_field"
        identifier = identifier[:64]
        self.variables.setdefault(
            identifier,
            {
                "name": identifier,
                "type": "string",
                "description": f"gLabels merge field {name}",
                "sample": name,
            },
        )
        return identifier

    def color(self, node: Element, attribute: str, where: str) -> bool:
        """Whether the colour prints (black-ish and opaque); other colours are noted."""
        value = node.get(attribute)
        if value is None:
            return True
        try:
            rgba = int(value, 0)
        except ValueError:
            return True
        alpha = rgba & 0xFF
        if alpha == 0:
            return False
        r, g, b = (rgba >> 24) & 0xFF, (rgba >> 16) & 0xFF, (rgba >> 8) & 0xFF
        if (r, g, b) != (0, 0, 0):
            self.note(where, f"The colour {value} prints black.")
        return True

    def text(self, node: Element, where: str) -> dict[str, Any] | None:
        paragraphs: list[str] = []
        font_node = node
        for child in node:
            tag = _local(child.tag)
            if tag == "p":  # gLabels 4
                paragraphs.append("".join(child.itertext()))
            elif tag == "Span":  # gLabels 3
                font_node = child
                paragraphs.append(self.span(child))
        text = "\n".join(paragraphs)
        if not text.strip():
            self.note(where, "An empty text was dropped.", "info")
            return None
        family_name = (font_node.get("font_family") or "Sans").strip()
        family = next((f for key, f in FONTS.items() if key in family_name.lower()), "Roboto")
        if family == "Roboto" and family_name.lower() not in (
            "sans",
            "roboto",
            "sans serif",
            "dejavu sans",
            "liberation sans",
            "arial",
            "helvetica",
        ):
            self.note(where, f"The font {family_name!r} is not available; Roboto is used.")
        try:
            size = float(font_node.get("font_size") or 10)
        except ValueError:
            size = 10.0
        weight = 700 if (font_node.get("font_weight") or "").lower() in ("bold", "700") else 500
        if _bool(font_node.get("font_italic")):
            self.note(where, "Italic is not kept.")
        if _bool(font_node.get("font_underline")):
            self.note(where, "Underline is not kept.")
        self.color(font_node, "color", where)
        obj: dict[str, Any] = {"type": "text", "id": self.next_id("text")}
        fields = FIELD.findall(text)
        if fields:
            obj["expression"] = self.cel(text)
        else:
            obj["content"] = text
        obj.update(
            {"font": family, "size_pt": round(max(1.0, min(400.0, size)), 3), "weight": weight}
        )
        w = self.length(node.get("w"), where)
        h = self.length(node.get("h"), where)
        if w > 0:
            obj["width_mm"] = round(w, 4)
            obj["wrap"] = (node.get("wrap") or "word").lower() != "none"
        if h > 0:
            obj["height_mm"] = round(h, 4)
        if _bool(node.get("auto_shrink")):
            obj["shrink_to_fit"] = True
        align = (node.get("align") or node.get("justify") or "left").lower()
        if align in ("center", "hcenter", "right"):
            obj["align"] = "center" if align != "right" else "right"
        if (node.get("valign") or "top").lower() not in ("top", ""):
            self.note(
                where, "Vertical alignment is not kept: the text starts at the top of its box."
            )
        try:
            spacing = float(font_node.get("line_spacing") or node.get("line_spacing") or 1)
        except ValueError:
            spacing = 1.0
        obj["line_spacing"] = round(max(0.5, min(4.0, spacing * 1.15)), 3)
        return obj

    def span(self, span: Element) -> str:
        parts = [span.text or ""]
        for child in span:
            tag = _local(child.tag)
            if tag == "NL":
                parts.append("\n")
            elif tag == "Field":
                parts.append("${" + (child.get("name") or "") + "}")
            elif tag == "Span":
                parts.append(self.span(child))
            parts.append(child.tail or "")
        return "".join(parts)

    def cel(self, text: str) -> str:
        """`Dear ${name}` → `"Dear " + name` (CEL string concatenation)."""
        pieces: list[str] = []
        position = 0
        for match in FIELD.finditer(text):
            if match.start() > position:
                pieces.append(_cel_string(text[position : match.start()]))
            pieces.append(self.variable(match.group(1)))
            position = match.end()
        if position < len(text):
            pieces.append(_cel_string(text[position:]))
        return " + ".join(pieces)

    def barcode(self, node: Element, where: str) -> dict[str, Any] | None:
        style = (node.get("style") or "").strip().lower()
        backend = (node.get("backend") or "").strip().lower()
        if backend == "libiec16022":
            style = "datamatrix"
        elif backend == "libqrencode":
            style = "qrcode"
        symbology = STYLES.get(style)
        if symbology is None:
            self.note(where, f"The barcode style {node.get('style')!r} has no equivalent; dropped.")
            return None
        data = node.get("data") or ""
        field = node.get("field")
        if not data and field:
            data = "${" + field + "}"
        obj: dict[str, Any] = {
            "type": "barcode",
            "id": self.next_id("barcode"),
            "symbology": symbology,
        }
        fields = FIELD.findall(data)
        sample = data
        if fields:
            obj["expression"] = self.cel(data)
            sample = SAMPLE_DATA.get(symbology, "1234567890")
            if symbology in ("gs1-128",):
                sample = "(01)09501101530003"
        else:
            if symbology == "gs1-128" or (symbology == "datamatrix" and data.startswith("[")):
                try:
                    data = element_string(re.sub(r"\[(\d{2,4})\]", r"(\1)", data))
                except ValueError as error:
                    self.note(where, f"The GS1 data could not be read ({error}); dropped.")
                    return None
                if symbology == "datamatrix":
                    obj["symbology"] = symbology = "gs1-datamatrix"
            if not data:
                self.note(where, "A barcode without data was dropped.")
                return None
            obj["content"] = sample = data
        if not _bool(node.get("checksum"), True) and symbology in ("code39",):
            self.note(
                where, "Without a check digit as designed (Code 39 never prints one here).", "info"
            )
        self.color(node, "color", where)
        w = self.length(node.get("w"), where)
        h = self.length(node.get("h"), where)
        text_shown = _bool(node.get("text"), True)
        columns = _columns(symbology, sample)
        w_dots = w / 25.4 * self.dpi
        if columns and w_dots > 0:
            module = max(1, int(w_dots // columns))
            obj["module_width_dots"] = module
            if int(w_dots // columns) < 1:
                self.note(
                    where, "The barcode is narrower than one dot per module; it prints wider."
                )
        if symbology in ("qr", "datamatrix", "gs1-datamatrix", "pdf417"):
            pass
        else:
            text_mm = 8 / 72 * 25.4 * 1.4 if text_shown else 0.0
            obj["height_mm"] = round(max(1.0, h - text_mm), 4) if h > 0 else 15.0
            obj["human_readable"] = text_shown
        if fields and w > 0:
            self.note(
                where,
                "The barcode's module width was fitted to sample data; long merge data prints "
                "wider.",
                "info",
            )
        return obj

    def box(self, node: Element, where: str) -> dict[str, Any] | None:
        return self.shape("box", node, where)

    def ellipse(self, node: Element, where: str) -> dict[str, Any] | None:
        return self.shape("ellipse", node, where)

    def shape(self, kind: str, node: Element, where: str) -> dict[str, Any] | None:
        w = self.length(node.get("w"), where)
        h = self.length(node.get("h"), where)
        if w <= 0 or h <= 0:
            self.note(where, f"A {kind} without size was dropped.")
            return None
        line = self.length(node.get("line_width"), where, 0.0)
        outline = line > 0 and self.color(node, "line_color", where)
        fill = (
            self.color(node, "fill_color", where) if node.get("fill_color") is not None else False
        )
        if not outline and not fill:
            self.note(where, f"A {kind} with neither line nor fill was dropped.", "info")
            return None
        obj: dict[str, Any] = {
            "type": kind,
            "id": self.next_id(kind),
            "width_mm": round(w, 4),
            "height_mm": round(h, 4),
            "line_mm": round(max(line, 0.01), 4),
        }
        if fill:
            obj["fill"] = True
        return obj

    def line(self, node: Element, where: str) -> dict[str, Any] | None:
        dx = self.length(node.get("dx"), where)
        dy = self.length(node.get("dy"), where)
        thickness = max(0.01, self.length(node.get("line_width"), where, 0.35))
        self.color(node, "line_color", where)
        if (abs(dy) < 1e-6 and dx) or (abs(dx) < 1e-6 and dy):
            return {
                "type": "line",
                "id": self.next_id("line"),
                "length_mm": round(abs(dx or dy), 4),
                "thickness_mm": round(thickness, 4),
                "_vertical": abs(dx) < 1e-6,
            }
        self.note(where, "A diagonal line has no equivalent; dropped.")
        return None

    def image(self, node: Element, where: str) -> dict[str, Any] | None:
        source = node.get("src") or ""
        if node.get("field") or node.get("src_field"):
            self.note(where, "An image chosen by a merge field is not imported; dropped.")
            return None
        content = self.files.get(source)
        if content is None:
            self.note(where, f"The image {source!r} is not embedded in the document; dropped.")
            return None
        w = self.length(node.get("w"), where)
        h = self.length(node.get("h"), where)
        if w <= 0 or h <= 0:
            self.note(where, "An image without size was dropped.")
            return None
        return {
            "type": "image",
            "id": self.next_id("image"),
            "width_mm": round(w, 4),
            "height_mm": round(h, 4),
            "content_base64": base64.b64encode(content).decode("ascii"),
        }

    def file(self, node: Element) -> None:
        name = node.get("name") or ""
        mimetype = node.get("mimetype") or "image/png"
        if (
            mimetype not in ("image/png", "image/jpeg")
            or (node.get("encoding") or "base64") != "base64"
        ):
            self.note(
                "Data/File",
                f"The embedded file {name!r} ({mimetype}) is not a PNG or JPEG; not imported.",
            )
            return
        try:
            self.files[name] = base64.b64decode("".join((node.text or "").split()), validate=True)
        except (binascii.Error, ValueError):
            self.note("Data/File", f"The embedded file {name!r} is not valid base64; not imported.")


def _bool(value: str | None, default: bool = False) -> bool:
    if value is None:
        return default
    return value.strip().lower() in ("true", "1", "yes")


def _cel_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _columns(symbology: str, data: str) -> int | None:
    """How many modules wide the symbol for `data` is (zint), to fit the designed width."""
    try:
        from zint import InputMode, Symbol, Symbology

        from etikett.render.barcode import SPECS

        spec = SPECS[symbology]
        symbol = Symbol()
        symbol.symbology = getattr(Symbology, spec.zint_name)
        if spec.gs1:
            symbol.input_mode = InputMode.GS1 | InputMode.GS1PARENS
        elif spec.text_mode:
            symbol.input_mode = InputMode.UNICODE
        symbol.encode(data)
        return int(symbol.width)
    except Exception:  # zint refuses data: the module stays the renderer's default
        return None
