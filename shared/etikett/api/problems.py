"""RFC 9457 problem details: every failure of every route becomes one, in this one place."""

from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import Field
from starlette.exceptions import HTTPException

from etikett.api.groups import all_routes
from etikett_engine.errors import EtikettError, ProblemCode
from etikett_engine.model import Model

# A child of the function's Powertools logger (POWERTOOLS_SERVICE_NAME): its lines are JSON with
# the invocation's context and correlation id, as the function's own.
logger = Logger(child=True)

PROBLEM_MEDIA_TYPE = "application/problem+json"
BUSY_RETRY_AFTER_SECONDS = 1
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Problem(Model):
    """An RFC 9457 problem; `code` is stable and machine-readable, `params` holds its values."""

    type: str = Field(examples=["https://etikett.dev/problems/auth.forbidden"])
    title: str
    status: int
    detail: str
    code: str = Field(examples=["auth.forbidden"])
    params: dict[str, Any] = Field(default_factory=dict)


def problem_response(
    code: ProblemCode,
    title: str,
    detail: str,
    params: dict[str, Any],
    headers: dict[str, str] | None = None,
    *,
    status: int | None = None,
) -> JSONResponse:
    """The problem of `code`, answered with the code's status unless `status` says otherwise."""
    status = status or code.status
    body = Problem(
        type=f"https://etikett.dev/problems/{code}",
        title=title,
        status=status,
        detail=detail,
        code=code,
        params=params,
    )
    return JSONResponse(
        body.model_dump(mode="json"),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _audit_refusal(request: Request, code: ProblemCode, target_id: str | None = None) -> None:
    """A refused change by a known caller is worth an audit entry; anonymous noise is not."""
    invocation = getattr(request.state, "invocation", None)
    if request.method in _READ_METHODS or invocation is None or invocation.caller is None:
        return
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.audit import audit

    try:
        audit.record_refusal(invocation, code, target_id=target_id or _target_of(request))
    except Exception:  # the refusal itself must still reach the caller
        logger.exception("could not audit a refusal")


def _target_of(request: Request) -> str | None:
    params = request.path_params
    for value in params.values():
        if isinstance(value, str) and "_" in value:
            return value
    return next(iter(params.values()), None) if params else None


async def _etikett_error(request: Request, error: EtikettError) -> JSONResponse:
    _audit_refusal(request, error.code, error.audit_target)
    return problem_response(error.code, error.title, error.detail, error.params, error.headers)


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


async def _validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
    errors = error.errors()
    if any(item.get("type") == "json_invalid" for item in errors):
        where = next(item for item in errors if item.get("type") == "json_invalid")
        return problem_response(
            ProblemCode.REQUEST_MALFORMED,
            "Malformed request",
            "The body is not well-formed JSON.",
            {"error": str(where.get("ctx", {}).get("error", ""))},
        )
    fields = [
        {"field": _field_name(item["loc"]), "message": item["msg"], "type": item["type"]}
        for item in errors
    ]
    _audit_refusal(request, ProblemCode.REQUEST_INVALID)
    names = ", ".join(sorted({entry["field"] for entry in fields}))
    return problem_response(
        ProblemCode.REQUEST_INVALID,
        "Invalid request",
        f"Invalid fields: {names}.",
        {"fields": fields},
    )


async def _http_error(request: Request, error: HTTPException) -> JSONResponse:
    if error.status_code == 404:
        return problem_response(
            ProblemCode.ROUTE_NOT_FOUND,
            "Not found",
            f"No operation has the path {request.url.path}.",
            {"path": request.url.path},
        )
    if error.status_code == 405:
        allowed = _allowed_methods(request)
        return problem_response(
            ProblemCode.ROUTE_METHOD_NOT_ALLOWED,
            "Method not allowed",
            f"{request.method} is not allowed on {request.url.path}.",
            {"method": request.method, "allowed": allowed},
            headers={"Allow": ", ".join(allowed)},
        )
    return problem_response(
        ProblemCode.REQUEST_INVALID,
        "Request refused",
        str(error.detail),
        {},
        headers=dict(error.headers or {}),
        status=error.status_code,
    )


def _routes(container: Any) -> Iterator[Any]:
    for route in getattr(container, "routes", []):
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _routes(inner)
        else:
            yield route


def _methods_for(path: str, routes: Iterable[Any]) -> list[str]:
    methods: set[str] = set()
    for route in routes:
        regex = getattr(route, "path_regex", None)
        if regex is not None and getattr(route, "path", "") != "/{path:path}" and regex.match(path):
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def _allowed_methods(request: Request) -> list[str]:
    """Every method of every route whose path matches (Starlette names only the first route's)."""
    return _methods_for(request.url.path, _routes(request.app.router))


@cache
def _every_route() -> list[Any]:

    return [route for router in all_routes() for route in _routes(router)]


async def unrouted(request: Request) -> JSONResponse:
    """API Gateway's `$default`: no route of any group took this request."""
    path = request.url.path
    allowed = _methods_for(path, _every_route())
    if allowed:
        return problem_response(
            ProblemCode.ROUTE_METHOD_NOT_ALLOWED,
            "Method not allowed",
            f"{request.method} is not allowed on {path}.",
            {"method": request.method, "allowed": allowed},
            headers={"Allow": ", ".join(allowed)},
        )
    return problem_response(
        ProblemCode.ROUTE_NOT_FOUND,
        "Not found",
        f"No operation has the path {path}.",
        {"path": path},
    )


async def _unexpected(request: Request, error: Exception) -> JSONResponse:
    invocation = getattr(request.state, "invocation", None)
    request_id = invocation.request_id if invocation else None
    # only when something failed: pynamodb is heavy
    from etikett.store.base import throttled, unavailable

    if throttled(error) or unavailable(error):
        logger.warning("AWS busy (%s): %s %s", error, request.method, request.url.path)
        return problem_response(
            ProblemCode.SERVICE_BUSY,
            "Busy",
            "The database or a queue is throttling requests or not answering in time; try "
            "again in a moment.",
            {"request_id": request_id},
            {"Retry-After": str(BUSY_RETRY_AFTER_SECONDS)},
        )
    logger.exception("unexpected error in %s %s", request.method, request.url.path)
    return problem_response(
        ProblemCode.INTERNAL_ERROR,
        "Internal error",
        "An unexpected error happened; nothing was changed by this request.",
        {"request_id": request_id},
    )


def install(app: FastAPI) -> None:
    # (FastAPI's decorator, called: it takes a handler of the exception class it names, where
    # add_exception_handler's type asks for one of any Exception)
    app.exception_handler(EtikettError)(_etikett_error)
    app.exception_handler(RequestValidationError)(_validation_error)
    app.exception_handler(HTTPException)(_http_error)
    app.exception_handler(Exception)(_unexpected)


def catalog() -> dict[str, dict[str, Any]]:
    """`x-etikett-problem-codes`: every code with its status and meaning."""
    return {
        str(code): {"status": code.status, "meaning": code.meaning}
        for code in sorted(ProblemCode, key=str)
    }
