"""The objects a label draws — text, barcode, box, line, ellipse, image — each with a stable id,
a position and a rotation; `LabelObject` tells them apart by `type`."""

from typing import Annotated, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett_engine.dsl.label_terms import (
    MAX_MM,
    SYMBOLOGY_TITLES,
    FontFamily,
    Ink,
    Rotation,
    Symbology,
    ui,
)
from etikett_engine.dsl.strict import OBJECT_ID, Strict


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
