"""The route class every router uses: it insists on an operationId and an access rule per route,
and publishes both, with the operation's problem responses, in the OpenAPI document."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from etikett.api.access import Access

# A route's extra responses, as FastAPI takes them: status -> OpenAPI response object.
Responses = dict[int | str, dict[str, Any]]

_PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": _PROBLEM}


def _accesses(dependant: Dependant) -> Iterator[Access]:
    for dependency in dependant.dependencies:
        if isinstance(dependency.call, Access):
            yield dependency.call
        yield from _accesses(dependency)


class EtikettRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        if not kwargs.get("operation_id"):
            raise TypeError(f"route {path} needs an explicit operation_id")
        accesses = list(_accesses(self.dependant))
        if len(accesses) != 1:
            raise TypeError(f"{self.operation_id} must declare exactly one access rule")
        self.access: Access = accesses[0]
        extra = dict(self.openapi_extra or {})
        extra["x-etikett-access"] = self.access.describe()
        extra.setdefault("x-etikett-mcp", True)
        self.openapi_extra = extra
        self.mcp: bool = bool(extra["x-etikett-mcp"])
        responses: dict[int | str, Any] = {
            400: _problem("Malformed request (`request.malformed`, `request.invalid_cursor`)"),
            422: _problem("Invalid request (`request.invalid`, params.fields names each field)"),
        }
        responses[503] = _problem(
            "The database throttled the request beyond the retries (`service.busy`, with "
            "Retry-After)"
        )
        if self.body_field is not None:
            responses[415] = _problem(
                "The body is not of the media type the operation takes "
                "(`request.unsupported_media_type`)"
            )
        if self.access.authenticated:
            responses[401] = _problem("Missing, invalid or expired token (`auth.*`)")
            responses[403] = _problem("Forbidden (`auth.forbidden`, `auth.human_required`)")
        elif set(self.methods or ()) - {"GET", "HEAD", "OPTIONS"}:
            # A change without a token is checked as a browser could have sent it.
            responses[403] = _problem("Sent from a page of another origin (`auth.origin_refused`)")
        for status, response in (self.responses or {}).items():
            responses[status] = (
                response
                if "content" in response
                else {**_problem(response.get("description", "")), **response}
            )
        self.responses = responses


def router(**kwargs: Any) -> APIRouter:
    return APIRouter(route_class=EtikettRoute, **kwargs)


def not_in_mcp() -> dict[str, Any]:
    """`openapi_extra` for operations that the MCP catalog must never contain."""
    return {"x-etikett-mcp": False}
