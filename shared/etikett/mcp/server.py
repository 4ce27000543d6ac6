"""The MCP server: the SDK's low-level `Server` with our handlers. `tools/list` shows the caller the
tools its current roles allow; `tools/call` runs the operation in process; resources serve the
schemas, registries and the OpenAPI document."""

from __future__ import annotations

from functools import cache
from typing import Any

import mcp_types as types
from aws_lambda_powertools import Logger
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from etikett import API_VERSION
from etikett.domain.actors import Caller, Invocation
from etikett.mcp import catalog as catalogs
from etikett.mcp import invoke, resources, results
from etikett_engine.errors import EtikettError, InvalidRequest

# A child of the function's Powertools logger (POWERTOOLS_SERVICE_NAME): its lines are JSON with
# the invocation's context and correlation id, as the function's own.
logger = Logger(child=True)

# Set by the HTTP endpoint once the bearer token is authenticated; read by the handlers.
CALLER_KEY = "etikett.mcp.caller"
TOKEN_KEY = "etikett.mcp.token"
REQUEST_ID_KEY = "etikett.mcp.request_id"

INSTRUCTIONS = """\
Etikett designs labels and prints them. Each tool is one operation of the Etikett API, named \
by its operationId; tools/list shows the tools your roles allow, and every call is checked \
again when it runs. You always act as an agent (a service actor): under the approval policy \
aiFreigabePflicht, label versions you author stay drafts until a person approves them.

Your first label:
1. listLabelVorlagen: choose a real Vorlage `id` from `items`.
2. createLabelFromVorlage {"body": {"vorlageId": "<id>", "name": "<name>"}}: keep the \
returned label `id`.
3. getLabelDocument {"labelId": "<id>"} and read the resource svc://schema/label (object \
types: svc://registry/labels). Save your revision with patchLabelDocument {"labelId": "<id>", \
"body": {"operations": [RFC 6902 operations], "base_version": <the version you read>}}.
4. postLabelPreview {"labelId": "<id>", "body": {"variables": {...}}} with values for the \
variables the label declares: the answer is the print raster as a PNG image; the status \
block gives X-Label-Dots and X-Label-Dpi.
5. A person reviews the preview and approves the version (postLabelStatus). An agent's \
approval of an agent-authored version is refused with policy.human_required: ask a person.

Rules:
- Keep every object, form field and flow node `id`: a patch must never change or drop one \
(document.id_changed). Give new objects new ids; remove an object with \
`remove /objects/<index>`.
- Arguments: path, query and header parameters are top-level; the JSON request body goes \
under `body`; a file is {"name", "contentBase64"}.
- Results: the JSON answer as text, then a block with the HTTP status, content type and \
headers. A failure has isError with the problem `code` and `params`; the codes are listed in \
svc://openapi (x-etikett-problem-codes).
- Resources: svc://schema/label, svc://schema/form, svc://schema/flow, \
svc://registry/labels, svc://registry/flows, svc://openapi."""


def _scope_value(ctx: ServerRequestContext[Any, Any], key: str) -> Any:
    request = ctx.request
    scope = getattr(request, "scope", None) or {}
    if key not in scope:
        raise RuntimeError(f"{key} missing: the MCP server runs only behind the /mcp endpoint")
    return scope[key]


