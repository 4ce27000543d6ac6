"""Routes of the mcp group: `POST /mcp`, the MCP endpoint, and `GET /mcp`, refused with 405. Its
router lives beside the endpoint it serves, so that the API package does not import the MCP one.

A protocol endpoint, not API operations: plain routes, outside the OpenAPI document and outside the
`EtikettRoute` access rules (each tool call meets those rules in its own operation). Importing this
module stays cheap: the MCP machinery loads on the first request, so the misc function, which holds
every group's routes for its 404/405 answers, does not pay for it."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from etikett.api.problems import problem_response
from etikett_engine.errors import ProblemCode

PATH = "/mcp"


class McpEndpoint:
    """The ASGI app of `POST /mcp` (streamable HTTP, stateless, JSON answers)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The SDK's transport loads with the first request: building the app does not need it.
        from etikett.mcp.http import endpoint

        await endpoint(scope, receive, send)


def get_not_allowed(request: Request) -> JSONResponse:
    # A stateless server opens no event stream: a GET would wait forever, so it is refused.
    return problem_response(
        ProblemCode.ROUTE_METHOD_NOT_ALLOWED,
        "Method not allowed",
        f"{PATH} takes JSON-RPC messages by POST only; this stateless server opens no stream.",
        {"method": request.method, "allowed": ["POST"]},
        headers={"Allow": "POST"},
    )


routes = APIRouter()
routes.routes.append(Route(PATH, McpEndpoint(), methods=["POST"], include_in_schema=False))
routes.add_api_route(PATH, get_not_allowed, methods=["GET"], include_in_schema=False)
