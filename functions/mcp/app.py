"""Lambda entry of the mcp group: the MCP endpoint behind Mangum, with Powertools observability.

Each tool call runs its operation in process through its group's routes. The tool catalog (from
the OpenAPI document the layer build wrote) is built here, once per cold start, never per request;
a group's routes load with the first call of one of its tools."""

from etikett import coldstart

coldstart.libraries(*coldstart.API_LIBRARIES, *coldstart.MCP_LIBRARIES)

from etikett.api.app import create_app
from etikett.api.entry import http_handler
from etikett.api.groups import routes_of
from etikett.mcp import routes
from etikett.mcp.http import served_first, warm

warm()
app = create_app(routes_of("mcp"))
handler = http_handler(served_first(app, routes.PATH), "mcp")
coldstart.done()
