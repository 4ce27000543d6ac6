"""gLabels objects as label objects: text (with its spans and merge fields as CEL), barcodes,
boxes, ellipses, lines and embedded images.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from xml.etree.ElementTree import Element

from PIL import Image, ImageDraw

from etikett.importers.checks import code39_check
from etikett.importers.conversion import png
from etikett.importers.glabels.reader import FIELD, Reader, cel_string, flag
from etikett.importers.glabels.xmlfile import local_name
from etikett.importers.gs1 import element_string

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


class ObjectReader(Reader):
    """Turns gLabels objects into label objects."""

    def text(self, node: Element, where: str) -> dict[str, Any] | None:
        paragraphs: list[str] = []
        font_node = node
        for child in node:
            tag = local_name(child.tag)
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
        # gLabels 3 prints a size as stated (glabels-3-batch: a 72 pt H is 148 dots high at
        # 203 dpi, as DejaVu Sans' cap height says); glabels-qt's reader takes 3/4 of it, but the
        # pictures gLabels 3 itself prints are the reference a gLabels 3 user knows.
        weight = 700 if (font_node.get("font_weight") or "").lower() in ("bold", "700") else 500
        if flag(font_node.get("font_italic")):
            self.note(where, "Italic is not kept.")
        if flag(font_node.get("font_underline")):
            self.note(where, "Underline is not kept.")
        ink = self.ink(font_node, "color", where)
        obj: dict[str, Any] = {"type": "text", "id": self.next_id("text")}
        if ink == "white":
            obj["ink"] = "white"
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
        if flag(node.get("auto_shrink")):
            obj["shrink_to_fit"] = True
        align = (node.get("align") or node.get("justify") or "left").lower()
        if align in ("center", "hcenter", "right"):
            obj["align"] = "center" if align != "right" else "right"
        valign = (node.get("valign") or "top").lower()
        if valign in ("center", "vcenter", "middle", "bottom") and h > 0:
            obj["valign"] = "bottom" if valign == "bottom" else "middle"
        try:
            spacing = float(font_node.get("line_spacing") or node.get("line_spacing") or 1)
        except ValueError:
            spacing = 1.0
        obj["line_spacing"] = round(max(0.5, min(4.0, spacing * 1.15)), 3)
        return obj

    def span(self, span: Element) -> str:
        parts = [span.text or ""]
        for child in span:
            tag = local_name(child.tag)
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
                pieces.append(cel_string(text[position : match.start()]))
            pieces.append(self.variable(match.group(1)))
            position = match.end()
        if position < len(text):
            pieces.append(cel_string(text[position:]))
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
        if flag(node.get("checksum"), True) and symbology == "code39":
            # gLabels appends Code 39's modulo-43 character when the checksum is on.
            check = code39_check(obj["content"].upper()) if "content" in obj else None
            if check is None:
                self.note(where, "The Code 39 check character is not printed.")
            else:
                obj["content"] = obj["content"].upper() + check
        self.color(node, "color", where)
        w = self.length(node.get("w"), where)
        h = self.length(node.get("h"), where)
        text_shown = flag(node.get("text"), True)
        columns = symbol_columns(symbology, sample)
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
        outline = self.ink(node, "line_color", where) if line > 0 else None
        fill = self.ink(node, "fill_color", where) if node.get("fill_color") is not None else None
        if outline is None and fill is None:
            self.note(where, f"A {kind} with neither line nor fill was dropped.", "info")
            return None
        obj: dict[str, Any] = {
            "type": kind,
            "id": self.next_id(kind),
            "width_mm": round(w, 4),
            "height_mm": round(h, 4),
            "line_mm": round(max(line, 0.01), 4),
        }
        if fill is not None:
            obj["fill"] = True
            if fill == "white":
                obj["ink"] = "white"
                if outline == "black":  # a white box with a black frame: the frame on top
                    frame = {**obj, "id": self.next_id(kind), "fill": False}
                    frame.pop("ink")
                    obj["_frame"] = frame
        elif outline == "white":
            obj["ink"] = "white"
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
        return self.diagonal(dx, dy, thickness)

    def diagonal(self, dx: float, dy: float, thickness: float) -> dict[str, Any]:
        """A slanted line as an image of exactly its dots (as ZPL's ^GD), placed by its box."""

        scale = self.dpi / 25.4
        pad = thickness / 2
        width = max(1, round((abs(dx) + thickness) * scale))
        height = max(1, round((abs(dy) + thickness) * scale))
        image = Image.new("L", (width, height), 255)
        x0, y0 = pad * scale, pad * scale
        x1, y1 = x0 + abs(dx) * scale, y0 + abs(dy) * scale
        if (dx < 0) != (dy < 0):
            y0, y1 = y1, y0
        ImageDraw.Draw(image).line(
            [(x0, y0), (x1, y1)], fill=0, width=max(1, round(thickness * scale))
        )
        return {
            "type": "image",
            "id": self.next_id("line"),
            "width_mm": round(width / scale, 4),
            "height_mm": round(height / scale, 4),
            "content_base64": png(image.convert("1")),
            "dither": "threshold",
            "_diagonal": (min(0.0, dx) - pad, min(0.0, dy) - pad),
        }

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


def symbol_columns(symbology: str, data: str) -> int | None:
    """How many modules wide the symbol for `data` is (zint), to fit the designed width."""
    try:
        # zint's binding loads only for an imported barcode; the names clash with this module's own.
        from zint import InputMode, Symbol, Symbology

        from etikett_engine.render.barcode import SPECS

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
