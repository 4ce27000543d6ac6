"""The label document: size, density, declared variables and a flat list of objects with stable ids.

A `text` or `barcode` object takes its value from `content` (a literal) or `expression` (CEL over
the variables, `counters` and `now`), exactly one of them. Unknown fields are refused everywhere.
"""

import typing
from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett_engine.dsl.strict import IDENTIFIER as IDENTIFIER
from etikett_engine.dsl.strict import OBJECT_ID as OBJECT_ID
from etikett_engine.dsl.strict import Strict as Strict

DPI = Literal[203, 300, 600]
Rotation = Literal[0, 90, 180, 270]
VariableType = Literal["string", "integer", "number", "date", "boolean"]
Symbology = Literal[
    "code128",
    "gs1-128",
    "ean13",
    "upca",
    "code39",
    "itf14",
    "qr",
    "datamatrix",
    "gs1-datamatrix",
    "pdf417",
]
FontFamily = Literal["Roboto", "Roboto Condensed", "Roboto Mono", "Noto Sans"]
# How an object's dots reach the label: black adds dots, white clears them, reverse inverts what
# lies under them (ZPL ^FR, ^LR; gLabels' white fills). Absent: black.
Ink = Literal["black", "white", "reverse"]

# Titles for people (symbologies as printers and scanners name them), in `Symbology`'s order.
SYMBOLOGY_TITLES = {
    "code128": "Code 128",
    "gs1-128": "GS1-128",
    "ean13": "EAN-13",
    "upca": "UPC-A",
    "code39": "Code 39",
    "itf14": "ITF-14",
    "qr": "QR Code",
    "datamatrix": "Data Matrix",
    "gs1-datamatrix": "GS1 DataMatrix",
    "pdf417": "PDF417",
}
# Symbologies whose content is a GS1 element string in `(AI)value` notation.
GS1_SYMBOLOGIES = ("gs1-128", "gs1-datamatrix")

MAX_MM = 1000.0
# No label is smaller; below it a size rounds to no dots (and DynamoDB holds no number under
# 1e-130, which `gt=0` alone would let through).
MIN_LABEL_MM = 1.0
RESERVED_NAMES = frozenset({"now", "counters", "value"})  # names CEL expressions get from us


def ui(group: str | None = None, unit: str | None = None, **extra: Any) -> dict[str, Any]:
    """Annotations for forms generated from the schema (the console's property panels): the
    section a field belongs in (`x-group`), its unit (`x-unit`: mm, pt, dots, degrees), and
    others such as `x-cel` (a CEL expression) or `x-enum-titles` (names of an enum's values)."""
    found: dict[str, Any] = {f"x-{k.replace('_', '-')}": v for k, v in extra.items()}
    if group is not None:
        found["x-group"] = group
    if unit is not None:
        found["x-unit"] = unit
    return found


CEL = ui(cel=True)


class Size(Strict):
    width_mm: float = Field(
        ge=MIN_LABEL_MM,
        le=MAX_MM,
        title="Width",
        description="Label width (across the print head).",
        json_schema_extra=ui(unit="mm"),
    )
    height_mm: float = Field(
        ge=MIN_LABEL_MM,
        le=MAX_MM,
        title="Height",
        description="Label length (feed direction).",
        json_schema_extra=ui(unit="mm"),
    )


class Variable(Strict):
    name: str = Field(
        pattern=IDENTIFIER, title="Name", description="Name used in CEL and in print data."
    )
    type: VariableType = Field(default="string", title="Type")
    description: str | None = Field(
        default=None, max_length=500, title="Description", description="What an operator enters."
    )
    default: Any = Field(
        default=None, title="Default", description="Value used when print data omits it."
    )
    sample: Any = Field(
        default=None, title="Sample", description="Value used by previews and designers."
    )
    required: bool = Field(
        default=False, title="Required", description="Print data must supply a value."
    )
    expression: str | None = Field(
        default=None,
        max_length=4000,
        title="Expression",
        description="CEL over the other variables, `counters` and `now`; makes it computed.",
        json_schema_extra=CEL,
    )


