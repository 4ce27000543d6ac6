"""The MCP resources: the document schemas, the registries of label object types and flow nodes,
and the OpenAPI document. All derived from the code that defines them, and read once per process."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

# Each resource's module is imported when the resource is first read, not at the MCP function's
# cold start (the document models, the schemas, the OpenAPI document).

JSON = "application/json"


@dataclass(frozen=True)
class ResourceSpec:
    uri: str
    name: str
    title: str
    description: str
    read: Callable[[], Any]


def _label_registry() -> dict[str, Any]:
    from etikett_engine.dsl import label

    return {**label.registry(), "schema": "svc://schema/label"}


def _flow_registry() -> dict[str, Any]:
    from etikett_engine.dsl import flow_registry

    return {**flow_registry.registry(), "schema": "svc://schema/flow"}


def _schema(kind: str) -> Callable[[], dict[str, Any]]:
    def read() -> dict[str, Any]:
        from etikett_engine.dsl.schemas import schema

        return schema(kind)

    return read


def _openapi() -> dict[str, Any]:
    from etikett.api.openapi import document

    return document()


RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        "svc://registry/labels",
        "label-object-types",
        "Label object types",
        "The object types a label document supports (text, barcode, box, line, ellipse, image) "
        "with their fields, plus symbologies, fonts and densities.",
        _label_registry,
    ),
    ResourceSpec(
        "svc://registry/flows",
        "flow-node-types",
        "Flow node types",
        "The node types a flow document may use, each with the JSON Schema of its fields.",
        _flow_registry,
    ),
    ResourceSpec(
        "svc://schema/label",
        "label-schema",
        "Label document schema",
        "JSON Schema 2020-12 of the label document (getLabelDocument, patchLabelDocument).",
        _schema("label"),
    ),
    ResourceSpec(
        "svc://schema/flow",
        "flow-schema",
        "Flow document schema",
        "JSON Schema 2020-12 of the flow document: nodes with stable ids, a type and wires.",
        _schema("flow"),
    ),
    ResourceSpec(
        "svc://schema/form",
        "form-schema",
        "Form document schema",
        "JSON Schema 2020-12 of a label's print form (getLabelForm, patchLabelForm).",
        _schema("form"),
    ),
    ResourceSpec(
        "svc://openapi",
        "openapi",
        "OpenAPI document",
        "The OpenAPI 3.1 document of every operation: roles (x-etikett-access), MCP tools "
        "(x-etikett-mcp) and the problem codes (x-etikett-problem-codes).",
        _openapi,
    ),
)

BY_URI = {resource.uri: resource for resource in RESOURCES}


@cache
def text(uri: str) -> str:
    """The resource's JSON text; raises KeyError for a URI that names no resource."""
    return json.dumps(BY_URI[uri].read(), ensure_ascii=False, indent=1)
