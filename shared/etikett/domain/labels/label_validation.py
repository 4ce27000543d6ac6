"""Label and form documents checked before they are saved: the schema, every CEL expression
compiled against the variables the label declares, and the form a label implies when it has none
of its own.
"""

from __future__ import annotations

from typing import Any

from etikett.domain import documents
from etikett_engine.dsl.form import FormDocument, FormField
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import DocumentInvalid

FIELD_KINDS = {
    "string": "text",
    "integer": "integer",
    "number": "number",
    "date": "date",
    "boolean": "checkbox",
}


def _cel_check(
    source: str | None, declared: dict[str, Any], path: str, extra_names: tuple[str, ...] = ()
) -> None:
    if source is None:
        return
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett_engine.cel import CelInvalid, check

    try:
        check(source, declared, extra_names=extra_names)
    except CelInvalid as error:
        raise DocumentInvalid(
            f"The document is invalid at {path}: {error.detail}",
            errors=[
                {
                    "path": path,
                    "message": error.detail,
                    "type": "cel.invalid",
                    "line": error.params.get("line"),
                    "column": error.params.get("column"),
                }
            ],
        ) from None


def validate_label(data: Any) -> LabelDocument:
    """A label document, with every CEL expression compiled against the declared variables."""
    document = documents.validate(LabelDocument, data)
    declared = {v.name: v.type for v in document.variables}
    for index, variable in enumerate(document.variables):
        _cel_check(variable.expression, declared, f"/variables/{index}/expression")
    for index, obj in enumerate(document.objects):
        _cel_check(getattr(obj, "expression", None), declared, f"/objects/{index}/expression")
    return document


def validate_form(data: Any, label: LabelDocument) -> FormDocument:
    form = documents.validate(FormDocument, data)
    entered = {v.name: v.type for v in label.variables if v.expression is None}
    declared = {v.name: v.type for v in label.variables}
    for index, field in enumerate(form.fields):
        if field.variable not in entered:
            raise documents.invalid(
                f"/fields/{index}/variable",
                f"{field.variable!r} is not an entered variable of the label",
            )
        _cel_check(field.validation, declared, f"/fields/{index}/validation", ("value",))
    return form


def derived_form(label: LabelDocument) -> FormDocument:
    """The form a label gets without an authored one: a field per entered variable."""
    return FormDocument(
        fields=[
            FormField(
                id=f"field_{v.name}",
                variable=v.name,
                label=v.description or v.name.replace("_", " ").capitalize(),
                kind=FIELD_KINDS[v.type],
                required=v.required,
            )
            for v in label.variables
            if v.expression is None
        ]
    )