@cache
def wire_tools() -> dict[str, types.Tool]:
    """The catalog as MCP `Tool`s, built once per process."""
    tools = {}
    for spec in catalogs.catalog().tools.values():
        read_only = spec.method in ("GET", "HEAD")
        tools[spec.name] = types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            annotations=types.ToolAnnotations(
                title=spec.title,
                read_only_hint=read_only,
                destructive_hint=True if spec.method == "DELETE" else None,
                idempotent_hint=True if spec.method in ("GET", "HEAD", "PUT", "DELETE") else None,
                open_world_hint=False,
            ),
        )
    return tools


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    caller: Caller = _scope_value(ctx, CALLER_KEY)
    tools = wire_tools()
    # Private and immediately stale: the list follows the caller's roles as they are now.
    return types.ListToolsResult(
        tools=[tools[spec.name] for spec in catalogs.catalog().visible_to(caller)],
        ttl_ms=0,
        cache_scope="private",
    )


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    """Never raises: every failure is a result with `isError`, which an agent can act on."""
    request_id: str | None = None
    try:
        request_id = _scope_value(ctx, REQUEST_ID_KEY)
        catalog = catalogs.catalog()
        spec = catalog.tools.get(params.name)
        person_only = catalog.person_only.get(params.name)
        if spec is None and person_only is not None:
            caller = _scope_value(ctx, CALLER_KEY).as_service()
            refused = person_only.refusal(caller, params.name)
            assert refused is not None  # a service actor never meets a person-only rule
            _audit_refusal(caller, params.name, request_id, refused)
            return results.refusal_result(refused)
        if spec is None:
            raise InvalidRequest(
                f"No tool is named {params.name!r}; tools/list lists the tools your roles allow.",
                fields=[{"field": "name", "message": "unknown tool", "type": "unknown_tool"}],
            )
        # Refused before its arguments are looked at, as REST refuses before the body: a caller
        # learns nothing of an operation it may not use.
        caller = _scope_value(ctx, CALLER_KEY).as_service()
        refused = spec.access.refusal(caller, spec.name)
        if refused is not None:
            if spec.method not in ("GET", "HEAD"):
                _audit_refusal(caller, spec.name, request_id, refused)
            return results.refusal_result(refused)
        arguments = params.arguments or {}
        fields = spec.argument_errors(arguments)
        if fields:
            names = ", ".join(dict.fromkeys(item["field"] for item in fields))
            raise InvalidRequest(f"Invalid arguments: {names}.", fields=fields)
        prepared = invoke.prepare(spec, arguments)
        response = await invoke.execute(
            prepared, _scope_value(ctx, TOKEN_KEY), request_id, _scope_value(ctx, CALLER_KEY)
        )
        return results.from_response(response.status_code, response.headers, response.content)
    except EtikettError as error:
        return results.error_result(error)
    except Exception:
        logger.exception("tool %s failed", params.name)
        return results.internal_error(request_id)


def _audit_refusal(
    caller: Caller, operation_id: str, request_id: str | None, refused: EtikettError
) -> None:
    """A change refused before it ran is audited as REST audits it (outcome `refused`)."""
    # The audit writer loads only for a refused change.
    from etikett.domain.audit import audit

    try:
        audit.record_refusal(Invocation(caller, operation_id, request_id), refused.code)
    except Exception:  # the refusal itself must still reach the caller
        logger.exception("could not audit a refusal")


async def list_resources(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=spec.uri,
                name=spec.name,
                title=spec.title,
                description=spec.description,
                mime_type=resources.JSON,
            )
            for spec in resources.RESOURCES
        ]
    )


async def read_resource(
    ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri not in resources.BY_URI:
        known = ", ".join(spec.uri for spec in resources.RESOURCES)
        raise MCPError(
            types.INVALID_PARAMS, f"Unknown resource {uri}; known: {known}", {"uri": uri}
        )
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(uri=uri, mime_type=resources.JSON, text=resources.text(uri))
        ]
    )


# What the SDK reads of a tool's input schema on every `tools/call` of the 2026 era: only its
# `x-mcp-header` annotations, which say which arguments travel again as `Mcp-Param-*` headers.
HEADER_ANNOTATION = "x-mcp-header"
# A schema with no annotation, as the SDK sees it: nothing to compare against the headers.
UNANNOTATED: dict[str, Any] = {"type": "object"}


@cache
def _tool_input_schema(name: str) -> dict[str, Any] | None:
    """The schema the SDK checks a call's `Mcp-Param-*` headers against. The SDK walks every schema
    position for annotations on each call; ours have none, so it gets an object schema without
    them (the same verdict: no header is declared) instead of a walk of the whole tool schema."""
    schema = catalogs.catalog().input_schema(name)
    if schema is None or _annotated(schema):
        return schema
    return UNANNOTATED


def _annotated(schema: Any) -> bool:
    if isinstance(schema, dict):
        return HEADER_ANNOTATION in schema or any(map(_annotated, schema.values()))
    if isinstance(schema, list):
        return any(map(_annotated, schema))
    return False


@cache
def server() -> Server[Any]:
    """One server per process: it holds only handlers, so every request's manager can share it."""
    return Server(
        "etikett",
        version=API_VERSION,
        title="Etikett",
        description="Label design, print automation and print management.",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=_tool_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
