"""Runs a tool: its arguments become the operation's HTTP request, which goes in process through the
ASGI app of the operation's group, with the caller's bearer token and marked as an MCP request. So
authentication, role checks, the approval policy, validation and audit happen exactly as for REST,
at call time."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

import httpx2
from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from etikett.api.access import VIA_MCP_SCOPE_KEY
from etikett.errors import InvalidRequest
from etikett.mcp.catalog import BODY, FORM, JSON_MEDIA_TYPE, MULTIPART, ToolSpec

BASE_URL = "http://etikett.mcp"
USER_AGENT = "etikett-mcp"


@dataclass
class PreparedRequest:
    method: str
    path: str
    params: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    json: Any = None
    data: dict[str, str] | None = None
    files: list[tuple[str, tuple[str, bytes, str]]] | None = None
    has_json: bool = False
    group: str | None = None  # whose routes answer it


def prepare(tool: ToolSpec, arguments: Mapping[str, Any]) -> PreparedRequest:
    """The HTTP request for valid `arguments` (checked against the input schema before)."""
    path = tool.path
    request = PreparedRequest(tool.method, path, group=tool.group)
    for argument in tool.arguments:
        if arguments.get(argument.name) is None:
            continue
        value = arguments[argument.name]
        if argument.location == "path":
            path = path.replace("{" + argument.name + "}", quote(_text(value), safe=""))
        elif argument.location == "query":
            values = value if isinstance(value, list) else [value]
            request.params.extend((argument.name, _text(item)) for item in values)
        else:
            request.headers[argument.name] = _text(value)
    request.path = path
    body = arguments.get(BODY)
    if tool.body is None or body is None:
        return request
    if tool.body.media_type == JSON_MEDIA_TYPE:
        request.json, request.has_json = body, True
    elif tool.body.media_type in (MULTIPART, FORM):
        request.data = {}
        files: list[tuple[str, tuple[str, bytes, str]]] = []
        for name, value in body.items():
            if value is None:
                continue
            if name in tool.body.file_fields:
                items = value if isinstance(value, list) else [value]
                files.extend((name, _file(f"{BODY}.{name}", item)) for item in items)
            else:
                request.data[name] = _text(value)
        if tool.body.media_type == MULTIPART:
            request.files = files
    return request


async def execute(
    request: PreparedRequest,
    token: str,
    request_id: str | None,
    transport: httpx2.AsyncBaseTransport | None = None,
) -> httpx2.Response:
    """Send `request` in process to its group's operations app (or `transport`), as the
    caller."""
    headers = {
        **request.headers,
        "authorization": f"Bearer {token}",
        "user-agent": USER_AGENT,
    }
    if transport is None:
        if request.group is None:
            raise ValueError(f"{request.method} {request.path}: no group is known to serve it")
        transport = _transport(request.group)
    if request_id:
        headers["x-request-id"] = request_id  # the /mcp request's id, so the audit log ties up
    async with httpx2.AsyncClient(
        transport=transport, base_url=BASE_URL, trust_env=False, timeout=None
    ) as client:
        kwargs: dict[str, Any] = {"params": request.params, "headers": headers}
        if request.has_json:
            kwargs["json"] = request.json
        elif request.data is not None:
            kwargs["data"] = request.data  # form fields; with files, a multipart body
            if request.files:
                kwargs["files"] = request.files
        return await client.request(request.method, request.path, **kwargs)


class ViaMcp:
    """Marks each in-process request as an MCP request: cookies ignored, a service actor."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, VIA_MCP_SCOPE_KEY: True}
        await self.app(scope, receive, send)


@cache
def operations_app(group: str) -> ViaMcp:
    """The app of `group`'s routes, built on the first call of one of its tools and kept for the
    process: a cold start loads no group's routes, and a call loads only its own group's."""
    from etikett.api.app import create_app
    from etikett.api.groups import routes_of

    return ViaMcp(create_app(routes_of(group)))


@cache
def _transport(group: str) -> httpx2.ASGITransport:
    # A 500 answer is a result like any other: the app's own handler has turned it into a problem.
    return httpx2.ASGITransport(app=operations_app(group), raise_app_exceptions=False)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _file(field_name: str, value: Mapping[str, Any]) -> tuple[str, bytes, str]:
    try:
        content = base64.b64decode(value["contentBase64"], validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequest.field(f"{field_name}.contentBase64", "is not valid base64") from None
    name = str(value["name"])
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return name, content, media_type
