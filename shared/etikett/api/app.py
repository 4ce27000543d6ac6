"""Builds the ASGI app of a function: its routers, problem handlers and nothing else."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from etikett import API_VERSION
from etikett.api import problems


def create_app(*routers: APIRouter, title: str = "Etikett", fallback: bool = False) -> FastAPI:
    """`fallback`: answer every other path with a precise 404 or 405 (API Gateway's `$default`)."""
    app = FastAPI(
        title=title,
        version=API_VERSION,
        openapi_url=None,  # the combined document is served by getOpenApiDocument
        docs_url=None,
        redoc_url=None,
    )
    problems.install(app)
    for router in routers:
        # The routes themselves, in order: `include_router` would keep a second, derived copy of
        # each route, which FastAPI builds in full on the first request (all of them at once).
        # Our routers carry no prefix, tags or dependencies that an inclusion would add.
        app.router.routes.extend(router.routes)
    if fallback:
        app.router.add_route(
            "/{path:path}", problems.unrouted, methods=list(_ALL_METHODS), include_in_schema=False
        )
    return app


_ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