class Placed(Strict):
    id: str = Field(
        pattern=OBJECT_ID, title="Id", description="Stable id; every patch must keep it."
    )
    x_mm: float = Field(
        ge=-MAX_MM,
        le=MAX_MM,
        title="X",
        description="Left edge of the (rotated) object from the label's left edge.",
        json_schema_extra=ui("Position", "mm"),
    )
    y_mm: float = Field(
        ge=-MAX_MM,
        le=MAX_MM,
        title="Y",
        description="Top edge of the (rotated) object from the label's top edge.",
        json_schema_extra=ui("Position", "mm"),
    )
    rotation: Rotation = Field(
        default=0,
        title="Rotation",
        description="Clockwise quarter turns about the top-left anchor.",
        json_schema_extra=ui("Position", "degrees"),
    )
    ink: Ink | None = Field(
        default=None,
        title="Ink",
        description="`black` (absent) adds dots; `white` clears the dots under the object; "
        "`reverse` turns the dots under it white and the paper under it black.",
        json_schema_extra=ui("Ink"),
    )


class Valued(Placed):
    content: str | None = Field(
        default=None,
        max_length=10000,
        title="Content",
        description="A literal value.",
        json_schema_extra=ui("Content"),
    )
    expression: str | None = Field(
        default=None,
        max_length=4000,
        title="Expression",
        description="A CEL expression over the variables, `counters` and `now`.",
        json_schema_extra=ui("Content", cel=True),
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.content is None) == (self.expression is None):
            raise ValueError("exactly one of `content` and `expression` is required")
        return self


class TextObject(Valued):
    model_config = ConfigDict(title="Text")
    type: Literal["text"]
    font: FontFamily = Field(
        default="Roboto",
        title="Font",
        description="A font the renderer ships (never a system font).",
        json_schema_extra=ui("Font"),
    )
    size_pt: float = Field(
        default=10, gt=0, le=400, title="Size", json_schema_extra=ui("Font", "pt")
    )
    weight: int = Field(
        default=500,
        ge=100,
        le=900,
        title="Weight",
        description="Font weight; 500-600 prints robustly on thermal heads.",
        json_schema_extra=ui("Font"),
    )
    width_mm: float | None = Field(
        default=None,
        gt=0,
        le=MAX_MM,
        title="Box width",
        description="Box width for alignment, wrapping and shrinking.",
        json_schema_extra=ui("Box", "mm"),
    )
    height_mm: float | None = Field(
        default=None,
        gt=0,
        le=MAX_MM,
        title="Box height",
        description="Box height for wrapping and shrinking.",
        json_schema_extra=ui("Box", "mm"),
    )
    align: Literal["left", "center", "right"] = Field(
        default="left", title="Alignment", json_schema_extra=ui("Box")
    )
    wrap: bool = Field(
        default=False,
        title="Wrap",
        description="Break lines at the box width.",
        json_schema_extra=ui("Box"),
    )
    shrink_to_fit: bool = Field(
        default=False,
        title="Shrink to fit",
        description="Reduce the size until the text fits.",
        json_schema_extra=ui("Box"),
    )
    max_lines: int | None = Field(
        default=None, ge=1, le=100, title="Maximum lines", json_schema_extra=ui("Box")
    )
    line_spacing: float = Field(
        default=1.15,
        ge=0.5,
        le=4,
        title="Line spacing",
        description="Baseline distance as a multiple of the size.",
        json_schema_extra=ui("Box"),
    )
    valign: Literal["top", "middle", "bottom"] | None = Field(
        default=None,
        title="Vertical alignment",
        description="Where the lines sit in a box with `height_mm` (absent: top).",
        json_schema_extra=ui("Box"),
    )
    scale_x: float | None = Field(
        default=None,
        ge=0.1,
        le=10,
        title="Width scale",
        description="Glyph width as a multiple of the font's own (absent: 1); ZPL's character "
        "width differing from the height.",
        json_schema_extra=ui("Font"),
    )


