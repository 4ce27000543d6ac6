"""Deployments through MCP: the tools each role sees, and the human-approval policy holding for
agents — a never-deployed version and a stage approval need a person; a rollback does not."""

from __future__ import annotations

from typing import Any

import pytest

from integration.mcp.client import answer, connect, problem, role_tokens
from support.client import Api, unique

pytestmark = pytest.mark.anyio

DEPLOYMENT_TOOLS = {
    "listDeployments",
    "createDeployment",
    "getDeployment",
    "postDeploymentApproval",
    "postDeploymentRollback",
    "getDeploymentContext",
    "putDeploymentContextParameter",
    "deleteDeploymentContextParameter",
    "putDeploymentOfflinePolicy",
    "getDeploymentPrinters",
    "putDeploymentPrinter",
    "deleteDeploymentPrinter",
    "listRunnerGroupDeployments",
}
READ = {"listDeployments", "getDeployment", "getDeploymentPrinters", "listRunnerGroupDeployments"}
DOCUMENT: dict[str, Any] = {
    "nodes": [
        {"id": "tick", "type": "trigger.schedule", "every_s": 60, "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": "context.site"},
    ]
}


@pytest.fixture(scope="module")
def tokens(admin: Api) -> dict[str, str]:
    return role_tokens(admin, ("designer", "operator", "approver"))


async def test_tools_by_role(mcp_url: str, tokens: dict[str, str]) -> None:
    for role, expected in (
        ("operator", DEPLOYMENT_TOOLS - {"postDeploymentApproval"}),
        ("approver", READ | {"postDeploymentApproval"}),
        ("designer", READ | {"getDeploymentContext"}),
    ):
        async with connect(mcp_url, tokens[role]) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
        assert names & DEPLOYMENT_TOOLS == expected, role


async def test_the_policy_holds_for_agents_and_rollback_is_theirs(
    mcp_url: str, tokens: dict[str, str], admin: Api
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("mcpdep")}).json()["id"]
    other = admin.post("/runner-groups", json={"name": unique("mcpdep")}).json()["id"]
    flow = admin.post("/flows", json={"name": unique("mcpdep"), "document": DOCUMENT}).json()
    operator = admin.user_session(["operator"])[1]
    approver = admin.user_session(["approver"])[1]
    body = {"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group]}]}

    async with connect(mcp_url, tokens["operator"]) as agent:
        refused = problem(
            await agent.call_tool("createDeployment", {"body": body}), "policy.human_required"
        )
        assert refused["params"]["version"] == 1
    assert admin.get("/deployments", params={"flow_id": flow["id"]}).json()["items"] == []

    created = operator.post("/deployments", json={**body, "context": {"site": "A"}})
    assert created.status_code == 201, created.text
    deployment = created.json()
    async with connect(mcp_url, tokens["approver"]) as agent:
        approval = await agent.call_tool(
            "postDeploymentApproval", {"deploymentId": deployment["id"], "body": {"stage": 0}}
        )
        problem(approval, "policy.human_required")
        read = answer(await agent.call_tool("getDeployment", {"deploymentId": deployment["id"]}))
        assert read["stages"][0]["status"] == "awaiting_approval"
        problem(
            await agent.call_tool("getDeploymentContext", {"deploymentId": deployment["id"]}),
            "auth.forbidden",
        )
    approved = approver.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200 and approved.json()["status"] == "active"

    async with connect(mcp_url, tokens["operator"]) as agent:
        # Deployed once by people: an agent may deploy that version again, and roll it back.
        again = answer(
            await agent.call_tool(
                "createDeployment",
                {"body": {**body, "stages": [{"group_ids": [other]}]}},
            )
        )
        assert again["author"]["actor"] == "service"
        put = answer(
            await agent.call_tool(
                "putDeploymentContextParameter",
                {"deploymentId": again["id"], "name": "site", "body": {"value": "B"}},
            )
        )
        assert put["value"] == "B"
        rolled = answer(
            await agent.call_tool(
                "postDeploymentRollback",
                {"deploymentId": deployment["id"], "body": {"comment": "agent rollback"}},
            )
        )
        assert rolled["status"] == "rolled_back"
        listed = answer(await agent.call_tool("listDeployments", {"flow_id": flow["id"]}))
        assert {d["id"] for d in listed["items"]} == {deployment["id"], again["id"]}

    async with connect(mcp_url, tokens["designer"]) as reader:
        context = answer(
            await reader.call_tool("getDeploymentContext", {"deploymentId": again["id"]})
        )
        assert [(c["name"], c["value"]) for c in context["items"]] == [("site", "B")]
        of_group = answer(await reader.call_tool("listRunnerGroupDeployments", {"groupId": group}))
        assert [d["id"] for d in of_group["items"]] == [deployment["id"]]
    entry = admin.get("/audit-log", params={"target": deployment["id"]}).json()["items"][0]
    assert (entry["operation_id"], entry["actor"]) == ("postDeploymentRollback", "service")
