"""One dev server for the credential and AI tests (its own, so "no credential" is a state it can
be in), with a short model timeout, and one language-model server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from support.client import PASSWORD, Api, unique
from support.model_server import ModelServer
from support.server import DevServer

KEY = "sk-test-Zq8Xv3Lm0Pn4Rt6Wy2Bc"
AI_TIMEOUT = 2


@pytest.fixture(scope="package")
def ai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = DevServer(
        tmp_path_factory.mktemp("ai") / "home",
        env={"ETIKETT_AI_TIMEOUT_SECONDS": str(AI_TIMEOUT)},
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def root(ai_server: DevServer) -> Api:
    """The first admin, a person in a session."""
    api = Api(ai_server.url)
    response = api.post("/auth/setup", json={"username": "ai-admin", "password": PASSWORD})
    assert response.status_code == 201, response.text
    return api.as_token(response.json()["token"])


@pytest.fixture(scope="package")
def people(root: Api) -> dict[str, Api]:
    """A person in a session per role."""
    return {role: root.user_session([role])[1] for role in ("designer", "operator", "approver")}


@pytest.fixture(scope="package")
def agents(root: Api) -> dict[str, Api]:
    """A service-account token per role (admin included)."""
    return {
        role: root.as_token(root.service_token(role)["token"])
        for role in ("designer", "operator", "approver", "admin")
    }


@pytest.fixture(scope="package")
def model() -> Iterator[ModelServer]:
    with ModelServer(api_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_model(request: pytest.FixtureRequest) -> Iterator[None]:
    if "model" in request.fixturenames:
        request.getfixturevalue("model").clear()
    yield


def language_model(
    admin: Api, model: ModelServer, provider: str, *, key: str | None = KEY, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ref": unique(provider.split("-")[0]),
        "kind": "language-model",
        "provider": provider,
        "model": f"{provider}-model",
        "endpoint": model.endpoint(provider),
        **extra,
    }
    if key is not None:
        body["apiKey"] = key
    response = admin.post("/credentials", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def clear_credentials(admin: Api) -> None:
    for item in admin.get("/credentials", params={"limit": 200}).json()["items"]:
        assert admin.delete(f"/credentials/{item['ref']}").status_code == 204


def aws(server: DevServer, service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=server.aws_endpoint(),
        region_name="eu-central-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def table_named(server: DevServer, part: str) -> str:
    names = aws(server, "dynamodb").list_tables()["TableNames"]
    return next(name for name in names if part in name)
