"""Every operation as a browser could reach it, generated from the route table: a change signed in
by the session cookie needs the console's CSRF header (uploads too), a change without an
`Authorization` header from a page of another origin is refused (signing in too), and the MCP
endpoint never takes the cookie. Each refusal comes before the token is even looked up, so no
store is needed to prove it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from etikett.api.access import (
    CSRF_HEADER,
    SAFE_METHODS,
    SESSION_COOKIE,
    Access,
    EnrollmentReadAccess,
    EnrollmentTokenAccess,
    RunnerCertificateAccess,
    accepted_media_types,
)
from etikett.api.app import create_app
from etikett.api.groups import all_routes
from etikett.api.routing import EtikettRoute

# The browser sends the session cookie with every request to the API's origin.
COOKIE = {"Cookie": f"{SESSION_COOKIE}=etku_probe"}
BROWSER = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin", **COOKIE}


def _changes() -> list[tuple[str, str, EtikettRoute]]:
    found = []
    for router in all_routes():
        for route in router.routes:
            if not isinstance(route, EtikettRoute):
                continue
            for method in sorted(route.methods - SAFE_METHODS):
                found.append((method, route.path, route))
    return found


CHANGES = _changes()
BY_COOKIE = [
    (m, p, r)
    for m, p, r in CHANGES
    if r.access.authenticated
    and type(r.access) is Access  # the agent channel and enrollment take no cookie
]
ANONYMOUS = [(m, p, r) for m, p, r in CHANGES if not r.access.authenticated]


def _path(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x_probe", template)


def _id(case: tuple[str, str, Any]) -> str:
    return f"{case[0]} {case[1]}"


@pytest.fixture(scope="module")
def client() -> TestClient:
    """The browser: it holds the session cookie and sends it with every request."""
    return TestClient(
        create_app(*all_routes(), fallback=True),
        raise_server_exceptions=False,
    )


def test_the_route_table_has_cookie_changes_uploads_and_public_changes() -> None:
    """The generated cases below cover what they claim to (an empty list proves nothing)."""
    assert len(BY_COOKIE) > 60
    uploads = [r for _, _, r in BY_COOKIE if "multipart/form-data" in accepted_media_types(r)]
    assert uploads, "no upload operation found"
    assert {r.operation_id for _, _, r in ANONYMOUS} >= {"login", "postAuthSetup"}
    kinds = {type(r.access) for _, _, r in CHANGES}
    assert kinds >= {Access, RunnerCertificateAccess, EnrollmentTokenAccess}
    assert all(isinstance(r.access, Access) for _, _, r in CHANGES)
    assert EnrollmentReadAccess not in {type(r.access) for _, _, r in BY_COOKIE}


@pytest.mark.parametrize("case", BY_COOKIE, ids=_id)
def test_a_cookie_change_needs_the_csrf_header(
    client: TestClient, case: tuple[str, str, EtikettRoute]
) -> None:
    method, path, route = case
    response = client.request(method, _path(path), headers=BROWSER)
    assert response.status_code == 403, (route.operation_id, response.text)
    assert response.json()["code"] == "auth.csrf_required", route.operation_id


@pytest.mark.parametrize("case", BY_COOKIE, ids=_id)
def test_a_cookie_change_from_another_origin_is_refused(
    client: TestClient, case: tuple[str, str, EtikettRoute]
) -> None:
    method, path, route = case
    response = client.request(
        method,
        _path(path),
        headers={CSRF_HEADER: "1", "Origin": "http://evil.example", **COOKIE},
    )
    assert response.status_code == 403, (route.operation_id, response.text)
    assert response.json()["code"] == "auth.origin_refused", route.operation_id


@pytest.mark.parametrize("case", ANONYMOUS, ids=_id)
def test_a_public_change_from_another_origin_is_refused(
    client: TestClient, case: tuple[str, str, EtikettRoute]
) -> None:
    method, path, route = case
    response = client.request(
        method,
        _path(path),
        headers={"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"},
        content=b'{"username": "admin", "password": "guess"}',
    )
    assert response.status_code == 403, (route.operation_id, response.text)
    assert response.json()["code"] == "auth.origin_refused", route.operation_id


def test_the_mcp_endpoint_ignores_the_cookie(client: TestClient) -> None:
    response = client.request(
        "POST",
        "/mcp",
        headers={CSRF_HEADER: "1", **BROWSER, "Content-Type": "application/json"},
        content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    )
    assert response.status_code == 401, response.text
    assert response.json()["code"] == "auth.unauthenticated"
