"""Flows through MCP: the same operations, roles and answers as REST, and the flow resources."""

from __future__ import annotations

from typing import Any

import pytest

from integration.mcp.client import answer, connect, problem, role_tokens, status
from support.client import Api, unique

pytestmark = pytest.mark.anyio

FLOW_TOOLS = {
    "listFlows",
    "createFlow",
    "getFlowRegistry",
    "getFlow",
    "patchFlow",
    "deleteFlow",
    "getFlowDocument",
    "patchFlowDocument",
    "listFlowVersions",
    "getFlowVersion",
    "postFlowLint",
    "postFlowDryRun",
    "listFlowRuns",
}
DOCUMENT: dict[str, Any] = {
    "nodes": [
        {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["f"]},
        {"id": "f", "type": "logic.filter", "condition": "record.n > 1", "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": '"n=" + string(record.n)'},
    ],
    "samples": [{"n": 2}, {"n": 1}],
}


@pytest.fixture(scope="module")
def tokens(admin: Api) -> dict[str, str]:
    return role_tokens(admin, ("designer", "operator", "approver"))


async def test_tools_by_role(mcp_url: str, tokens: dict[str, str]) -> None:
    for role, expected in (
        ("designer", FLOW_TOOLS),
        ("operator", FLOW_TOOLS - {"createFlow", "patchFlow", "deleteFlow", "patchFlowDocument"}),
        (
            "approver",
            FLOW_TOOLS
            - {"createFlow", "patchFlow", "deleteFlow", "patchFlowDocument"}
            - {"postFlowLint", "postFlowDryRun"},
        ),
    ):
        async with connect(mcp_url, tokens[role]) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
        assert names & FLOW_TOOLS == expected, role


async def test_an_agent_authors_lints_and_dry_runs_a_flow(
    mcp_url: str, tokens: dict[str, str], admin: Api
) -> None:
    async with connect(mcp_url, tokens["designer"]) as client:
        registry = answer(await client.call_tool("getFlowRegistry", {}))
        assert "logic.switch" in {item["type"] for item in registry["items"]}
        flow = answer(
            await client.call_tool(
                "createFlow", {"body": {"name": unique("mcpflow"), "document": DOCUMENT}}
            )
        )
        patched = answer(
            await client.call_tool(
                "patchFlowDocument",
                {
                    "flowId": flow["id"],
                    "body": {
                        "operations": [
                            {"op": "replace", "path": "/nodes/1/condition", "value": "record.n >"}
                        ],
                        "base_version": 1,
                    },
                },
            )
        )
        assert patched["version"] == 2
        assert [f["code"] for f in patched["findings"]] == ["flow.cel_invalid"]
        stale = await client.call_tool(
            "patchFlowDocument",
            {"flowId": flow["id"], "body": {"operations": [], "base_version": 1}},
        )
        problem(stale, "document.version_conflict")
        dry = answer(
            await client.call_tool("postFlowDryRun", {"flowId": flow["id"], "body": {"version": 1}})
        )
        assert [run["side_effects"] for run in dry["runs"]][1] == []
        assert dry["runs"][0]["side_effects"][0]["detail"]["message"] == "n=2"
    # The version an agent saved is the agent's: a service actor, as over REST.
    versions = admin.get(f"/flows/{flow['id']}/versions").json()["items"]
    assert versions[0]["author"]["actor"] == "service"

    async with connect(mcp_url, tokens["approver"]) as client:
        refused = await client.call_tool("postFlowDryRun", {"flowId": flow["id"], "body": {}})
        problem(refused, "auth.forbidden")


async def test_every_flow_tool_through_mcp_by_role(
    mcp_url: str, tokens: dict[str, str], admin: Api
) -> None:
    """The nine tools the authoring test does not call, each with the roles that may and may
    not use it: designers author, operators lint and dry-run, everyone reads."""
    async with connect(mcp_url, tokens["designer"]) as designer:
        flow = answer(
            await designer.call_tool(
                "createFlow", {"body": {"name": unique("mcpall"), "document": DOCUMENT}}
            )
        )
        renamed = answer(
            await designer.call_tool(
                "patchFlow",
                {"flowId": flow["id"], "body": {"name": flow["name"] + " (renamed)"}},
            )
        )
        assert renamed["name"].endswith("(renamed)") and renamed["id"] == flow["id"]
        answer(
            await designer.call_tool(
                "patchFlowDocument",
                {
                    "flowId": flow["id"],
                    "body": {
                        "operations": [{"op": "remove", "path": "/samples/1"}],
                        "comment": "one sample",
                    },
                },
            )
        )

    async with connect(mcp_url, tokens["operator"]) as operator:
        lint = answer(await operator.call_tool("postFlowLint", {"flowId": flow["id"], "body": {}}))
        assert lint == {"version": 2, "findings": [], "record_fields": None}
        # An agent lints a document it has not saved, against the fields it knows records have.
        unsaved = {
            **DOCUMENT,
            "nodes": [*DOCUMENT["nodes"][:2], {**DOCUMENT["nodes"][2], "message": "record.m"}],
        }
        body = {"document": unsaved, "scope": {"record": ["n"]}}
        lint = answer(
            await operator.call_tool("postFlowLint", {"flowId": flow["id"], "body": body})
        )
        assert lint["version"] is None and lint["record_fields"]["log"] == ["n"]
        assert [f["code"] for f in lint["findings"]] == ["flow.cel_name_unknown"]
        refused = await operator.call_tool(
            "patchFlow", {"flowId": flow["id"], "body": {"name": "x"}}
        )
        problem(refused, "auth.forbidden")
        problem(await operator.call_tool("deleteFlow", {"flowId": flow["id"]}), "auth.forbidden")

    async with connect(mcp_url, tokens["approver"]) as reader:
        listed = answer(await reader.call_tool("listFlows", {"limit": 200}))
        assert flow["id"] in {item["id"] for item in listed["items"]}
        read = answer(await reader.call_tool("getFlow", {"flowId": flow["id"]}))
        assert read["latest_version"] == 2
        document = answer(
            await reader.call_tool("getFlowDocument", {"flowId": flow["id"], "version": 1})
        )
        assert document["version"] == 1 and document["document"]["samples"] == DOCUMENT["samples"]
        versions = answer(await reader.call_tool("listFlowVersions", {"flowId": flow["id"]}))
        assert [v["version"] for v in versions["items"]] == [2, 1]
        assert versions["items"][0]["comment"] == "one sample"
        assert versions["items"][0]["author"]["actor"] == "service"
        two = answer(await reader.call_tool("getFlowVersion", {"flowId": flow["id"], "version": 2}))
        assert two["document"]["samples"] == [{"n": 2}]
        runs = answer(await reader.call_tool("listFlowRuns", {"flowId": flow["id"]}))
        assert runs == {"items": [], "next_cursor": None}  # dry runs are not recorded
        problem(
            await reader.call_tool("postFlowLint", {"flowId": flow["id"], "body": {}}),
            "auth.forbidden",
        )
        missing = await reader.call_tool("getFlowVersion", {"flowId": flow["id"], "version": 9})
        problem(missing, "flow.version_not_found")

    async with connect(mcp_url, tokens["designer"]) as designer:
        deleted = await designer.call_tool("deleteFlow", {"flowId": flow["id"]})
        assert not deleted.is_error and status(deleted)["status"] == 204
    assert admin.get(f"/flows/{flow['id']}").status_code == 404
