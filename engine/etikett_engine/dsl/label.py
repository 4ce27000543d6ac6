"""The label document: size, density, declared variables and a flat list of objects with stable ids.

A `text` or `barcode` object takes its value from `content` (a literal) or `expression` (CEL over
the variables, `counters` and `now`), exactly one of them. Unknown fields are refused everywhere.
"""

import typing
from typing import Any, Self

from pydantic import Field, model_validator

from etikett_engine.dsl.label_objects import OBJECT_TYPES as OBJECT_TYPES
from etikett_engine.dsl.label_objects import BarcodeObject as BarcodeObject
from etikett_engine.dsl.label_objects import BoxObject as BoxObject
from etikett_engine.dsl.label_objects import EllipseObject as EllipseObject
from etikett_engine.dsl.label_objects import ImageObject as ImageObject
from etikett_engine.dsl.label_objects import LabelObject as LabelObject
from etikett_engine.dsl.label_objects import LineObject as LineObject
from etikett_engine.dsl.label_objects import Placed as Placed
from etikett_engine.dsl.label_objects import TextObject as TextObject
from etikett_engine.dsl.label_objects import Valued as Valued
from etikett_engine.dsl.label_terms import CEL as CEL
from etikett_engine.dsl.label_terms import DPI as DPI
from etikett_engine.dsl.label_terms import GS1_SYMBOLOGIES as GS1_SYMBOLOGIES
from etikett_engine.dsl.label_terms import MAX_MM as MAX_MM
from etikett_engine.dsl.label_terms import MIN_LABEL_MM as MIN_LABEL_MM
from etikett_engine.dsl.label_terms import RESERVED_NAMES as RESERVED_NAMES
from etikett_engine.dsl.label_terms import SYMBOLOGY_TITLES as SYMBOLOGY_TITLES
from etikett_engine.dsl.label_terms import FontFamily as FontFamily
from etikett_engine.dsl.label_terms import Ink as Ink
from etikett_engine.dsl.label_terms import Rotation as Rotation
from etikett_engine.dsl.label_terms import Symbology as Symbology
from etikett_engine.dsl.label_terms import VariableType as VariableType
from etikett_engine.dsl.label_terms import ui as ui
from etikett_engine.dsl.strict import IDENTIFIER as IDENTIFIER
from etikett_engine.dsl.strict import OBJECT_ID as OBJECT_ID
from etikett_engine.dsl.strict import Strict as Strict


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
