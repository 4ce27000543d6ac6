"""The conversion of a gLabels document: its template as the label's size, then each object in
place (position, size, turn), and the embedded files images refer to.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any
from xml.etree.ElementTree import Element

from PIL import Image

from etikett.importers.conversion import MAX_OBJECTS, Conversion, Imported, png, refuse
from etikett.importers.glabels.objects import ObjectReader
from etikett.importers.glabels.reader import flag
from etikett.importers.glabels.xmlfile import local_name
from etikett_engine.dsl.label import MAX_MM
from etikett_engine.errors import ProblemCode

MAX_PIXDATA_BYTES = 32 * 1024 * 1024  # a decoded embedded image, whatever its XML's size


class Converter(ObjectReader):
    """One gLabels document → a label document and the report."""

    def run(self, root: Element) -> Conversion:
        children = {local_name(child.tag): child for child in root}
        version = root.get("version") or ""
        if "xmlns/3.0" in root.tag or version.startswith("3"):
            self.version = 3
        for data in root.iter():
            if local_name(data.tag) == "File":
                self.file(data)
            elif local_name(data.tag) == "Pixdata":
                self.pixdata(data)
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
            if flag(objects_node.get("rotate")):
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
                where = f"Objects/{local_name(child.tag)}[{index + 1}]"
                obj = self.object(child, where)
                if obj is not None:
                    frame = obj.pop("_frame", None)
                    objects.append(obj)
                    if frame is not None:
                        placed: dict[str, Any] = {
                            k: obj[k] for k in ("x_mm", "y_mm", "rotation") if k in obj
                        }
                        objects.append({**frame, **placed})
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
            kind = local_name(shape.tag)
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

    # --- objects ------------------------------------------------------------------------------

    def object(self, node: Element, where: str) -> dict[str, Any] | None:
        kind = local_name(node.tag)
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
        if flag(node.get("shadow")):
            self.note(where, "The shadow is not kept.")
        obj = handler(node, where)
        if obj is None:
            return None
        # The matrix's own translation (a4, a5, in points) moves the object as x and y do.
        x = self.length(node.get("x"), where) + self.length(node.get("a4"), where)
        y = self.length(node.get("y"), where) + self.length(node.get("a5"), where)
        diagonal = obj.pop("_diagonal", None)
        if diagonal is not None:
            obj["x_mm"], obj["y_mm"] = round(x + diagonal[0], 4), round(y + diagonal[1], 4)
            return obj
        if obj["type"] == "line":  # gLabels strokes the path's middle: the line's box is offset
            return self.place_line(obj, node, x, y, where)
        # The matrix turns the object's box as gLabels gives it (w × h); a barcode's own extent
        # is only known once drawn.
        w = self.length(node.get("w"), where) or self.extent(obj)[0]
        h = self.length(node.get("h"), where) or self.extent(obj)[1]
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

    def pixdata(self, node: Element) -> None:
        """A gLabels 3 image embedded as a GdkPixdata stream (`<Pixdata name=…>`), kept as PNG;
        the size limit applies to the decoded image, not to its XML."""

        name = node.get("name") or ""
        where = "Data/Pixdata"
        try:
            raw = base64.b64decode("".join((node.text or "").split()), validate=True)
        except (binascii.Error, ValueError):
            self.note(where, f"The embedded image {name!r} is not valid base64; not imported.")
            return
        if len(raw) < 24 or raw[:4] != b"GdkP":
            self.note(
                where, f"The embedded image {name!r} is not a GdkPixdata image; not imported."
            )
            return
        _, _, kind, stride, width, height = struct.unpack(">IIIIII", raw[:24])
        channels = 4 if kind & 0xFF == 2 else 3
        limit = int(MAX_MM / 25.4 * 600)
        if (
            not (0 < width <= limit and 0 < height <= limit)
            or stride < width * channels
            or stride * height > MAX_PIXDATA_BYTES
        ):
            self.note(where, f"The embedded image {name!r} is {width} × {height}; not imported.")
            return
        body, wanted = raw[24:], stride * height
        if kind >> 24 == 2:  # run-length encoded: a count byte, then pixels
            out = bytearray()
            index = 0
            pixels_wanted = width * height * channels
            while index < len(body) and len(out) < pixels_wanted:
                count = body[index]
                index += 1
                if count & 0x80:
                    out += body[index : index + channels] * (count & 0x7F)
                    index += channels
                else:
                    out += body[index : index + count * channels]
                    index += count * channels
            pixels, stride = bytes(out[:pixels_wanted]), width * channels
            wanted = stride * height
        else:
            pixels = body[:wanted]
        if len(pixels) < wanted:
            self.note(where, f"The embedded image {name!r} is truncated; not imported.")
            return
        mode = "RGBA" if channels == 4 else "RGB"
        image = Image.frombytes(mode, (width, height), pixels, "raw", mode, stride)
        self.files[name] = base64.b64decode(png(image))
