"""The route class every router uses: it insists on an operationId and an access rule per route,
and publishes both, with the operation's problem responses, in the OpenAPI document.

A route is declared at import and built on first use. Declaring it keeps what matching a request
needs (path pattern, methods, endpoint, name, operationId); FastAPI's analysis of the endpoint
(parameters, body, dependencies, response fields, each with its pydantic schema) waits until the
route first answers a request or something reads that part of it, such as the OpenAPI build. A
function then pays at cold start only for the routes its requests use, and each route is built
once (`create_app` puts the routes themselves into the app, where `include_router` would build a
second copy of every route on the first request).
"""

import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import APIRouter
from fastapi._compat import ModelField
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic.warnings import UnsupportedFieldAttributeWarning
from starlette.routing import compile_path, get_name

from etikett.api.access import Access

# A route's extra responses, as FastAPI takes them: status -> OpenAPI response object.
Responses = dict[int | str, dict[str, Any]]

_PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
# API Gateway's own answer to a body over its 10 MB payload limit (the local gateway answers
# alike): it reaches no function, so it is no problem document.
_GATEWAY_TOO_LARGE = {
    "application/json": {
        "schema": {
            "type": "object",
            "properties": {"message": {"type": "string", "examples": ["Request Entity Too Large"]}},
            "required": ["message"],
        }
    }
}
_GATEWAY_TOO_LARGE_TEXT = "a body over 10 MB is refused by API Gateway itself (`message`)"

# One lock for every build: builds are rare (once per route and process), and two threads that
# ask for the same route at once must not build it twice.
_BUILDING = threading.RLock()


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": _PROBLEM}


def _accesses(dependant: Dependant) -> Iterator[Access]:
    for dependency in dependant.dependencies:
        if isinstance(dependency.call, Access):
            yield dependency.call
        yield from _accesses(dependency)


def _fields(dependant: Dependant) -> Iterator[ModelField]:
    yield from dependant.path_params
    yield from dependant.query_params
    yield from dependant.header_params
    yield from dependant.cookie_params
    yield from dependant.body_params
    for dependency in dependant.dependencies:
        yield from _fields(dependency)


def _complete(route: APIRoute) -> None:
    """Build the validators of the route's parameters, body and answers now, as FastAPI does when
    their models are built already.

    A parameter's type that is one of our models (`etikett_engine.model.Model`, built on first
    use) gives FastAPI a type adapter that builds on first use too, outside the `catch_warnings`
    with which FastAPI silences pydantic's `UnsupportedFieldAttributeWarning` about the field's
    alias: every body operation's first request would print that warning. The route is built for
    its first request (or the OpenAPI build), which would build these adapters right away anyway.
    """
    fields = [*_fields(route.dependant), route.body_field, route.response_field]
    fields += [*route.response_fields.values(), route.stream_item_field]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedFieldAttributeWarning)
        for field in fields:
            # FastAPI's adapter (private, only read): building it is what its first use does.
            if field is not None and not field._type_adapter.pydantic_complete:
                field._type_adapter.rebuild(raise_errors=False)


class EtikettRoute(APIRoute):
    """An operation's route, declared now and built by FastAPI on first use."""

    # What FastAPI's constructor and `_build` set, beyond what the declaration sets: reading any
    # of these builds the route (tests/unit/test_routing.py checks that the list is complete).
    BUILT_ATTRIBUTES = frozenset(APIRoute.__annotations__) | {
        "app",
        "form_limits",
        "access",
        "mcp",
    }

    access: Access
    mcp: bool

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if not kwargs.get("operation_id"):
            raise TypeError(f"route {path} needs an explicit operation_id")
        # What matching a request reads (Starlette's Route.matches, the 404/405 answers).
        self.path = path
        self.endpoint = endpoint
        self.operation_id: str | None = kwargs["operation_id"]
        self.name = get_name(endpoint) if kwargs.get("name") is None else kwargs["name"]
        self.path_regex, self.path_format, self.param_convertors = compile_path(path)
        self.methods = {method.upper() for method in kwargs.get("methods") or ["GET"]}
        self.include_in_schema = kwargs.get("include_in_schema", True)
        self._declaration: tuple[str, Callable[..., Any], dict[str, Any]] | None = (
            path,
            endpoint,
            kwargs,
        )

    def __getattr__(self, name: str) -> Any:
        # Only called for an attribute the instance does not have (yet).
        if name in EtikettRoute.BUILT_ATTRIBUTES and "_declaration" in self.__dict__:
            self.build()
            if name in self.__dict__:
                return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def built(self) -> bool:
        return self.__dict__.get("_declaration") is None

    def build(self) -> None:
        """FastAPI's route from the declaration, with the access rule and problem responses."""
        with _BUILDING:
            declaration = self.__dict__.get("_declaration")
            if declaration is None:
                return
            # Built aside and taken over at once: a thread that reads this route meanwhile (the
            # OpenAPI build, a request) finds its parts either as declared or as built, never
            # half of each, and a part it lacks makes it wait here for the build.
            built = object.__new__(type(self))
            built._build(*declaration)
            self.__dict__.update(vars(built), _declaration=None)

    def _build(self, path: str, endpoint: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        APIRoute.__init__(self, path, endpoint, **kwargs)
        _complete(self)
        accesses = list(_accesses(self.dependant))
        if len(accesses) != 1:
            raise TypeError(f"{self.operation_id} must declare exactly one access rule")
        self.access = accesses[0]
        extra = dict(self.openapi_extra or {})
        extra["x-etikett-access"] = self.access.describe()
        extra.setdefault("x-etikett-mcp", True)
        self.openapi_extra = extra
        self.mcp = bool(extra["x-etikett-mcp"])
        responses: dict[int | str, Any] = {
            400: _problem("Malformed request (`request.malformed`, `request.invalid_cursor`)"),
            422: _problem("Invalid request (`request.invalid`, params.fields names each field)"),
        }
        responses[503] = _problem(
            "The database throttled the request or did not answer in time, beyond the retries "
            "(`service.busy`, with Retry-After)"
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
        if self.body_field is not None:
            own = responses.get(413)
            responses[413] = (
                {
                    **own,
                    "description": f"{own['description']}; {_GATEWAY_TOO_LARGE_TEXT}",
                    "content": {**own["content"], **_GATEWAY_TOO_LARGE},
                }
                if own is not None
                else {
                    "description": _GATEWAY_TOO_LARGE_TEXT[0].upper() + _GATEWAY_TOO_LARGE_TEXT[1:],
                    "content": _GATEWAY_TOO_LARGE,
                }
            )
        self.responses = responses


def router(**kwargs: Any) -> APIRouter:
    return APIRouter(route_class=EtikettRoute, **kwargs)


def not_in_mcp() -> dict[str, Any]:
    """`openapi_extra` for operations that the MCP catalog must never contain."""
    return {"x-etikett-mcp": False}
