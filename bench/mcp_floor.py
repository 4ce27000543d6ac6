"""The bare MCP SDK floor for `mcp_bench.py`: a plain Starlette route and the SDK's own stateless
Streamable HTTP server (JSON answers, a manager per request, one no-op tool), served as one Lambda
function behind the same local gateway and uvicorn settings as `etikett dev`, so that every row of
the MCP table crosses the same transport (loopback HTTP → gateway → Lambda event → Mangum).

    .venv/bin/python bench/mcp_floor.py --port 8123     # serve until Ctrl-C (mcp_bench starts it)

What the SDK costs over a plain route here is the floor that Etikett's MCP endpoint cannot go
below; what Etikett's `tools/call` costs over its REST call, less that floor, is ours."""

from __future__ import annotations

import argparse
import asyncio
import logging
import threading
from typing import Any

NOOP = "noop"
PLAIN_PATH = "/plain"
MCP_PATH = "/mcp"
FUNCTION = "FloorFunction"


def floor_app() -> Any:
    """The two endpoints, as small as the SDK allows: no authentication, no middleware."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send

    tool = types.Tool(name=NOOP, input_schema={"type": "object", "properties": {}})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="{}")])

    server = Server("floor", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    for name in ("mcp.server.streamable_http_manager", "mcp.server.streamable_http"):
        logging.getLogger(name).setLevel(logging.WARNING)

    class Endpoint:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            # A manager per request, as under Mangum there is no lifespan to hold one open.
            manager = StreamableHTTPSessionManager(
                app=server, stateless=True, json_response=True, security_settings=security
            )
            async with manager.run():
                await manager.handle_request(scope, receive, send)

    async def plain(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route(PLAIN_PATH, plain, methods=["GET"]),
            Route(MCP_PATH, Endpoint(), methods=["POST"]),
        ]
    )


class Functions:
    """The one function, with what the local FunctionRegistry gives each worker thread: an event
    loop kept for the thread's life."""

    def __init__(self) -> None:
        from mangum import Mangum

        self.handler = Mangum(floor_app(), lifespan="off", api_gateway_base_path="/")
        self.local = threading.local()

    def invoke(self, logical_id: str, event: dict[str, Any]) -> Any:
        if getattr(self.local, "loop", None) is None:
            self.local.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.local.loop)
        return self.handler(event, None)


def serve(host: str, port: int) -> None:
    import uvicorn

    from etikett.local.gateway import Gateway, Router
    from etikett.local.template import HttpRoute

    gateway = Gateway(Router([HttpRoute("ANY", "$default", FUNCTION)]), Functions())  # type: ignore[arg-type]
    # The settings `etikett dev` serves its plain port with (etikett.local.service).
    uvicorn.run(
        gateway, host=host, port=port, log_level="warning", access_log=False, lifespan="off"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    serve(arguments.host, arguments.port)


if __name__ == "__main__":
    main()
