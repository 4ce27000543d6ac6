"""The label document: size, density, declared variables and a flat list of objects with stable ids.

A `text` or `barcode` object takes its value from `content` (a literal) or `expression` (CEL over
the variables, `counters` and `now`), exactly one of them. Unknown fields are refused everywhere.
"""

import typing
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from etikett.dsl.strict import IDENTIFIER as IDENTIFIER
from etikett.dsl.strict import OBJECT_ID as OBJECT_ID
from etikett.dsl.strict import Strict as Strict

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

MAX_MM = 1000.0
# No label is smaller; below it a size rounds to no dots (and DynamoDB holds no number under
# 1e-130, which `gt=0` alone would let through).
MIN_LABEL_MM = 1.0
RESERVED_NAMES = frozenset({"now", "counters", "value"})  # names CEL expressions get from us


class Size(Strict):
    width_mm: float = Field(
        ge=MIN_LABEL_MM, le=MAX_MM, description="Label width (across the print head)."
    )
    height_mm: float = Field(
        ge=MIN_LABEL_MM, le=MAX_MM, description="Label length (feed direction)."
    )


class Variable(Strict):
    name: str = Field(pattern=IDENTIFIER, description="Name used in CEL and in print data.")
    type: VariableType = "string"
    description: str | None = Field(default=None, max_length=500)
    default: Any = Field(default=None, description="Value used when print data omits it.")
    sample: Any = Field(default=None, description="Value used by previews and designers.")
    required: bool = Field(default=False, description="Print data must supply a value.")
    expression: str | None = Field(
        default=None,
        max_length=4000,
        description="CEL over the other variables, `counters` and `now`; makes it computed.",
    )


class Placed(Strict):
    id: str = Field(pattern=OBJECT_ID, description="Stable id; every patch must keep it.")
    x_mm: float = Field(ge=-MAX_MM, le=MAX_MM)
    y_mm: float = Field(ge=-MAX_MM, le=MAX_MM)
    rotation: Rotation = 0
    ink: Ink | None = Field(
        default=None,
        description="`black` (absent) adds dots; `white` clears the dots under the object; "
        "`reverse` turns the dots under it white and the paper under it black.",
    )


class Valued(Placed):
    content: str | None = Field(default=None, max_length=10000, description="A literal value.")
    expression: str | None = Field(default=None, max_length=4000, description="A CEL expression.")

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.content is None) == (self.expression is None):
            raise ValueError("exactly one of `content` and `expression` is required")
        return self


class TextObject(Valued):
    type: Literal["text"]
    font: FontFamily = "Roboto"
    size_pt: float = Field(default=10, gt=0, le=400)
    weight: int = Field(
        default=500,
        ge=100,
        le=900,
        description="Font weight; 500-600 prints robustly on thermal heads.",
    )
    width_mm: float | None = Field(
        default=None,
        gt=0,
        le=MAX_MM,
        description="Box width for alignment, wrapping and shrinking.",
    )
    height_mm: float | None = Field(
        default=None, gt=0, le=MAX_MM, description="Box height for wrapping and shrinking."
    )
    align: Literal["left", "center", "right"] = "left"
    valign: Literal["top", "middle", "bottom"] | None = Field(
        default=None,
        description="Where the lines sit in a box with `height_mm` (absent: top).",
    )
    scale_x: float | None = Field(
        default=None,
        ge=0.1,
        le=10,
        description="Glyph width as a multiple of the font's own (absent: 1); ZPL's character "
        "width differing from the height.",
    )
    wrap: bool = Field(default=False, description="Break lines at the box width.")
    shrink_to_fit: bool = Field(default=False, description="Reduce the size until the text fits.")
    max_lines: int | None = Field(default=None, ge=1, le=100)
    line_spacing: float = Field(default=1.15, ge=0.5, le=4)


class BarcodeObject(Valued):
    type: Literal["barcode"]
    symbology: Symbology
    module_width_mm: float | None = Field(
        default=None, gt=0, le=10, description="Narrow bar / module size in mm."
    )
    module_width_dots: int | None = Field(
        default=None, ge=1, le=100, description="Narrow bar / module size in dots."
    )
    height_mm: float | None = Field(
        default=None, gt=0, le=MAX_MM, description="Bar height of linear symbologies."
    )
    height_dots: int | None = Field(default=None, ge=1, le=10000)
    row_height_dots: int | None = Field(
        default=None,
        ge=1,
        le=100,
        description="PDF417 row height in dots (absent: 3 modules).",
    )
    human_readable: bool = Field(default=True, description="Print the text under linear codes.")
    text_size_pt: float = Field(default=8, gt=0, le=72)
    code_set: Literal["A", "B", "C"] | None = Field(
        default=None,
        description="Code 128 only: every character in this code set, as a printer encodes "
        "without its automatic mode (ZPL ^BC mode N: B), so the bars are as wide as it prints "
        "them (absent: the shortest encoding).",
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
    type: Literal["box"]
    width_mm: float = Field(gt=0, le=MAX_MM)
    height_mm: float = Field(gt=0, le=MAX_MM)
    line_mm: float = Field(default=0.5, gt=0, le=100)
    fill: bool = False
    corner_radius_mm: float = Field(default=0, ge=0, le=100)


class LineObject(Placed):
    type: Literal["line"]
    length_mm: float = Field(gt=0, le=MAX_MM, description="Runs right at rotation 0, down at 90.")
    thickness_mm: float = Field(default=0.5, gt=0, le=100)


class EllipseObject(Placed):
    type: Literal["ellipse"]
    width_mm: float = Field(gt=0, le=MAX_MM)
    height_mm: float = Field(gt=0, le=MAX_MM)
    line_mm: float = Field(default=0.5, gt=0, le=100)
    fill: bool = False


class ImageObject(Placed):
    type: Literal["image"]
    width_mm: float = Field(gt=0, le=MAX_MM)
    height_mm: float = Field(gt=0, le=MAX_MM)
    content_base64: str = Field(max_length=4_000_000, description="PNG or JPEG, base64.")
    dither: Literal["floyd-steinberg", "threshold"] = "floyd-steinberg"
    threshold: int = Field(default=128, ge=0, le=255)


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

    size: Size
    dpi: DPI = 203
    variables: list[Variable] = Field(default_factory=list, max_length=500)
    objects: list[LabelObject] = Field(default_factory=list, max_length=2000)

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
