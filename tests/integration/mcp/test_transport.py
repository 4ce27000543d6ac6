"""The /mcp endpoint over HTTP: bearer tokens only (401 before the protocol), POST only (405), the
exact path, and both protocol eras: the SDK client's default (2026-07-28) and the 2025 handshake,
also as raw JSON-RPC posts."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from integration.mcp.client import (
    ACCEPT,
    HANDSHAKE,
    MODERN,
    RawMcp,
    answer,
    connect,
    expected_tools,
    problem,
)
from support.client import PASSWORD, Api
from support.client import problem as http_problem

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}


@pytest.fixture(scope="module")
def designer_token(admin: Api) -> str:
    return admin.service_token("designer")["token"]


def test_get_is_405_allowing_post(mcp_url: str, designer_token: str) -> None:
    response = httpx.get(mcp_url, headers={"Authorization": f"Bearer {designer_token}"})
    body = http_problem(response, 405, "route.method_not_allowed")
    assert response.headers["allow"] == "POST"
    assert body["params"]["allowed"] == ["POST"]


def test_without_a_bearer_token_the_answer_is_401(
    mcp_url: str, admin: Api, designer_token: str
) -> None:
    message = {**INITIALIZE, "params": {"protocolVersion": HANDSHAKE, "capabilities": {}}}
    user = admin.create_user(["admin"])
    session = admin.login(user["username"])
    for headers, code in (
        ({}, "auth.unauthenticated"),
        # A browser's session cookie is ignored: the console's cookie never opens /mcp.
        ({"Cookie": f"etikett_session={session}"}, "auth.unauthenticated"),
        ({"Authorization": f"Basic {designer_token}"}, "auth.invalid_token"),
        ({"Authorization": "Bearer etks_not-a-real-token"}, "auth.invalid_token"),
    ):
        response = httpx.post(mcp_url, json=message, headers={"Accept": ACCEPT, **headers})
        http_problem(response, 401, code)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "mcp-session-id" not in response.headers


def test_the_path_is_exactly_mcp(mcp_url: str, designer_token: str) -> None:
    headers = {"Authorization": f"Bearer {designer_token}", "Accept": ACCEPT}
    response = httpx.post(f"{mcp_url}/", json=INITIALIZE, headers=headers)
    http_problem(response, 404, "route.not_found")  # no redirect to /mcp/ or back
    # Other methods reach the $default route (misc), which knows /mcp: a 405, not a 404.
    deleted = httpx.delete(mcp_url, headers=headers)
    http_problem(deleted, 405, "route.method_not_allowed")
    assert "POST" in deleted.headers["allow"]


def test_mcp_is_no_operation_of_the_openapi_document(document: dict[str, Any]) -> None:
    assert not [path for path in document["paths"] if "mcp" in path]


async def test_sdk_default_client_speaks_2026(
    mcp_url: str, designer_token: str, document: dict[str, Any]
) -> None:
    async with connect(mcp_url, designer_token) as client:
        assert client.protocol_version == MODERN
        _assert_instructions(client.instructions)
        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} == expected_tools(document, {"designer"})
        whoami = answer(await client.call_tool("getWhoami", {}))
        assert whoami["actor"] == "service"


async def test_sdk_client_with_the_2025_handshake(
    mcp_url: str, designer_token: str, document: dict[str, Any]
) -> None:
    async with connect(mcp_url, designer_token, mode="legacy") as client:
        assert client.protocol_version == HANDSHAKE
        _assert_instructions(client.instructions)
        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} == expected_tools(document, {"designer"})
        assert answer(await client.call_tool("getVersion", {}))["api_version"]


def test_raw_json_rpc_2025_handshake(mcp_url: str, designer_token: str) -> None:
    raw = RawMcp(mcp_url, designer_token)
    initialized = raw.post(
        "initialize",
        {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    )
    assert initialized.status_code == 200, initialized.text
    assert initialized.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in initialized.headers  # stateless
    result = initialized.json()["result"]
    assert result["protocolVersion"] == HANDSHAKE
    assert result["serverInfo"]["name"] == "etikett"
    assert {"tools", "resources"} <= set(result["capabilities"])
    _assert_instructions(result["instructions"])

    version = {"MCP-Protocol-Version": HANDSHAKE}
    assert raw.notify("notifications/initialized", **version).status_code == 202
    listed = raw.post("tools/list", {}, **version).json()["result"]["tools"]
    patch = next(tool for tool in listed if tool["name"] == "patchLabelDocument")
    assert patch["inputSchema"]["required"] == ["labelId", "body"]
    called = raw.post("tools/call", {"name": "getWhoami", "arguments": {}}, **version).json()
    result = called["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["actor"] == "service"
    assert json.loads(result["content"][1]["text"])["status"] == 200

    # Stateless: a request without any handshake is served too (curl, scripts).
    bare = RawMcp(mcp_url, designer_token).post("tools/list", {})
    assert bare.status_code == 200 and bare.json()["result"]["tools"]


def test_raw_json_rpc_2026_requests(mcp_url: str, designer_token: str) -> None:
    raw = RawMcp(mcp_url, designer_token)
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {"MCP-Protocol-Version": MODERN}
    discovered = raw.post(
        "server/discover", {"_meta": meta}, **headers, **{"Mcp-Method": "server/discover"}
    )
    assert discovered.status_code == 200, discovered.text
    _assert_instructions(discovered.json()["result"]["instructions"])
    assert MODERN in discovered.json()["result"]["supportedVersions"]
    called = raw.post(
        "tools/call",
        {"_meta": meta, "name": "getLabel", "arguments": {"labelId": "lbl_nope"}},
        **headers,
        **{"Mcp-Method": "tools/call", "Mcp-Name": "getLabel"},
    )
    result = called.json()["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["code"] == "label.not_found"
    assert json.loads(result["content"][1]["text"])["status"] == 404


async def test_every_mcp_request_is_a_service_actor(mcp_url: str, admin: Api) -> None:
    """Even a person's session token: via MCP it is an agent, so human-only operations refuse."""
    user = admin.create_user(["admin"], password=PASSWORD)
    session = admin.login(user["username"])
    async with connect(mcp_url, session) as client:
        whoami = answer(await client.call_tool("getWhoami", {}))
        assert (whoami["actor"], whoami["subject"]) == ("service", user["username"])
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"putPolicy", "postAuthPassword"} <= names  # listed for its roles ...
        refused = await client.call_tool(
            "putPolicy", {"name": "aiFreigabePflicht", "body": {"enabled": False}}
        )
        problem(refused, "auth.human_required")  # ... and refused: a token is never a person
        changed = await client.call_tool(
            "postAuthPassword",
            {"body": {"current_password": PASSWORD, "new_password": "another long one"}},
        )
        problem(changed, "auth.human_required")
    assert admin.get("/policies").json()["items"][0]["enabled"] is True


def _assert_instructions(text: str | None) -> None:
    assert text
    for step in (
        "listLabelVorlagen",
        "createLabelFromVorlage",
        "getLabelDocument",
        "svc://schema/label",
        "patchLabelDocument",
        "postLabelPreview",
        "approves",
    ):
        assert step in text, step
    assert "Keep every object" in text and "node `id`" in text
