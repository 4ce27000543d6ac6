"""Resources: the document schemas, the registries and the OpenAPI document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPError

from etikett_engine.dsl import flow, form, label
from integration.mcp.client import connect
from support.client import Api

pytestmark = pytest.mark.anyio

URIS = {
    "svc://registry/labels",
    "svc://registry/flows",
    "svc://schema/label",
    "svc://schema/flow",
    "svc://schema/form",
    "svc://openapi",
}


@pytest.fixture(scope="module")
def token(admin: Api) -> str:
    return admin.service_token("operator")["token"]


async def _read(client: Any, uri: str) -> Any:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert str(content.uri) == uri and content.mime_type == "application/json"
    return json.loads(content.text)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_resources_list_and_read(mcp_url: str, token: str, mode: str) -> None:
    async with connect(mcp_url, token, mode=mode) as client:
        listed = (await client.list_resources()).resources
        assert {str(resource.uri) for resource in listed} == URIS
        assert all(resource.description for resource in listed)

        assert await _read(client, "svc://schema/label") == label.json_schema()
        assert await _read(client, "svc://schema/form") == form.json_schema()
        flow_schema = await _read(client, "svc://schema/flow")
        assert flow_schema == flow.json_schema()
        for schema in (flow_schema, label.json_schema(), form.json_schema()):
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            Draft202012Validator.check_schema(schema)

        registry = await _read(client, "svc://registry/labels")
        types = {entry["type"]: entry["fields"] for entry in registry["object_types"]}
        assert set(types) == {"text", "barcode", "box", "line", "ellipse", "image"}
        assert types["barcode"]["symbology"]["required"] is True
        assert types["text"]["id"]["required"] is True
        assert "gs1-datamatrix" in registry["symbologies"] and registry["dpi"] == [203, 300, 600]
        flows = await _read(client, "svc://registry/flows")
        assert flows["schema"] == "svc://schema/flow"
        assert {item["type"] for item in flows["items"]} >= {"trigger.folder", "action.print"}

        openapi = await _read(client, "svc://openapi")
        assert openapi["openapi"].startswith("3.1") and "x-etikett-problem-codes" in openapi

        with pytest.raises(MCPError):
            await client.read_resource("svc://nothing")
