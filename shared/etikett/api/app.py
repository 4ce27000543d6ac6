"""Builds the ASGI app of a function: its routers, problem handlers and nothing else."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI

from etikett import API_VERSION
from etikett.api import problems


def create_app(*routers: APIRouter, title: str = "Etikett") -> FastAPI:
    app = FastAPI(
        title=title,
        version=API_VERSION,
        openapi_url=None,  # the combined document is served by getOpenApiDocument
        docs_url=None,
        redoc_url=None,
    )
    problems.install(app)
    for router in routers:
        app.include_router(router)
    return app
