"""Routes of the Miscellaneous group that need no other group: version and the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel

from etikett import API_VERSION, config
from etikett.api.access import public
from etikett.api.routing import not_in_mcp, router
from etikett.domain.actors import Invocation

routes = router(prefix="/api/v1", tags=["Miscellaneous"])


class Version(BaseModel):
    api_version: str
    build: str


@routes.get(
    "/version",
    operation_id="getVersion",
    response_model=Version,
    summary="The API surface version and the build",
)
def get_version(invocation: Annotated[Invocation, public()]) -> Version:
    return Version(api_version=API_VERSION, build=config.build())


@routes.get(
    "/openapi.json",
    operation_id="getOpenApiDocument",
    summary="The OpenAPI 3.1 document of every operation of every group",
    response_model=dict[str, Any],
    openapi_extra=not_in_mcp(),
)
def get_openapi(invocation: Annotated[Invocation, public()]) -> JSONResponse:
    from etikett.api.openapi import document

    return JSONResponse(document())
