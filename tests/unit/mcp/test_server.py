"""The MCP handlers: a tool call never raises (every failure is an `isError` result), and the
server announces the first label workflow."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from etikett.domain.actors import Caller
from etikett.mcp import invoke, server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _context(**scope: Any) -> Any:
    return SimpleNamespace(request=SimpleNamespace(scope=scope))


def _problem(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


CALLER = Caller(actor="service", subject="bot", roles=frozenset({"designer"}))
SCOPE = {server.CALLER_KEY: CALLER, server.TOKEN_KEY: "etks_x", server.REQUEST_ID_KEY: "req-1"}


async def test_an_exception_in_a_tool_call_is_an_is_error_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store is down")

    monkeypatch.setattr(invoke, "execute", broken)
    params = types.CallToolRequestParams(name="getWhoami", arguments={})
    result = await server.call_tool(_context(**SCOPE), params)
    problem = _problem(result)
    assert (problem["code"], problem["status"]) == ("internal.error", 500)
    assert problem["params"] == {"request_id": "req-1"}
    assert "the store is down" not in json.dumps(problem)  # internals stay in the logs
    # Even without the endpoint's scope (a misconfiguration), no JSON-RPC error escapes.
    stray = await server.call_tool(_context(), params)
    assert _problem(stray)["code"] == "internal.error"


async def test_arguments_are_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    async def unexpected(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("must not run")

    monkeypatch.setattr(invoke, "execute", unexpected)
    params = types.CallToolRequestParams(name="getLabel", arguments={"labelid": "lbl_1"})
    problem = _problem(await server.call_tool(_context(**SCOPE), params))
    assert problem["code"] == "request.invalid"
    assert [f["field"] for f in problem["params"]["fields"]] == ["labelId", "labelid"]
    unknown = types.CallToolRequestParams(name="dropDatabase", arguments={})
    problem = _problem(await server.call_tool(_context(**SCOPE), unknown))
    assert problem["params"]["fields"][0]["field"] == "name"


async def test_tools_list_follows_the_callers_roles() -> None:
    listed = await server.list_tools(_context(**SCOPE), None)
    names = {tool.name for tool in listed.tools}
    assert "createLabel" in names and "listUsers" not in names
    assert (listed.ttl_ms, listed.cache_scope) == (0, "private")


def test_the_server_announces_the_workflow_and_the_id_rule() -> None:
    instructions = server.server().instructions or ""
    steps = ["listLabelVorlagen", "createLabelFromVorlage", "getLabelDocument"]
    steps += ["patchLabelDocument", "postLabelPreview", "postLabelStatus"]
    positions = [instructions.index(step) for step in steps]
    assert positions == sorted(positions)
    assert "svc://schema/label" in instructions and "node `id`" in instructions
