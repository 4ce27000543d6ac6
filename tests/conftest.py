"""Fixtures that start each real component once per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from etikett import settings
from support.client import PASSWORD, Api
from support.server import DevServer

# The longest test files, started first: `make test` hands whole files to its xdist workers in
# collection order, and one of these starting last kept one worker busy alone for minutes.
SLOW_FIRST = (
    "tests/integration/security/test_fuzz.py",
    "tests/e2e/test_console_pages.py",
    "tests/e2e/test_faults.py",
    "tests/e2e/test_deployments.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))

    def rank(item: pytest.Item) -> int:
        relative = Path(str(item.path)).relative_to(root).as_posix()
        return SLOW_FIRST.index(relative) if relative in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: the rest keeps its order


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    """Settings are read once per process; a test that changed the environment (and undid it)
    leaves them read again for the next."""
    yield
    settings.reload()


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    server = DevServer(tmp_path_factory.mktemp("etikett") / "home")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def anonymous(dev_server: DevServer) -> Api:
    return Api(dev_server.url)


@pytest.fixture(scope="session")
def admin(anonymous: Api) -> Api:
    """The first admin, created by setup (the service starts empty)."""
    response = anonymous.post("/auth/setup", json={"username": "root-admin", "password": PASSWORD})
    assert response.status_code == 201, response.text
    return anonymous.as_token(response.json()["token"])


@pytest.fixture(scope="session")
def repo() -> Path:
    return Path(__file__).resolve().parents[1]


# Runners started by the tests (in process or as `etikett-runner`) reach the printer simulator and
# test HTTP servers on loopback, which a Runner refuses unless told so (docs/guides/security.md).
os.environ.setdefault("ETIKETT_RUNNER_LOOPBACK_PRINTERS", "1")
os.environ.setdefault("ETIKETT_RUNNER_OUTGOING_PRIVATE_NETWORKS", "1")
