"""Tools: generated from the OpenAPI document, filtered by the caller's current roles, executed as
the very same operations (roles checked again at call time), failures as `isError` with codes."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from integration.mcp.client import (
    RawMcp,
    answer,
    connect,
    expected_tools,
    problem,
    role_tokens,
    status,
)
from support.client import Api, unique
from support.client import problem as http_problem

pytestmark = pytest.mark.anyio

ROLES = ("designer", "operator", "approver", "admin")
NEVER = {"login", "logout", "postAuthSetup", "getAuthSetup", "getOpenApiDocument"}


@pytest.fixture(scope="module")
def tokens(admin: Api) -> dict[str, str]:
    return role_tokens(admin, ROLES)


async def _names(url: str, token: str) -> set[str]:
    async with connect(url, token) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("role", ROLES)
async def test_each_role_sees_exactly_its_tools(
    mcp_url: str, tokens: dict[str, str], document: dict[str, Any], role: str
) -> None:
    names = await _names(mcp_url, tokens[role])
    assert names == expected_tools(document, {role})
    assert not names & NEVER
    concrete = {
        "designer": (
            {"listLabelVorlagen", "createLabelFromVorlage", "patchLabelDocument", "getWhoami"},
            {"postLabelStatus", "listUsers", "listAuditLog", "createApiToken", "putPolicy"},
        ),
        "operator": (
            {"listLabels", "postLabelPreview", "getWhoami"},
            {"createLabel", "postLabelStatus", "listUsers", "putPolicy"},
        ),
        "approver": (
            {"postLabelStatus", "listAuditLog", "getLabelDocument"},
            {"createLabel", "patchLabelDocument", "listUsers", "putPolicy"},
        ),
        "admin": (
            {"createUser", "createApiToken", "putPolicy", "postLabelStatus", "createLabel"},
            set(),
        ),
    }[role]
    visible, hidden = concrete
    assert visible <= names and not hidden & names


async def test_admin_sees_every_mcp_operation(
    mcp_url: str, tokens: dict[str, str], document: dict[str, Any]
) -> None:
    operations = {
        op["operationId"]: op["x-etikett-mcp"]
        for item in document["paths"].values()
        for op in item.values()
    }
    names = await _names(mcp_url, tokens["admin"])
    assert names == {name for name, mcp in operations.items() if mcp}


async def test_a_person_with_two_roles_sees_both(
    mcp_url: str, admin: Api, document: dict[str, Any]
) -> None:
    _, person = admin.user_session(["designer", "approver"])
    names = await _names(mcp_url, str(person.token))
    assert names == expected_tools(document, {"designer", "approver"})


async def test_tools_carry_the_operation_contract(
    mcp_url: str, tokens: dict[str, str], document: dict[str, Any]
) -> None:
    operations = {
        op["operationId"]: op for item in document["paths"].values() for op in item.values()
    }
    async with connect(mcp_url, tokens["admin"]) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in tools.items():
        operation = operations[name]
        assert tool.description and tool.description.startswith(operation["summary"]), name
        if operation.get("description"):
            assert operation["description"] in tool.description, name
        assert tool.input_schema["type"] == "object"
        assert "$ref" not in str(tool.input_schema), name
    preview = tools["postLabelPreview"].input_schema
    assert set(preview["properties"]) == {"labelId", "stufe", "version", "body"}
    assert preview["required"] == ["labelId"]
    dimensions = tools["createLabelFromDimensions"].input_schema
    assert {"name", "width_mm", "height_mm", "dpi"} <= set(
        dimensions["properties"]["body"]["properties"]
    )
    assert tools["getLabelDocument"].annotations.read_only_hint is True
    assert tools["deleteLabel"].annotations.destructive_hint is True


async def test_failures_are_is_error_with_problem_codes(
    mcp_url: str, tokens: dict[str, str]
) -> None:
    async with connect(mcp_url, tokens["designer"]) as client:
        missing = await client.call_tool("getLabel", {"labelId": "lbl_nope"})
        assert problem(missing, "label.not_found")["params"] == {"label_id": "lbl_nope"}
        assert status(missing)["status"] == 404

        # Not listed for a designer, but callable: the call is checked and refused.
        forbidden = await client.call_tool("listUsers", {})
        body = problem(forbidden, "auth.forbidden")
        assert body["params"]["required"] == ["admin"]
        assert status(forbidden)["status"] == 403

        created = answer(
            await client.call_tool(
                "createLabelFromDimensions",
                {"body": {"name": unique("mcp"), "width_mm": 50, "height_mm": 30}},
            )
        )
        invalid = await client.call_tool(
            "patchLabelDocument",
            {
                "labelId": created["id"],
                "body": {"operations": [{"op": "add", "path": "/colour", "value": "red"}]},
            },
        )
        body = problem(invalid, "document.invalid")
        assert [error["path"] for error in body["params"]["errors"]] == ["/colour"]
        assert status(invalid)["status"] == 422

        for arguments, field in (
            ({}, "labelId"),
            ({"labelId": created["id"], "labelid": "x"}, "labelid"),
            ({"labelId": 7}, "labelId"),
            ({"labelId": created["id"], "version": 0}, "version"),
        ):
            refused = await client.call_tool("getLabelDocument", arguments)
            body = problem(refused, "request.invalid")
            assert [f["field"] for f in body["params"]["fields"]] == [field], arguments
            assert field in body["detail"]
        wrong_body = await client.call_tool(
            "createLabelFromDimensions", {"body": {"name": "x", "width_mm": "wide"}}
        )
        fields = {f["field"] for f in problem(wrong_body, "request.invalid")["params"]["fields"]}
        assert fields == {"body.width_mm", "body.height_mm"}

        unknown = await client.call_tool("noSuchTool", {})
        assert problem(unknown, "request.invalid")["params"]["fields"][0]["field"] == "name"


async def test_revoking_a_token_takes_effect_between_two_calls(mcp_url: str, admin: Api) -> None:
    issued = admin.service_token("designer")
    async with connect(mcp_url, issued["token"]) as client:
        assert answer(await client.call_tool("getWhoami", {}))["token_id"] == issued["id"]
        assert admin.delete(f"/auth/tokens/{issued['id']}").status_code == 204
        # An invalid token is refused at the door, as MCP's authorization rules say: HTTP 401.
        with pytest.raises(MCPError):
            await client.call_tool("getWhoami", {})
    raw = RawMcp(mcp_url, issued["token"]).post("tools/call", {"name": "getWhoami"})
    http_problem(raw, 401, "auth.invalid_token")
    assert raw.headers["www-authenticate"].startswith("Bearer")


async def test_removing_a_role_takes_effect_between_two_calls(mcp_url: str, admin: Api) -> None:
    user, person = admin.user_session(["designer", "operator"])
    async with connect(mcp_url, str(person.token)) as client:
        made = await client.call_tool("createLabel", {"body": {"name": unique("role")}})
        assert status(made)["status"] == 201
        removed = admin.delete(f"/users/{user['id']}/roles/designer")
        assert removed.status_code in (200, 204), removed.text
        refused = await client.call_tool("createLabel", {"body": {"name": unique("role")}})
        assert problem(refused, "auth.forbidden")["params"]["held"] == ["operator"]
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "createLabel" not in names and "listLabels" in names
