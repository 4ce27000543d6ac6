"""ZPL graphics (`^GB ^GE ^GC ^GD ^GF`) as line, rectangle, ellipse and image objects."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw, ImageOps

from etikett.importers.conversion import MAX_OBJECTS, dots_to_mm, png, refuse
from etikett.importers.zpl.data import decode_graphic
from etikett.importers.zpl.reader import Field, Format, Reader
from etikett.importers.zpl.syntax import arg
from etikett_engine.dsl.label import MAX_MM
from etikett_engine.errors import ProblemCode


class GraphicReader(Reader):
    """Turns the graphics of a format into line, rectangle, ellipse and image objects."""

    def graphic(
        self, fmt: Format, current: Field, name: str, args: list[str], params: str, line: int
    ) -> None:
        if len(fmt.objects) >= MAX_OBJECTS:
            raise refuse(
                ProblemCode.IMPORT_TOO_COMPLEX,
                f"More than {MAX_OBJECTS} objects in one label format.",
                limit=MAX_OBJECTS,
            )
        x, y = current.x, current.y
        mm = self.dpi
        if name == "GF":
            self.image(fmt, current, args, params, line)
            return
        color = (arg(args, 3 if name != "GC" else 2) or "B").upper()[:1]
        if name == "GB":
            thickness = max(1, self.int_arg(args, 2, 1))
            width = max(thickness, self.int_arg(args, 0, thickness))
            height = max(thickness, self.int_arg(args, 1, thickness))
            rounding = min(8, max(0, self.int_arg(args, 4, 0)))
            if height <= thickness and width > thickness and not rounding:
                obj = {
                    "type": "line",
                    "id": self.object_id(fmt, "line"),
                    "length_mm": dots_to_mm(width, mm),
                    "thickness_mm": dots_to_mm(height, mm),
                }
            elif width <= thickness and height > thickness and not rounding:
                obj = {
                    "type": "line",
                    "id": self.object_id(fmt, "line"),
                    "length_mm": dots_to_mm(height, mm),
                    "thickness_mm": dots_to_mm(width, mm),
                    "rotation": 90,
                }
            else:
                obj = {
                    "type": "box",
                    "id": self.object_id(fmt, "box"),
                    "width_mm": dots_to_mm(width, mm),
                    "height_mm": dots_to_mm(height, mm),
                    "line_mm": dots_to_mm(thickness, mm),
                }
                if 2 * thickness >= min(width, height):
                    obj["fill"] = True
                if rounding:
                    obj["corner_radius_mm"] = dots_to_mm(rounding / 8 * min(width, height) / 2, mm)
        elif name in ("GE", "GC"):
            if name == "GE":
                thickness = max(1, self.int_arg(args, 2, 1))
                width = max(thickness, self.int_arg(args, 0, thickness))
                height = max(thickness, self.int_arg(args, 1, thickness))
            else:
                thickness = max(1, self.int_arg(args, 1, 1))
                width = height = max(thickness, self.int_arg(args, 0, 3))
            obj = {
                "type": "ellipse",
                "id": self.object_id(fmt, "ellipse"),
                "width_mm": dots_to_mm(width, mm),
                "height_mm": dots_to_mm(height, mm),
                "line_mm": dots_to_mm(thickness, mm),
            }
            if 2 * thickness >= min(width, height):
                obj["fill"] = True
        else:  # GD: a diagonal, drawn as an image of exactly its dots
            thickness = max(1, self.int_arg(args, 2, 1))
            width = max(thickness, self.int_arg(args, 0, thickness))
            height = max(1, self.int_arg(args, 1, 1))
            lean = (arg(args, 4) or "R").upper()[:1]
            obj = self.diagonal(fmt, width, height, thickness, lean in ("L", "\\"))
        obj["x_mm"] = dots_to_mm(x, mm)
        obj["y_mm"] = dots_to_mm(y, mm)
        self.place(fmt, current, obj, line, white=color == "W")

    def place(
        self, fmt: Format, current: Field, obj: dict[str, Any], line: int, white: bool = False
    ) -> None:
        """Add a graphic: white clears what lies under it; ^FR (^LR) reverses it."""
        if white:
            obj["ink"] = "white"
        if current.reverse or fmt.reverse_all:
            obj["ink"] = "reverse"
        fmt.lines[obj["id"]] = line
        fmt.objects.append(obj)

    def diagonal(
        self, fmt: Format, width: int, height: int, thickness: int, left: bool
    ) -> dict[str, Any]:

        self.bound_image(width, height, "^GD")
        image = Image.new("L", (width, height), 255)
        if left:
            points = [
                (0, 0),
                (thickness - 1, 0),
                (width - 1, height - 1),
                (width - thickness, height - 1),
            ]
        else:
            points = [
                (0, height - 1),
                (thickness - 1, height - 1),
                (width - 1, 0),
                (width - thickness, 0),
            ]
        ImageDraw.Draw(image).polygon(points, fill=0)
        return self.image_object(fmt, image)

    def image(self, fmt: Format, current: Field, args: list[str], params: str, line: int) -> None:
        compression = (arg(args, 0) or "A").upper()[:1]
        total = self.int_arg(args, 2, -1)
        row_bytes = self.int_arg(args, 3, -1)
        where = f"^GF at line {line}"
        if compression != "A":
            self.note(
                line,
                f"^GF{compression} binary graphics are not supported; the graphic was dropped.",
                fmt,
            )
            return
        data = params.split(",", 4)[4] if params.count(",") >= 4 else ""
        image = self.decode_image(total, row_bytes, data, where, line)
        obj = self.image_object(fmt, image)
        obj["x_mm"] = dots_to_mm(current.x, self.dpi)
        obj["y_mm"] = dots_to_mm(current.y, self.dpi)
        self.place(fmt, current, obj, line)

    # --- graphics stored by the file (~DG, ~DY) and recalled (^XG, ^IM, ^IL) -----------------

    def store_graphic(self, name: str, params: str, line: int, fmt: Format | None) -> None:
        """~DGd:o.x,t,w,data and ~DYd:f,b,x,t,w,data (ASCII hex, ACS or Z64 graphics): kept
        under their name for a later ^XG or ^IM in the same file."""
        args = params.split(",")
        if name == "DG":
            stored, total_at, data_at = args[0], 1, 3
        else:
            if len(args) < 5:
                self.note(line, "~DY without its sizes was ignored.", fmt)
                return
            kind, extension = (arg(args, 1) or "A").upper()[:1], (arg(args, 2) or "G").upper()
            if kind not in ("A", "C") or extension[:1] not in ("G", ""):
                self.note(
                    line,
                    f"~DY {args[0]} ({extension} format {kind}) is not an ASCII graphic; it was "
                    "not imported.",
                    fmt,
                )
                return
            stored, total_at, data_at = args[0] + ".GRF", 3, 5
        key = stored_key(stored)
        total = self.int_arg(args, total_at, -1)
        row_bytes = self.int_arg(args, total_at + 1, -1)
        where = f"~{name} {stored.strip()} at line {line}"
        data = ",".join(args[data_at:]) if len(args) > data_at else ""
        image = self.decode_image(total, row_bytes, data, where, line)
        self.graphics[key] = image
        self.pngs.pop(key, None)  # a graphic stored again under the name replaces the old one

    def recall_graphic(
        self, fmt: Format, current: Field, name: str, args: list[str], line: int
    ) -> bool:
        """^XG / ^IM / ^IL of a graphic the file stored earlier: an image object (True), or
        False when the file does not hold it."""
        stored = (arg(args, 0) or "").strip()
        image = self.graphics.get(stored_key(stored))
        if image is None:
            return False
        # Every recall is a copy in the label documents: recalls spend the same budget as the
        # graphics themselves, so a small file cannot recall one graphic into gigabytes.
        size = (image.width + 7) // 8 * image.height
        if size > self.budget:
            raise refuse(
                ProblemCode.IMPORT_TOO_LARGE,
                f"^{name} {stored} at line {line}: the file's graphics and their recalls expand "
                f"past {self.max_expanded} bytes.",
                line=line,
                limit=self.max_expanded,
            )
        self.budget -= size
        key = stored_key(stored)
        if key not in self.pngs:  # a graphic recalled again is not encoded again
            self.pngs[key] = png(image.convert("1"))
        obj = self.image_object(fmt, image, self.pngs[key])
        if name == "XG":
            times_x = min(10, max(1, self.int_arg(args, 1, 1)))
            times_y = min(10, max(1, self.int_arg(args, 2, 1)))
            obj["width_mm"] = dots_to_mm(image.width * times_x, self.dpi)
            obj["height_mm"] = dots_to_mm(image.height * times_y, self.dpi)
        x, y = (0, 0) if name == "IL" else (current.x, current.y)
        obj["x_mm"] = dots_to_mm(x, self.dpi)
        obj["y_mm"] = dots_to_mm(y, self.dpi)
        self.place(fmt, current, obj, line)
        return True

    def decode_image(self, total: int, row_bytes: int, data: str, where: str, line: int) -> Any:

        if total <= 0 or row_bytes <= 0 or total % row_bytes:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where}: the byte counts do not describe a graphic (total {total}, "
                f"{row_bytes} per row).",
                line=line,
            )
        rows = total // row_bytes
        self.bound_image(row_bytes * 8, rows, where)
        if total > self.budget:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where} declares {total} bytes; the file's graphics may hold {self.budget} more.",
                line=line,
                limit=self.budget,
            )
        self.budget -= total
        bits = decode_graphic(data.strip(), total, row_bytes, where, line)
        image = Image.frombytes("1", (row_bytes * 8, rows), bits, "raw", "1;I")
        return ImageOps.grayscale(image.convert("L"))

    def bound_image(self, width: int, height: int, where: str) -> None:
        limit = int(MAX_MM / 25.4 * self.dpi)
        if width > limit or height > limit:
            raise refuse(
                ProblemCode.IMPORT_GRAPHIC_INVALID,
                f"{where} is {width} × {height} dots, larger than any label at {self.dpi} dpi.",
                limit=limit,
            )

    def image_object(self, fmt: Format, image: Any, content: str | None = None) -> dict[str, Any]:
        if content is None:
            content = png(image.convert("1"))
        return {
            "type": "image",
            "id": self.object_id(fmt, "image"),
            "width_mm": dots_to_mm(image.width, self.dpi),
            "height_mm": dots_to_mm(image.height, self.dpi),
            "content_base64": content,
            "dither": "threshold",
        }


def stored_key(name: str) -> str:
    """A stored object's name as the printer finds it: device R: unless named, upper case, the
    .GRF extension implied."""
    name = name.strip().upper()
    if ":" not in name:
        name = "R:" + name
    if "." not in name.split(":", 1)[1]:
        name += ".GRF"
    return name
