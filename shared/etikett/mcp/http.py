"""The HTTP side of `POST /mcp`: authenticate the bearer token before the SDK sees the request, then
serve it with a stateless, JSON-answering `StreamableHTTPSessionManager`, one held running per event
loop (`etikett.mcp.manager`)."""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from etikett.api.access import VIA_MCP_SCOPE_KEY, authenticate, request_id
from etikett.api.problems import problem_response
from etikett.mcp import catalog
from etikett.mcp import manager as managers
from etikett.mcp.server import CALLER_KEY, REQUEST_ID_KEY, TOKEN_KEY, server, wire_tools
from etikett_engine.errors import EtikettError, ProblemCode

# A child of the function's Powertools logger (POWERTOOLS_SERVICE_NAME): its lines are JSON with
# the invocation's context and correlation id, as the function's own.
logger = Logger(child=True)

# The SDK's loggers are stdlib loggers, configured as such. With a manager per request, its INFO
# lines on each start and stop are noise: the function logs each request once itself.
for _name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
    logging.getLogger(_name).setLevel(logging.WARNING)

# DNS-rebinding protection guards servers that trust whoever can reach them (a local server a web
# page could reach through a rebound name). Ours trusts only a bearer token, never a cookie, so a
# rebound page gains nothing; and behind API Gateway the Host is the API's own (or a custom)
# domain, which the SDK's localhost allow-list would answer with 421. So: off, deliberately.
SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)
# Lambda's limit for a synchronous invocation's payload (6 MB) bounds the body anyway.
MAX_BODY_BYTES = 6 * 1024 * 1024


def warm() -> None:
    """Build what every request needs once per cold start: the tool catalog, the MCP tool list
    and the server. A group's routes load with the first call of one of its tools, a resource
    with its first read."""
    catalog.catalog()
    wire_tools()
    server()


def served_first(app: ASGIApp, path: str) -> ASGIApp:
    """`app` (the mcp group's routes) with `POST path` taken straight to the endpoint: an MCP
    request passes one FastAPI middleware stack and router, its operation's, as a REST request
    does, not the mcp app's as well. Every other request, `GET /mcp` among them, goes to `app`."""

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == path:
            await _guarded(scope, receive, send)
        else:
            await app(scope, receive, send)

    return serve


async def _guarded(scope: Scope, receive: Receive, send: Send) -> None:
    """The endpoint, with the app's last resort: an unexpected failure before an answer started
    is answered with an `internal_error` problem, as the app's own handler answers it."""
    started = False

    async def watched(message: Message) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await endpoint(scope, receive, watched)
    except Exception:
        logger.exception("an MCP request failed")
        if started:
            raise
        response = problem_response(
            ProblemCode.INTERNAL_ERROR,
            "Internal error",
            "An unexpected error happened; nothing was changed by this request.",
            {"request_id": scope.get(REQUEST_ID_KEY)},
        )
        await response(scope, receive, send)


async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    # From here on this is an MCP request: a session cookie is ignored, the caller is an agent.
    scope[VIA_MCP_SCOPE_KEY] = True
    request = Request(scope, receive)
    try:
        # As a REST operation's access rule does: in the request's own thread (one request per
        # Lambda container at a time), no hop to a worker thread.
        caller = authenticate(request)
    except EtikettError as error:
        response = problem_response(
            error.code, error.title, error.detail, error.params, error.headers
        )
        await response(scope, receive, send)
        return
    except Exception:
        logger.exception("could not authenticate an MCP request")
        response = problem_response(
            ProblemCode.INTERNAL_ERROR,
            "Internal error",
            "An unexpected error happened; nothing was changed by this request.",
            {"request_id": request_id(request)},
        )
        await response(scope, receive, send)
        return
    scope[CALLER_KEY] = caller
    scope[TOKEN_KEY] = request.headers["authorization"].partition(" ")[2].strip()
    scope[REQUEST_ID_KEY] = request_id(request)
    manager = await managers.running(_manager)
    await manager.handle_request(scope, receive, send)


def _manager() -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=server(),
        stateless=True,
        json_response=True,
        security_settings=SECURITY,
        max_request_body_size=MAX_BODY_BYTES,
    )
