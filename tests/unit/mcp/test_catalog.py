"""The tool catalog: generated from the OpenAPI document, one tool per MCP operation, arguments
top-level, the body under `body` with every reference resolved, files as `{name, contentBase64}`."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from etikett.api.access import Access
from etikett.api.groups import GROUPS, routes_of
from etikett.api.openapi import document, operation_groups
from etikett.api.routing import EtikettRoute
from etikett.domain.actors import Caller
from etikett.mcp.catalog import (
    FILE_SCHEMA,
    HUMAN_ONLY_NOTE,
    MULTIPART,
    Catalog,
    CatalogError,
    access_rule,
    build,
    catalog,
    references,
)

# operations.md: never tools (browser login and setup, the master-key export, Runner bootstrap,
# the Runner agent channel); where they exist yet, they must be absent.
NEVER = {
    "login",
    "logout",
    "getAuthSetup",
    "postAuthSetup",
    "exportCredentialMasterKey",
    "createRunnerEnrollment",
    "postRunnerHeartbeat",
    "postRunnerJobClaim",
    "postRunnerJobReport",
    "getRunnerConfig",
}
# operations.md: named MCP tools of the groups built so far.
NAMED = {
    "listLabelVorlagen",
    "createLabelFromVorlage",
    "getLabelDocument",
    "patchLabelDocument",
    "postLabelPreview",
    "postLabelStatus",
    "getWhoami",
    "putPolicy",
    "postAuthPassword",
    "listAuditLog",
    "createUser",
}


def _operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for item in spec["paths"].values() for op in item.values()}


def _dangling(schema: dict[str, Any]) -> list[str]:
    local = set(schema.get("$defs", {}))
    return [ref for ref in references(schema) if ref.removeprefix("#/$defs/") not in local]


def test_every_mcp_operation_is_a_tool_and_no_other() -> None:
    operations = _operations(document())
    tools = catalog().tools
    assert set(tools) == {name for name, op in operations.items() if op["x-etikett-mcp"]}
    assert not NEVER & set(tools)
    assert set(tools) >= NAMED
    assert {name for name in NEVER if name in operations} <= {
        name for name, op in operations.items() if not op["x-etikett-mcp"]
    }


def test_catalog_is_built_once_per_process() -> None:
    assert catalog() is catalog()


def test_every_tool_schema_is_self_contained_json_schema() -> None:
    operations = _operations(document())
    for name, tool in catalog().tools.items():
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object", name
        assert tool.input_schema["additionalProperties"] is False, name
        assert "$ref" not in str(tool.input_schema), name  # no recursion yet: fully inline
        operation = operations[name]
        assert (tool.method, tool.path) == next(
            (method.upper(), path)
            for path, item in document()["paths"].items()
            for method, op in item.items()
            if op is operation
        )
        assert tool.description.startswith(operation["summary"]), name
        if operation.get("description"):
            assert operation["description"].strip() in tool.description, name


def test_arguments_are_top_level_and_the_body_is_under_body() -> None:
    tools = catalog().tools
    preview = tools["postLabelPreview"]
    assert [(a.name, a.location, a.required) for a in preview.arguments] == [
        ("labelId", "path", True),
        ("stufe", "query", False),
        ("version", "query", False),
    ]
    assert preview.body is not None and not preview.body.required
    assert preview.input_schema["required"] == ["labelId"]
    body = tools["createLabelFromVorlage"].input_schema["properties"]["body"]
    assert set(body["properties"]) == {"vorlageId", "name", "preset_id", "size", "dpi", "fit"}
    assert set(body["required"]) == {"vorlageId", "name"}
    assert body["additionalProperties"] is False
    patch = tools["patchLabelDocument"].input_schema
    assert patch["required"] == ["labelId", "body"]
    assert patch["properties"]["body"]["properties"]["operations"]["type"] == "array"
    assert tools["getWhoami"].input_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def _routes() -> dict[str, tuple[str, EtikettRoute]]:
    return {
        str(route.operation_id): (group, route)
        for group in GROUPS
        for route in routes_of(group).routes
        if isinstance(route, EtikettRoute)
    }


def test_rules_read_from_the_document_judge_every_caller_as_the_routes_do() -> None:
    routes = _routes()
    callers = [
        _caller(*roles, actor=actor)
        for actor in ("human", "service")
        for roles in (
            (),
            ("designer",),
            ("operator",),
            ("approver",),
            ("admin",),
            ("designer", "approver"),
        )
    ]
    for name, tool in catalog().tools.items():
        route = routes[name][1]
        assert tool.access.human == route.access.human, name
        for caller in callers:
            assert tool.access.permits(caller) == route.access.permits(caller), (name, caller)


def test_every_tool_knows_the_group_whose_routes_run_it() -> None:
    routes = _routes()
    assert operation_groups() == {name: group for name, (group, _) in routes.items()}
    for name, tool in catalog().tools.items():
        assert tool.group == routes[name][0], name
    with pytest.raises(CatalogError, match="no group serves "):
        build(document(), {})


def _caller(*roles: str, actor: str = "service") -> Caller:
    return Caller(actor=actor, subject="x", roles=frozenset(roles))  # type: ignore[arg-type]


def test_visibility_follows_the_rule_for_a_service_actor() -> None:
    tools = catalog().tools
    designer, approver, admin = _caller("designer"), _caller("approver"), _caller("admin")
    assert tools["createLabel"].visible_to(designer)
    assert not tools["createLabel"].visible_to(approver)
    assert tools["postLabelStatus"].visible_to(approver)
    assert tools["getVersion"].visible_to(_caller())
    # Human-only: listed for its roles, even though the call will be refused for any token.
    assert tools["putPolicy"].visible_to(admin) and not tools["putPolicy"].visible_to(designer)
    assert tools["postAuthPassword"].visible_to(designer)
    assert HUMAN_ONLY_NOTE in tools["putPolicy"].description
    assert HUMAN_ONLY_NOTE not in tools["createLabel"].description
    # A person's session is a service actor via MCP too: nothing more becomes visible.
    assert {t.name for t in catalog().visible_to(_caller("designer", actor="human"))} == {
        t.name for t in catalog().visible_to(designer)
    }


def test_access_rules_read_back_from_the_document() -> None:
    assert access_rule({"authenticated": False, "roles": [], "human": False}).permits(_caller())
    anyone = access_rule({"authenticated": True, "roles": ["any"], "human": False})
    assert anyone.roles is None and anyone.permits(_caller())
    approver = access_rule({"authenticated": True, "roles": ["admin", "approver"], "human": False})
    assert approver.permits(_caller("approver")) and not approver.permits(_caller("designer"))
    human = access_rule({"authenticated": True, "roles": ["admin"], "human": True})
    assert human.human and not human.permits(_caller("admin"))
    certificate = access_rule(
        {"authenticated": True, "roles": [], "human": False, "via": "runner client certificate"}
    )
    assert not certificate.permits(_caller("admin"))


def test_argument_errors_name_the_argument() -> None:
    tool = catalog().tools["createLabelFromDimensions"]
    assert tool.argument_errors({"body": {"name": "x", "width_mm": 10, "height_mm": 5}}) == []
    fields = tool.argument_errors({"body": {"name": "x", "width_mm": "wide"}, "extra": 1})
    assert [(f["field"], f["type"]) for f in fields] == [
        ("body.height_mm", "required"),
        ("body.width_mm", "type"),
        ("extra", "additionalProperties"),
    ]
    preview = catalog().tools["postLabelPreview"]
    # Into anyOf [body, null]: the field inside the body is named, not just "body".
    fields = preview.argument_errors({"labelId": "l", "body": {"variables": "x"}})
    assert [f["field"] for f in fields] == ["body.variables"]


# --- synthetic documents: what no operation needs yet ------------------------------------------

ACCESS = {"authenticated": True, "roles": ["designer"], "human": False}


def _document(operation: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "paths": {
            "/things/{thingId}": {
                "post": {
                    "operationId": "postThing",
                    "summary": "Do a thing",
                    "x-etikett-access": ACCESS,
                    "x-etikett-mcp": True,
                    **operation,
                },
                "get": {"operationId": "hidden", "x-etikett-mcp": False},
            }
        },
        "components": {"schemas": schemas},
    }


def test_nested_references_resolve_inline_with_their_siblings() -> None:
    schemas = {
        "Outer": {
            "type": "object",
            "properties": {
                "size": {"$ref": "#/components/schemas/Size", "description": "How big."},
                "sizes": {"type": "array", "items": {"$ref": "#/components/schemas/Size"}},
                "example": {"default": {"$ref": "not a reference, data"}},
            },
        },
        "Size": {"type": "object", "properties": {"w": {"$ref": "#/components/schemas/Mm"}}},
        "Mm": {"type": "number", "minimum": 0},
    }
    spec = _document(
        {
            "parameters": [
                {"$ref": "#/components/parameters/ThingId"},
                {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                {"name": "session", "in": "cookie", "schema": {"type": "string"}},
            ],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Outer"}}},
            },
        },
        schemas,
    )
    spec["components"]["parameters"] = {
        "ThingId": {"name": "thingId", "in": "path", "required": True, "schema": {"type": "string"}}
    }
    (tool,) = build(spec).tools.values()
    assert [(a.name, a.location) for a in tool.arguments] == [
        ("thingId", "path"),
        ("X-Trace", "header"),
    ]
    body = tool.input_schema["properties"]["body"]
    assert body["properties"]["size"] == {
        "type": "object",
        "properties": {"w": {"type": "number", "minimum": 0}},
        "description": "How big.",
    }
    assert body["properties"]["sizes"]["items"]["properties"]["w"]["minimum"] == 0
    assert body["properties"]["example"] == {"default": {"$ref": "not a reference, data"}}
    assert tool.input_schema["required"] == ["thingId", "body"]
    assert _dangling(tool.input_schema) == []
    assert "hidden" not in build(spec).tools


def test_a_recursive_schema_goes_to_local_defs_and_nothing_dangles() -> None:
    schemas = {
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            },
        }
    }
    spec = _document(
        {
            "requestBody": {
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}
            }
        },
        schemas,
    )
    (tool,) = build(spec).tools.values()
    schema = tool.input_schema
    assert set(schema["$defs"]) == {"Node"}
    assert _dangling(schema) == []
    Draft202012Validator.check_schema(schema)
    deep = {"body": {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}}
    assert [f["field"] for f in tool.argument_errors(deep)] == ["body.children.0.children.0.name"]


def test_multipart_file_fields_become_name_and_content_base64() -> None:
    binary = {"type": "string", "contentMediaType": "application/octet-stream"}
    schemas = {
        "Upload": {
            "type": "object",
            "properties": {
                "file": {**binary, "description": "The archive."},
                "more": {"type": "array", "items": {"type": "string", "format": "binary"}},
                "maybe": {"anyOf": [binary, {"type": "null"}]},
                "note": {"type": "string"},
            },
            "required": ["file", "note"],
        }
    }
    spec = _document(
        {
            "requestBody": {
                "required": True,
                "content": {MULTIPART: {"schema": {"$ref": "#/components/schemas/Upload"}}},
            }
        },
        schemas,
    )
    (tool,) = build(spec).tools.values()
    assert tool.body is not None and tool.body.media_type == MULTIPART
    assert tool.body.file_fields == {"file", "more", "maybe"}
    properties = tool.input_schema["properties"]["body"]["properties"]
    assert properties["file"]["properties"] == FILE_SCHEMA["properties"]
    assert properties["file"]["description"].startswith("The archive.")
    assert properties["more"]["items"]["required"] == ["name", "contentBase64"]
    assert properties["maybe"]["anyOf"][0]["required"] == ["name", "contentBase64"]
    assert properties["note"] == {"type": "string"}
    ok = {"body": {"note": "n", "file": {"name": "a.csv", "contentBase64": "YQ=="}}}
    assert tool.argument_errors(ok) == []
    bad = {"body": {"note": "n", "file": {"name": "a.csv"}}}
    assert [f["field"] for f in tool.argument_errors(bad)] == ["body.file.contentBase64"]


def test_documents_that_cannot_become_tools_are_refused() -> None:
    base = _document({}, {})
    nameless = copy.deepcopy(base)
    del nameless["paths"]["/things/{thingId}"]["post"]["operationId"]
    clash = _document(
        {"parameters": [{"name": "body", "in": "query", "schema": {"type": "string"}}]}, {}
    )
    xml = _document({"requestBody": {"content": {"application/xml": {"schema": {}}}}}, {})
    remote = _document(
        {"requestBody": {"content": {"application/json": {"schema": {"$ref": "x.json#/A"}}}}}, {}
    )
    nowhere = _document(
        {
            "requestBody": {
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/B"}}}
            }
        },
        {},
    )
    for spec in (nameless, clash, xml, remote, nowhere):
        with pytest.raises(CatalogError):
            build(spec)
    assert isinstance(build(base), Catalog)
    assert isinstance(build(base).tools["postThing"].access, Access)
