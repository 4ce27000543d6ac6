"""The published JSON Schemas of the documents (label, flow, form): one source for `getSchema`,
the MCP resources `svc://schema/*` and the OpenAPI document's components.

Each schema is JSON Schema 2020-12 generated from the document's model, with the annotations
forms need (titles, `x-unit`, `x-group`, `x-cel`, `x-enum-titles`). In the OpenAPI document
the same schema is a component (`LabelDocument`, …) whose `$defs` are components beside it.
"""

from collections.abc import Callable
from typing import Any, Literal

from etikett_engine.dsl import label

SchemaKind = Literal["label", "flow", "form"]

# The component each document's schema is published as in the OpenAPI document.
COMPONENTS: dict[str, str] = {
    "label": "LabelDocument",
    "flow": "FlowDocument",
    "form": "FormDocument",
}


def _label() -> dict[str, Any]:

    return label.json_schema()


def _flow() -> dict[str, Any]:
    # Loaded here, not at the misc function's cold start.
    from etikett_engine.dsl import flow

    return flow.json_schema()


def _form() -> dict[str, Any]:
    # Loaded here, not at the misc function's cold start.
    from etikett_engine.dsl import form

    return form.json_schema()


_BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "label": _label,
    "flow": _flow,
    "form": _form,
}


def schema(kind: str) -> dict[str, Any]:
    """The document's JSON Schema (a fresh copy); KeyError for an unknown kind."""
    return _BUILDERS[kind]()


def components() -> dict[str, dict[str, Any]]:
    """Every document schema as OpenAPI components: the document under its component name, its
    `$defs` beside it, references rewritten to `#/components/schemas/…`. `$id` and `$schema`
    stay with the published schema: inside an OpenAPI document an `$id` would move the base
    that the references resolve against."""
    found: dict[str, dict[str, Any]] = {}
    for kind, name in COMPONENTS.items():
        published = schema(kind)
        definitions = published.pop("$defs", {})
        published.pop("$id", None)
        published.pop("$schema", None)
        for part_name, part in [(name, published), *definitions.items()]:
            rewritten = _rewrite(part)
            if part_name in found and found[part_name] != rewritten:
                raise ValueError(f"two document schemas define {part_name} differently")
            found[part_name] = rewritten
    return found


def _rewrite(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (
                value.replace("#/$defs/", "#/components/schemas/")
                if key == "$ref" and isinstance(value, str)
                else _rewrite(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite(item) for item in node]
    return node
