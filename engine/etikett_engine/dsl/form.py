"""The form document: the fields a person fills in to print a label, one per entered variable."""

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from etikett_engine.dsl.strict import IDENTIFIER, OBJECT_ID, Strict

FieldKind = Literal["text", "textarea", "number", "integer", "date", "checkbox", "select"]


class Option(Strict):
    value: Any
    label: str = Field(max_length=200)


class FormField(Strict):
    id: str = Field(pattern=OBJECT_ID, description="Stable id; every patch must keep it.")
    variable: str = Field(pattern=IDENTIFIER, description="The label variable this field fills.")
    label: str = Field(min_length=1, max_length=200)
    kind: FieldKind = "text"
    required: bool = False
    validation: str | None = Field(
        default=None,
        max_length=4000,
        description="CEL over `value` (and the other variables); "
        "true when the entry is acceptable.",
    )
    validation_message: str | None = Field(default=None, max_length=500)
    help: str | None = Field(default=None, max_length=1000)
    placeholder: str | None = Field(default=None, max_length=200)
    options: list[Option] | None = Field(default=None, max_length=500)

    @model_validator(mode="after")
    def _options_for_select(self) -> Self:
        if self.kind == "select" and not self.options:
            raise ValueError("a select field needs options")
        return self


class FormDocument(Strict):
    fields: list[FormField] = Field(default_factory=list, max_length=500)

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        seen: set[str] = set()
        for index, item in enumerate(self.fields):
            if item.id in seen:
                raise ValueError(f"fields[{index}].id {item.id!r} is used twice")
            seen.add(item.id)
        return self


def json_schema() -> dict[str, Any]:
    schema = FormDocument.model_json_schema(ref_template="#/$defs/{model}")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "svc://schema/form"
    return schema