class BarcodeObject(Valued):
    model_config = ConfigDict(title="Barcode")
    type: Literal["barcode"]
    symbology: Symbology = Field(
        title="Symbology",
        json_schema_extra=ui("Barcode", enum_titles=list(SYMBOLOGY_TITLES.values())),
    )
    module_width_mm: float | None = Field(
        default=None,
        gt=0,
        le=10,
        title="Module width",
        description="Narrow bar / module size in mm.",
        json_schema_extra=ui("Barcode", "mm"),
    )
    module_width_dots: int | None = Field(
        default=None,
        ge=1,
        le=100,
        title="Module width",
        description="Narrow bar / module size in dots.",
        json_schema_extra=ui("Barcode", "dots"),
    )
    height_mm: float | None = Field(
        default=None,
        gt=0,
        le=MAX_MM,
        title="Bar height",
        description="Bar height of linear symbologies.",
        json_schema_extra=ui("Barcode", "mm"),
    )
    height_dots: int | None = Field(
        default=None,
        ge=1,
        le=10000,
        title="Bar height",
        json_schema_extra=ui("Barcode", "dots"),
    )
    human_readable: bool = Field(
        default=True,
        title="Human-readable text",
        description="Print the text under linear codes.",
        json_schema_extra=ui("Barcode"),
    )
    text_size_pt: float = Field(
        default=8, gt=0, le=72, title="Text size", json_schema_extra=ui("Barcode", "pt")
    )
    row_height_dots: int | None = Field(
        default=None,
        ge=1,
        le=100,
        title="Row height",
        description="PDF417 row height in dots (absent: 3 modules).",
        json_schema_extra=ui("Barcode", "dots"),
    )
    code_set: Literal["A", "B", "C"] | None = Field(
        default=None,
        title="Code set",
        description="Code 128 only: every character in this code set, as a printer encodes "
        "without its automatic mode (ZPL ^BC mode N: B), so the bars are as wide as it prints "
        "them (absent: the shortest encoding).",
        json_schema_extra=ui("Barcode"),
    )

    @model_validator(mode="after")
    def _one_module_unit(self) -> Self:
        if self.module_width_mm is not None and self.module_width_dots is not None:
            raise ValueError("give the module width in mm or in dots, not both")
        if self.height_mm is not None and self.height_dots is not None:
            raise ValueError("give the height in mm or in dots, not both")
        if self.code_set is not None and self.symbology != "code128":
            raise ValueError("`code_set` is for the code128 symbology only")
        return self


class BoxObject(Placed):
    model_config = ConfigDict(title="Box")
    type: Literal["box"]
    width_mm: float = Field(gt=0, le=MAX_MM, title="Width", json_schema_extra=ui("Size", "mm"))
    height_mm: float = Field(gt=0, le=MAX_MM, title="Height", json_schema_extra=ui("Size", "mm"))
    line_mm: float = Field(
        default=0.5, gt=0, le=100, title="Line width", json_schema_extra=ui("Line", "mm")
    )
    fill: bool = Field(default=False, title="Filled", json_schema_extra=ui("Line"))
    corner_radius_mm: float = Field(
        default=0, ge=0, le=100, title="Corner radius", json_schema_extra=ui("Line", "mm")
    )


class LineObject(Placed):
    model_config = ConfigDict(title="Line")
    type: Literal["line"]
    length_mm: float = Field(
        gt=0,
        le=MAX_MM,
        title="Length",
        description="Runs right at rotation 0, down at 90.",
        json_schema_extra=ui("Size", "mm"),
    )
    thickness_mm: float = Field(
        default=0.5, gt=0, le=100, title="Thickness", json_schema_extra=ui("Size", "mm")
    )


class EllipseObject(Placed):
    model_config = ConfigDict(title="Ellipse")
    type: Literal["ellipse"]
    width_mm: float = Field(gt=0, le=MAX_MM, title="Width", json_schema_extra=ui("Size", "mm"))
    height_mm: float = Field(gt=0, le=MAX_MM, title="Height", json_schema_extra=ui("Size", "mm"))
    line_mm: float = Field(
        default=0.5, gt=0, le=100, title="Line width", json_schema_extra=ui("Line", "mm")
    )
    fill: bool = Field(default=False, title="Filled", json_schema_extra=ui("Line"))


