"""Which bodies an operation takes: JSON, or form data where it declares an upload (as
`postImport` does); anything else is 415, decided from the route itself."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from fastapi import APIRouter, FastAPI, File, UploadFile
from fastapi.testclient import TestClient
from pydantic import BaseModel

from etikett.api import problems
from etikett.api.access import FORM_MEDIA_TYPES, accepted_media_types, public
from etikett.api.routing import router
from etikett.domain.actors import Invocation


class Named(BaseModel):
    name: str


def _routes() -> APIRouter:
    routes = router(prefix="/api/v1")

    @routes.post("/upload", operation_id="postUploadProbe")
    async def upload(
        invocation: Annotated[Invocation, public()], file: UploadFile = File(...)
    ) -> dict[str, Any]:
        return {"name": file.filename, "size": len(await file.read())}

    @routes.post("/named", operation_id="postNamedProbe")
    def named(body: Named, invocation: Annotated[Invocation, public()]) -> dict[str, Any]:
        return {"name": body.name}

    return routes


def _app() -> FastAPI:
    app = FastAPI()
    problems.install(app)
    app.include_router(_routes())
    return app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(_app())


def test_the_route_says_what_it_takes() -> None:
    by_id = {getattr(r, "operation_id", None): r for r in _routes().routes}
    assert accepted_media_types(by_id["postUploadProbe"]) == FORM_MEDIA_TYPES
    assert accepted_media_types(by_id["postNamedProbe"]) == ("application/json",)


def test_an_upload_takes_multipart(client: TestClient) -> None:
    response = client.post("/api/v1/upload", files={"file": ("a.zpl", b"^XA^XZ")})
    assert response.status_code == 200, response.text
    assert response.json() == {"name": "a.zpl", "size": 6}


@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_an_upload_refuses_other_bodies(client: TestClient, content_type: str) -> None:
    response = client.post(
        "/api/v1/upload", content=b'{"file": "x"}', headers={"Content-Type": content_type}
    )
    assert response.status_code == 415, response.text
    assert response.json()["code"] == "request.unsupported_media_type"
    assert response.json()["params"]["accepted"] == list(FORM_MEDIA_TYPES)


def test_a_json_operation_refuses_form_data(client: TestClient) -> None:
    response = client.post("/api/v1/named", files={"file": ("a.json", b'{"name": "x"}')})
    assert response.status_code == 415, response.text
    assert client.post("/api/v1/named", json={"name": "x"}).json() == {"name": "x"}
