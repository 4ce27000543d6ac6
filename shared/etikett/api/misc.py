"""Routes of the Miscellaneous group: version, OpenAPI document, document schemas, CEL evaluation
and policies."""

from typing import Annotated, Any

from fastapi import Path
from fastapi.responses import JSONResponse

from etikett import API_VERSION
from etikett.api.access import any_caller, public, requires
from etikett.api.routing import not_in_mcp, router
from etikett.domain.actors import Invocation
from etikett.domain.labels import expressions
from etikett.domain.users import policies
from etikett.settings import get_settings
from etikett_engine.dsl.schemas import SchemaKind, schema
from etikett_engine.model import Model

routes = router(prefix="/api/v1", tags=["Miscellaneous"])


class Version(Model):
    api_version: str
    build: str


@routes.get(
    "/version",
    operation_id="getVersion",
    response_model=Version,
    summary="The API surface version and the build",
)
def get_version(invocation: Annotated[Invocation, public()]) -> Version:
    return Version(api_version=API_VERSION, build=get_settings().build)


@routes.get(
    "/openapi.json",
    operation_id="getOpenApiDocument",
    summary="The OpenAPI 3.1 document of every operation of every group",
    response_model=dict[str, Any],
    openapi_extra=not_in_mcp(),
)
def get_openapi(invocation: Annotated[Invocation, public()]) -> JSONResponse:
    # Loaded here, not at the misc function's cold start.
    from etikett.api.openapi import document

    return JSONResponse(document())


@routes.post(
    "/cel/evaluate",
    operation_id="postCelEvaluate",
    response_model=expressions.CelResult,
    summary="Evaluate a CEL expression against sample data",
    description="Answers the value and its CEL type, or `cel.invalid` with the line and "
    "column of the error. Helpers: format_date, add_days, pad, "
    "gs1_check_digit, with_check_digit, format_number, upper, lower, trim; "
    "plus `now` and `counters.<name>`.",
    responses={
        404: {"description": "The named label (`label_id`) does not exist (`label.not_found`)"},
        422: {"description": "`cel.invalid` (params line, column, message)"},
    },
)
def evaluate(
    body: expressions.CelEvaluation, invocation: Annotated[Invocation, any_caller()]
) -> expressions.CelResult:
    return expressions.evaluate(body)


@routes.get(
    "/schemas/{kind}",
    operation_id="getSchema",
    response_model=dict[str, Any],
    summary="The JSON Schema of a label, flow or form document",
    description="JSON Schema 2020-12, the same as the MCP resource svc://schema/{kind} and the "
    "OpenAPI components LabelDocument, FlowDocument and FormDocument. Besides validation "
    "keywords it carries what forms need: `title`s, `x-unit` (mm, pt, dots, degrees, dpi), "
    "`x-group` (the section a field belongs in), `x-cel` (a CEL expression), "
    "`x-enum-titles` (names of an enum's values, in its order) and `x-accept` (media types "
    "of an upload). Fonts and symbologies are enums: exactly what the renderer has.",
    responses={
        200: {
            "description": "The schema",
            "content": {
                "application/json": {
                    "example": {
                        "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "$id": "svc://schema/label",
                        "title": "LabelDocument",
                        "type": "object",
                        "properties": {"size": {"$ref": "#/$defs/Size"}},
                        "$defs": {"Size": {"type": "object"}},
                    }
                }
            },
        }
    },
)
def get_schema(
    kind: Annotated[SchemaKind, Path(description="`label`, `flow` or `form`.")],
    invocation: Annotated[Invocation, any_caller()],
) -> JSONResponse:

    return JSONResponse(schema(kind))


@routes.get(
    "/policies",
    operation_id="getPolicies",
    response_model=policies.Policies,
    summary="Read the service's policies (e.g. aiFreigabePflicht)",
)
def get_policies(invocation: Annotated[Invocation, any_caller()]) -> policies.Policies:
    return policies.list_policies()


@routes.put(
    "/policies/{name}",
    operation_id="putPolicy",
    response_model=policies.Policy,
    summary="Change a policy (an admin signed in as a person; never a token)",
    responses={404: {"description": "Unknown policy (`policy.not_found`)"}},
)
def put_policy(
    name: str,
    body: policies.PolicyChange,
    invocation: Annotated[Invocation, requires("admin", human=True)],
) -> policies.Policy:
    return policies.put(invocation, name, body)
