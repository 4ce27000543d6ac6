"""The /mcp endpoint's own parts: the session manager held per event loop, `POST /mcp` served before
the mcp app's stack, and the schema the SDK checks `Mcp-Param-*` headers against."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import validate_mcp_param_headers
from starlette.types import Receive, Scope, Send

from etikett.api.app import create_app
from etikett.api.groups import routes_of
from etikett.mcp import catalog, http, routes, server
from etikett.mcp import manager as managers


def _counting() -> tuple[list[StreamableHTTPSessionManager], Any]:
    made: list[StreamableHTTPSessionManager] = []

    def make() -> StreamableHTTPSessionManager:
        made.append(http._manager())
        return made[-1]

    return made, make


def test_one_manager_runs_per_event_loop_and_a_stopped_one_is_replaced() -> None:
    made, make = _counting()

    async def three_requests() -> list[StreamableHTTPSessionManager]:
        return list(await asyncio.gather(*(managers.running(make) for _ in range(3))))

    loop = asyncio.new_event_loop()
    try:
        first = loop.run_until_complete(three_requests())
        # Concurrent first requests wait for one manager; later invocations on the loop reuse it.
        assert first == [made[0]] * 3
        assert loop.run_until_complete(three_requests()) == [made[0]] * 3
        # Its run ended (a crash, never a request's end): the next request starts a new one.
        held = managers._held[loop]
        assert held.task is not None
        held.task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        assert loop.run_until_complete(managers.running(make)) is made[1]
    finally:
        loop.close()
    other = asyncio.new_event_loop()
    try:  # another loop (another thread of local mode): its own manager
        assert other.run_until_complete(managers.running(make)) is made[2]
    finally:
        other.close()
    assert len(made) == 3
    assert loop not in managers._held  # a closed loop's manager went when the next was made


def _post(app: Any, path: str = "/mcp") -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://mcp.test") as client:
            return await client.post(path, json={}, headers={"Authorization": "Bearer etks_x"})

    return asyncio.run(go())


def test_an_unexpected_failure_of_the_endpoint_is_a_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(scope: Scope, receive: Receive, send: Send) -> None:
        scope[server.REQUEST_ID_KEY] = "req-9"
        raise RuntimeError("the SDK broke")

    monkeypatch.setattr(http, "endpoint", broken)
    answer = _post(http.served_first(create_app(routes_of("mcp")), routes.PATH))
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "internal.error"
    assert answer.json()["params"] == {"request_id": "req-9"}
    assert "the SDK broke" not in answer.text


def test_only_post_mcp_skips_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    monkeypatch.setattr(http, "endpoint", endpoint)
    app = http.served_first(create_app(routes_of("mcp")), routes.PATH)
    assert _post(app).status_code == 204
    assert _post(app, "/mcp/").status_code == 307  # the app's answer, not the endpoint's

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://mcp.test") as client:
            return await client.get("/mcp")

    assert asyncio.run(get()).status_code == 405  # the app's refusal of GET
    assert seen == ["/mcp"]


@pytest.mark.parametrize("name", ["getLabelDocument", "postLabelPreview", "listLabels"])
def test_the_sdk_reaches_the_same_header_verdict_on_the_lean_schema(name: str) -> None:
    full = catalog.catalog().input_schema(name)
    lean = server._tool_input_schema(name)
    assert full is not None and lean == server.UNANNOTATED  # none of ours is annotated
    arguments = {"labelId": "01J0000000000000000000000", "body": {"variables": {}}}
    for headers in ({}, {"mcp-param-labelid": "x"}, {"mcp-param-x": "1", "mcp-param-X": "2"}):
        assert validate_mcp_param_headers(lean, arguments, headers) == validate_mcp_param_headers(
            full, arguments, headers
        )


def test_an_annotated_schema_is_handed_over_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    annotated = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    monkeypatch.setattr(
        server.catalogs, "catalog", lambda: SimpleNamespace(input_schema=lambda name: annotated)
    )
    server._tool_input_schema.cache_clear()
    try:
        assert server._tool_input_schema("annotatedTool") is annotated
    finally:
        server._tool_input_schema.cache_clear()
    # With an annotation the SDK's verdict needs the schema: a missing header is refused.
    assert validate_mcp_param_headers(annotated, {"region": "eu"}, {}) is not None
