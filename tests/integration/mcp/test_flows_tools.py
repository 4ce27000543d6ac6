"""Flows through MCP: the same operations, roles and answers as REST, and the flow resources."""

from __future__ import annotations

from typing import Any

import pytest

from integration.mcp.client import answer, connect, problem, role_tokens
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
