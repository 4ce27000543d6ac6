"""Helpers for the MCP tests: the SDK's client over real HTTP with a bearer token, raw JSON-RPC
posts, and readers for tool results (the answer, the status block, the problem)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from support.client import Api

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@asynccontextmanager
async def connect(url: str, token: str, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK client (its default, the 2026-07-28 protocol; or mode="legacy": `initialize`)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def answer(result: types.CallToolResult) -> Any:
    """The operation's JSON answer (the first block)."""
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return json.loads(block.text)


def status(result: types.CallToolResult) -> dict[str, Any]:
    """The status block: HTTP status, content type and the relevant headers."""
    block = result.content[-1]
    assert isinstance(block, types.TextContent), block
    summary = json.loads(block.text)
    assert set(summary) == {"status", "content_type", "headers"}, summary
    return summary


def problem(result: types.CallToolResult, code: str) -> dict[str, Any]:
    """Assert `result` is an `isError` result with this problem code; answer the problem."""
    assert result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    body = json.loads(block.text)
    assert body["code"] == code, body
    assert isinstance(body["params"], dict)
    return body


def expected_tools(document: dict[str, Any], roles: set[str]) -> set[str]:
    """The tools a service actor with `roles` must see, computed from the OpenAPI document alone:
    operations with x-etikett-mcp whose x-etikett-access roles the caller holds (admin holds all).
    An operation only a person may do is listed for its roles (and refused when called)."""
    names = set()
    for item in document["paths"].values():
        for operation in item.values():
            if operation.get("x-etikett-mcp") is not True:
                continue
            access = operation["x-etikett-access"]
            required = set(access["roles"])
            public = not access["authenticated"] or "any" in required
            if public or "admin" in roles or roles & required:
                names.add(operation["operationId"])
    return names


class RawMcp:
    """JSON-RPC posts by hand with httpx, as a client without the SDK would send them."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"})
        self.ids = 0

    def post(self, method: str, params: dict[str, Any] | None = None, **headers: str):
        self.ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        return self.http.post(
            self.url, json=message, headers={"Accept": ACCEPT, **headers}, cookies=None
        )

    def notify(self, method: str, **headers: str):
        return self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "method": method},
            headers={"Accept": ACCEPT, **headers},
        )


def role_tokens(admin: Api, roles: tuple[str, ...]) -> dict[str, str]:
    return {role: admin.service_token(role)["token"] for role in roles}
