"""Fixtures of the MCP tests: the endpoint's URL and the served OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest

from support.client import Api
from support.server import DevServer


@pytest.fixture(scope="module")
def mcp_url(dev_server: DevServer) -> str:
    return f"{dev_server.url}/mcp"


@pytest.fixture(scope="module")
def document(anonymous: Api) -> dict[str, Any]:
    response = anonymous.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
