"""The credential and AI operations as MCP tools: listed by role (the master-key export never),
the same answers as REST, and a Copilot's proposal saved by an agent stays a draft that only a
person may approve."""

from __future__ import annotations

import json
from typing import Any

import pytest

from integration.mcp.client import answer, connect, problem, status
from support.client import Api, unique
from support.model_server import ModelServer, tool_answer
from support.server import DevServer

from .conftest import KEY, language_model

pytestmark = pytest.mark.anyio

CREDENTIAL_TOOLS = {"listCredentials", "createCredential", "deleteCredential", "postCredentialTest"}
DESIGNER_AI = {"aiLintErklaerung", "postLabelCopilot", "postFormCopilot", "postFlowCopilot"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def mcp_url(ai_server: DevServer) -> str:
    return f"{ai_server.url}/mcp"


@pytest.fixture(scope="module")
def tokens(root: Api) -> dict[str, str]:
    return {
        role: root.service_token(role)["token"]
        for role in ("designer", "operator", "approver", "admin")
    }


async def test_tools_by_role(mcp_url: str, tokens: dict[str, str]) -> None:
    expected = {
        "designer": DESIGNER_AI,
        "operator": {"aiLintErklaerung"},
        "approver": {"aiLogQA"},
        "admin": DESIGNER_AI | {"aiLogQA"} | CREDENTIAL_TOOLS,
    }
    for role, tools in expected.items():
        async with connect(mcp_url, tokens[role]) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
        assert names & (DESIGNER_AI | {"aiLogQA"} | CREDENTIAL_TOOLS) == tools, role
        assert "exportCredentialMasterKey" not in names


async def test_credentials_through_mcp_never_show_secrets(
    mcp_url: str, tokens: dict[str, str], model: ModelServer
) -> None:
    ref = unique("mcp")
    async with connect(mcp_url, tokens["admin"]) as client:
        created = answer(
            await client.call_tool(
                "createCredential",
                {
                    "body": {
                        "ref": ref,
                        "kind": "language-model",
                        "provider": "openai-chat",
                        "model": "m",
                        "endpoint": model.endpoint("openai-chat"),
                        "apiKey": KEY,
                    }
                },
            )
        )
        assert created["has_secret"] is True
        listed = await client.call_tool("listCredentials", {"limit": 200})
        tested = answer(await client.call_tool("postCredentialTest", {"ref": ref}))
        assert tested["ok"] is True
        assert KEY not in json.dumps([block.model_dump() for block in listed.content])
        assert status(await client.call_tool("deleteCredential", {"ref": ref}))["status"] == 204
        problem(await client.call_tool("postCredentialTest", {"ref": ref}), "credential.not_found")
    async with connect(mcp_url, tokens["designer"]) as client:
        problem(await client.call_tool("listCredentials", {}), "auth.forbidden")


async def test_an_agent_saves_a_copilot_proposal_as_a_draft(
    mcp_url: str, tokens: dict[str, str], root: Api, people: dict[str, Api], model: ModelServer
) -> None:
    language_model(root, model, "anthropic-messages", default=True)
    designer = people["designer"]
    label = designer.post(
        "/labels/from-dimensions", json={"name": unique("mcpai"), "width_mm": 50, "height_mm": 25}
    ).json()
    frame: dict[str, Any] = {
        "op": "add",
        "path": "/objects/-",
        "value": {
            "id": "frame",
            "type": "box",
            "x_mm": 1,
            "y_mm": 1,
            "width_mm": 48,
            "height_mm": 23,
        },
    }
    model.then(
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [frame], "explanation": "A frame."}
        )
    )
    async with connect(mcp_url, tokens["designer"]) as client:
        proposal = answer(
            await client.call_tool(
                "postLabelCopilot", {"labelId": label["id"], "body": {"instruction": "A frame."}}
            )
        )
        assert proposal["saved"] is False and proposal["preview_png_base64"]
        assert designer.get(f"/labels/{label['id']}").json()["latest_version"] == 1
        saved = answer(
            await client.call_tool(
                "patchLabelDocument",
                {
                    "labelId": label["id"],
                    "body": {
                        "operations": proposal["proposal"]["operations"],
                        "base_version": proposal["proposal"]["base_version"],
                    },
                },
            )
        )
        assert saved["status"] == "draft" and saved["version"] == 2
    async with connect(mcp_url, tokens["admin"]) as client:
        refused = await client.call_tool(
            "postLabelStatus",
            {"labelId": label["id"], "body": {"version": 2, "status": "approved"}},
        )
        problem(refused, "policy.human_required")
    approved = root.post(f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"})
    assert approved.status_code == 200, approved.text


async def test_log_questions_through_mcp(
    mcp_url: str, tokens: dict[str, str], root: Api, model: ModelServer
) -> None:
    language_model(root, model, "openai-chat", default=True)
    model.then(
        lambda seen: tool_answer(
            seen, "answer_question", {"answer": "Setup.", "cited_entry_ids": []}
        )
    )
    async with connect(mcp_url, tokens["approver"]) as client:
        result = answer(
            await client.call_tool(
                "aiLogQA",
                {"body": {"question": "Who set up?", "filters": {"operation": "postAuthSetup"}}},
            )
        )
    assert result["entries_considered"] == 1 and result["answer"] == "Setup."
    assert "postAuthSetup" in model.requests[0].text


async def test_a_secret_that_does_not_fit_is_not_quoted_back(
    mcp_url: str, tokens: dict[str, str], model: ModelServer
) -> None:
    long_key = "sk-" + "Q" * 9000
    bodies = [
        {"ref": unique("long"), "kind": "secret", "value": long_key},
        {
            "ref": unique("long"),
            "kind": "language-model",
            "provider": "openai-chat",
            "model": "m",
            "endpoint": model.endpoint("openai-chat"),
            "apiKey": long_key,
        },
    ]
    async with connect(mcp_url, tokens["admin"]) as client:
        for body in bodies:
            result = await client.call_tool("createCredential", {"body": body})
            shown = json.dumps(problem(result, "request.invalid"))
            assert "QQQQ" not in shown, shown
