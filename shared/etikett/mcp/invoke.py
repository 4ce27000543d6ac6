"""Runs a tool: its arguments become the operation's HTTP request, which is handed in process to the
ASGI app of the operation's group (one call, no HTTP client or transport), with the caller's bearer
token and marked as an MCP request. So role checks, the approval policy, validation, problem
answers and audit happen exactly as for REST, at call time; the caller is the one the /mcp endpoint
authenticated for this request."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote, unquote, urlencode

import anyio
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Scope

from etikett.api.access import MCP_CALLER_SCOPE_KEY, VIA_MCP_SCOPE_KEY
from etikett.domain.actors import Caller
from etikett.mcp.catalog import BODY, FORM, JSON_MEDIA_TYPE, MULTIPART, ToolSpec
from etikett_engine.errors import InvalidRequest

HOST = b"etikett.mcp"
USER_AGENT = b"etikett-mcp"


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


@dataclass(frozen=True)
class Answer:
    """An operation's HTTP answer: header names in lower case, repeated headers joined by ", "."""

    status_code: int
    headers: dict[str, str]
    content: bytes


async def execute(
    request: PreparedRequest,
    token: str,
    request_id: str | None,
    caller: Caller | None = None,
    app: ASGIApp | None = None,
) -> Answer:
    """Run `request` in process through its group's operations app (or `app`), as the caller.

    One ASGI call, no HTTP client: the scope is built here, the body handed over in one message,
    the answer collected from the app's messages. `caller` is who the /mcp endpoint has just
    authenticated with `token`; the operation's access rule takes it instead of reading the
    token again (`etikett.api.access.MCP_CALLER_SCOPE_KEY`)."""
    if app is None:
        if request.group is None:
            raise ValueError(f"{request.method} {request.path}: no group is known to serve it")
        app = operations_app(request.group)
    body, content_type = _body(request)
    headers = [(b"host", HOST), (b"user-agent", USER_AGENT)]
    headers += [(name.lower().encode(), value.encode()) for name, value in request.headers.items()]
    headers.append((b"authorization", f"Bearer {token}".encode("latin-1")))
    if request_id:
        headers.append((b"x-request-id", request_id.encode("latin-1")))  # ties up the audit log
    if content_type is not None:
        headers += [(b"content-type", content_type), (b"content-length", b"%d" % len(body))]
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": "http",
        "path": unquote(request.path),
        "raw_path": request.path.encode("ascii"),
        "query_string": urlencode(request.params).encode("ascii"),
        "root_path": "",
        "headers": headers,
        "server": (HOST.decode(), 80),
        "client": ("127.0.0.1", 0),
        VIA_MCP_SCOPE_KEY: True,
    }
    if caller is not None:
        scope[MCP_CALLER_SCOPE_KEY] = caller
    return await _call(app, scope, body, head=request.method == "HEAD")


async def _call(app: ASGIApp, scope: Scope, body: bytes, *, head: bool) -> Answer:
    status: int | None = None
    headers: dict[str, str] = {}
    parts: list[bytes] = []
    sent = False
    complete = anyio.Event()

    async def receive() -> Message:
        nonlocal sent
        if sent:  # as a client that stays connected until the whole answer is in
            await complete.wait()
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            for raw_name, raw_value in message.get("headers") or ():
                name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
        elif message["type"] == "http.response.body":
            if not head and message.get("body"):
                parts.append(message["body"])
            if not message.get("more_body", False):
                complete.set()

    try:
        await app(scope, receive, send)
    except Exception:
        # The app's own handler has answered with a problem (500) before the error surfaced:
        # that answer is the result, like any other.
        if status is None:
            status = 500
    finally:
        complete.set()
    assert status is not None, "the operation sent no answer"
    return Answer(status, headers, b"".join(parts))


def _body(request: PreparedRequest) -> tuple[bytes, bytes | None]:
    """The request body and its content type (None: no body)."""
    if request.has_json:
        text = json.dumps(request.json, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode(), JSON_MEDIA_TYPE.encode()
    if request.data is None:
        return b"", None
    if not request.files:
        return urlencode(request.data).encode("ascii"), FORM.encode()
    # Multipart encoding is httpx's (a declared dependency): the request is only built, never
    # sent. Loaded here, as only uploads need it.
    import httpx

    built = httpx.Request("POST", "http://etikett.mcp/", data=request.data, files=request.files)
    return built.read(), built.headers["content-type"].encode("latin-1")


@cache
def operations_app(group: str) -> FastAPI:
    """The app of `group`'s routes, built on the first call of one of its tools and kept for the
    process: a cold start loads no group's routes, and a call loads only its own group's."""
    # A group's routes load with the first call of one of its tools, never at a cold start.
    from etikett.api.app import create_app
    from etikett.api.groups import routes_of

    return create_app(routes_of(group))


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