class ImageObject(Placed):
    model_config = ConfigDict(title="Image")
    type: Literal["image"]
    width_mm: float = Field(gt=0, le=MAX_MM, title="Width", json_schema_extra=ui("Size", "mm"))
    height_mm: float = Field(gt=0, le=MAX_MM, title="Height", json_schema_extra=ui("Size", "mm"))
    content_base64: str = Field(
        max_length=4_000_000,
        title="Image",
        description="PNG or JPEG, base64.",
        json_schema_extra={
            **ui("Image", accept=["image/png", "image/jpeg"]),
            "contentEncoding": "base64",
        },
    )
    dither: Literal["floyd-steinberg", "threshold"] = Field(
        default="floyd-steinberg",
        title="Dots from grey",
        description="Floyd-Steinberg dithering for photos, a threshold for logos and line art.",
        json_schema_extra=ui("Image", enum_titles=["Dithered", "Threshold"]),
    )
    threshold: int = Field(
        default=128,
        ge=0,
        le=255,
        title="Threshold",
        description="Grey level from which a pixel prints as paper (threshold only).",
        json_schema_extra=ui("Image"),
    )


LabelObject = Annotated[
    TextObject | BarcodeObject | BoxObject | LineObject | EllipseObject | ImageObject,
    Field(discriminator="type"),
]

OBJECT_TYPES: tuple[type[Placed], ...] = (
    TextObject,
    BarcodeObject,
    BoxObject,
    LineObject,
    EllipseObject,
    ImageObject,
)


class LabelDocument(Strict):
    """What a label is: everything needed to render it exactly, nothing about who or when."""

    size: Size = Field(title="Size")
    dpi: DPI = Field(
        default=203,
        title="Density",
        description="Printer dots per inch the label is designed for.",
        json_schema_extra=ui(unit="dpi"),
    )
    variables: list[Variable] = Field(default_factory=list, max_length=500, title="Variables")
    objects: list[LabelObject] = Field(
        default_factory=list,
        max_length=2000,
        title="Objects",
        description="Drawn in list order; each only adds black dots.",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        seen: set[str] = set()
        for index, obj in enumerate(self.objects):
            if obj.id in seen:
                raise ValueError(f"objects[{index}].id {obj.id!r} is used twice")
            seen.add(obj.id)
        names: set[str] = set()
        for index, variable in enumerate(self.variables):
            if variable.name in RESERVED_NAMES:
                raise ValueError(f"variables[{index}].name {variable.name!r} is reserved in CEL")
            if variable.name in names:
                raise ValueError(f"variables[{index}].name {variable.name!r} is declared twice")
            names.add(variable.name)
        return self

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    def expressions(self) -> list[str]:
        """Every CEL expression of the label: computed variables', then objects'."""
        sources = [v.expression for v in self.variables if v.expression]
        sources += [
            o.expression
            for o in self.objects
            if isinstance(o, TextObject | BarcodeObject) and o.expression
        ]
        return sources


def blank(width_mm: float, height_mm: float, dpi: int = 203) -> LabelDocument:
    return LabelDocument.model_validate(
        {"size": {"width_mm": width_mm, "height_mm": height_mm}, "dpi": dpi}
    )


def json_schema() -> dict[str, Any]:
    schema = LabelDocument.model_json_schema(ref_template="#/$defs/{model}")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "svc://schema/label"
    return schema


def registry() -> dict[str, Any]:
    """Each label object type with its fields, straight from the label document's models."""
    schema = LabelDocument.model_json_schema(ref_template="#/$defs/{model}")
    definitions = schema.get("$defs", {})
    object_types = []
    for model in OBJECT_TYPES:
        model_schema = definitions.get(model.__name__) or model.model_json_schema()
        properties = model_schema.get("properties", {})
        required = set(model_schema.get("required", []))
        (type_name,) = typing.get_args(model.model_fields["type"].annotation)
        object_types.append(
            {
                "type": type_name,
                "fields": {
                    name: {
                        **{k: v for k, v in field.items() if k != "title"},
                        "required": name in required,
                    }
                    for name, field in properties.items()
                },
            }
        )
    return {
        "object_types": object_types,
        "rules": [
            "Every object has a stable `id`; patches must keep it (document.id_changed).",
            "A text or barcode object takes its value from `content` (a literal) or "
            "`expression` (CEL over the variables, `counters` and `now`), exactly one of them.",
            "Unknown fields are refused (document.invalid names the JSON path).",
        ],
        "symbologies": list(typing.get_args(Symbology)),
        "fonts": list(typing.get_args(FontFamily)),
        "dpi": list(typing.get_args(DPI)),
        "rotations": list(typing.get_args(Rotation)),
        "variable_types": list(typing.get_args(VariableType)),
    }
