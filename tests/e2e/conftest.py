"""Each end-to-end module gets a service of its own (module scope): the modules add and remove
Runners, printers and counters, and must not see each other's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.client import PASSWORD, Api
from support.server import DevServer


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[DevServer]:
    service = DevServer(workdir / "home")
    service.start()
    yield service
    service.stop()


@pytest.fixture(scope="module")
def admin(server: DevServer) -> Api:
    anonymous = Api(server.url)
    response = anonymous.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
    assert response.status_code == 201, response.text
    return anonymous.as_token(response.json()["token"])
