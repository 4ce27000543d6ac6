"""The combined OpenAPI 3.1 document of all groups: operations, access rules, problem catalog.

Building it means importing every group's routes and walking them with FastAPI: about a second
of a cold start. So the shared layer's build writes it (`write`, run by `shared/Makefile`) beside
this module, with the group each operation belongs to, and a function reads that file; only where
no build wrote one (local mode, tests) is it built from the routers, once per process.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

from etikett import API_VERSION

# Building the document imports every group's routes, FastAPI's OpenAPI builder and the examples:
# those imports stay in the functions that build, so a function reading the built file loads none.

# Written by the layer build only; never in the source tree (local mode builds from the routers).
BUILT = Path(__file__).with_name("openapi.built.json")

DESCRIPTION = """Etikett designs labels, automates label printing, deploys automations to on-site
Runners and manages print jobs and their outcomes.

Authenticate with `Authorization: Bearer <token>`: a session token from `login`, or a
service-account token from `createApiToken`. Every operation states its roles in
`x-etikett-access` (`admin` may do everything). Errors are RFC 9457 problem details with a stable
`code`; the catalog is `x-etikett-problem-codes`. Lists take `limit` (1..200, default 50) and
`cursor`, and answer `{"items": [...], "next_cursor": ...}`."""


def document() -> dict[str, Any]:
    """The OpenAPI document, as the build wrote it or built from the routers."""
    document: dict[str, Any] = _description()["document"]
    return document


def operation_groups() -> dict[str, str]:
    """Each operationId's group: the function (and router module) that serves it."""
    groups: dict[str, str] = _description()["operation_groups"]
    return groups


@cache
def _description() -> dict[str, Any]:
    if BUILT.is_file():
        built: dict[str, Any] = json.loads(BUILT.read_text(encoding="utf-8"))
        return built
    return describe()


def describe() -> dict[str, Any]:
    """What `write` stores, built from every group's routes."""
    from etikett.api.groups import GROUPS, routes_of
    from etikett.api.routing import EtikettRoute

    groups = {
        str(route.operation_id): group
        for group in GROUPS
        for route in routes_of(group).routes
        if isinstance(route, EtikettRoute)
    }
    return {"document": build(), "operation_groups": groups}


def write(directory: Path) -> Path:
    """Store the description in `directory` (a built layer's `etikett/api/`) as JSON."""
    target = directory / BUILT.name
    target.write_text(json.dumps(describe(), ensure_ascii=False), encoding="utf-8")
    return target


def build() -> dict[str, Any]:
    # Building the document (at the layer's build, in local mode) loads what a function that
    # reads the built document never needs.
    from fastapi.openapi.utils import get_openapi

    from etikett.api import flow_examples, problems
    from etikett.api.app import create_app
    from etikett.api.groups import all_routes

    app = create_app(*all_routes())
    spec = get_openapi(
        title="Etikett",
        version=API_VERSION,
        openapi_version="3.1.0",
        description=DESCRIPTION,
        routes=app.routes,
    )
    _ai_examples(spec)
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = problems.Problem.model_json_schema(
        ref_template="#/components/schemas/{model}"
    )
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    _document_schemas(schemas)
    components["securitySchemes"] = {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "Session token (login) or service-account token.",
        },
        "session": {
            "type": "apiKey",
            "in": "cookie",
            "name": "etikett_session",
            "description": "The browser console's session cookie.",
        },
    }
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            access = operation.get("x-etikett-access", {})
            operation["security"] = (
                [{"bearer": []}, {"session": []}] if access.get("authenticated") else []
            )
    flow_examples.publish(spec)
    spec["x-etikett-problem-codes"] = problems.catalog()
    spec["servers"] = [{"url": "/"}]
    _published_names(spec)
    # As JSON carries it: what the build writes and what a live build answers are the same.
    published: dict[str, Any] = json.loads(json.dumps(spec))
    return published


# pydantic names a component after its module where two models share a name (flows' and
# discovery's `Finding`). Moving a module keeps the name it was published with, so that no
# client's schema names change: the engine's modules keep the names they had in `etikett`, the
# domain's the names they had before the domain became one package per aggregate.
_ENGINE_PREFIX, _PUBLISHED_PREFIX = "etikett_engine__", "etikett__"
_AGGREGATE = re.compile(
    r"^etikett__domain__(?:agent|assistants|audit|counters|credentials|flows|labels|printers"
    r"|printing|runners|users|webhooks)__(?=[a-z_]+__)"
)
_REF = "#/components/schemas/"


def _published_name(name: str) -> str:
    if name.startswith(_ENGINE_PREFIX):
        return _PUBLISHED_PREFIX + name.removeprefix(_ENGINE_PREFIX)
    return _AGGREGATE.sub("etikett__domain__", name)


def _published_names(spec: dict[str, Any]) -> None:
    schemas: dict[str, Any] = spec["components"]["schemas"]
    renamed = {name: published for name in schemas if (published := _published_name(name)) != name}
    if not renamed:
        return
    clashes = set(renamed.values()) & set(schemas)
    if clashes:
        raise ValueError(f"components named twice: {sorted(clashes)}")
    in_order = [(renamed.get(name, name), schema) for name, schema in schemas.items()]
    schemas.clear()
    schemas.update(in_order)
    refs = {_REF + old: _REF + new for old, new in renamed.items()}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref in refs:
                node["$ref"] = refs[ref]
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(spec)


def _document_schemas(schemas: dict[str, Any]) -> None:
    """The label, flow and form document schemas (those of getSchema and svc://schema/*) as
    components, so that operations taking a document refer to them by name."""
    from etikett_engine.dsl.schemas import components

    for name, schema in components().items():
        if name in schemas and schemas[name] != schema:
            raise ValueError(f"the component {name} is also a document schema's part")
        schemas[name] = schema


def _ai_examples(spec: dict[str, Any]) -> None:
    """The Credentials and AI answers' examples, set after the build (FastAPI drops their
    nulls)."""
    from etikett.api import ai_examples

    ai_examples.publish(spec)


if __name__ == "__main__":  # python -m etikett.api.openapi <built layer>/etikett/api
    print(write(Path(sys.argv[1])))
