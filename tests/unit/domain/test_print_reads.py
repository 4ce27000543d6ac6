"""`POST /print` reads in one round trip: when an earlier print found the label version, the
printer and its Runner, they are read together with the caller's token (a person's session and
user, or a service token), and still every change since is seen."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from etikett.api import printing as printing_routes
from etikett.api.app import create_app
from etikett.domain.printing import jobs, print_archive
from etikett.domain.users import auth, tokens, users
from etikett.domain.users.auth import SetupRequest
from etikett.domain.users.users import NewUser
from etikett.ids import new_id
from unit.domain import aws_calls, build
from unit.domain.callers import human

pytestmark = pytest.mark.usefixtures("aws")

PASSWORD = "correct horse battery staple"
DOCUMENT: dict[str, Any] = {
    "size": {"width_mm": 50, "height_mm": 25},
    "objects": [
        {"id": "title", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 9, "expression": "name"}
    ],
    "variables": [{"name": "name", "type": "string", "sample": "Etikett"}],
}
READS = ("GetItem", "GetItems", "Query", "Scan")


def _session_token() -> str:
    name = f"operator.{new_id('x')[-8:].lower()}"
    users.create(
        human("createUser", "admin"),
        NewUser(username=name, password=PASSWORD, roles=["operator"]),
    )
    return auth.login(human("postLogin"), SetupRequest(username=name, password=PASSWORD)).token


def _service_token() -> str:
    request = tokens.NewApiToken(subject="line-7", role="operator")
    return tokens.issue_api_token(human("createApiToken", "admin"), request).token


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(printing_routes.routes))


def _printer() -> tuple[str, str]:
    runner = build.runner()
    name = f"reads-{runner.id[-8:].lower()}"
    build.printer(runner.id, name)
    return runner.id, name


@pytest.mark.parametrize("token_of", [_session_token, _service_token], ids=["session", "service"])
def test_a_print_like_an_earlier_one_makes_one_read(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, token_of: Any
) -> None:
    runner_id, name = _printer()
    label = build.released_label(DOCUMENT)
    headers = {"Authorization": f"Bearer {token_of()}"}

    def print_one(value: str) -> str:
        body = {"label_id": label, "printer": name, "variables": {"name": value}}
        answer = client.post("/api/v1/print", json=body, headers=headers)
        assert answer.status_code == 202, answer.text
        return str(answer.json()["job_id"])

    print_one("a")  # finds the released version, the printer and its Runner
    calls = aws_calls.recorded(monkeypatch)
    again = print_one("b")
    assert [c for c in calls if c.endswith(READS)] == ["TransactGetItems"]
    assert jobs.get(again).runner_id == runner_id

    # A release made since is read with the token, seen, and printed.
    build.release_taller(label)
    newer = print_one("c")
    (entry,) = print_archive.list_entries(10, None, job_id=newer).items
    assert entry.label_version == 2


def test_a_refused_caller_reads_along_but_prints_nothing(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The targets are read with the token, before its roles are known: a caller without the
    operator role is still refused, and nothing of what was read reaches its answer."""
    _, name = _printer()
    label = build.released_label(DOCUMENT)
    operator = {"Authorization": f"Bearer {_service_token()}"}
    body = {"label_id": label, "printer": name, "variables": {"name": "a"}}
    assert client.post("/api/v1/print", json=body, headers=operator).status_code == 202
    request = tokens.NewApiToken(subject="designer-bot", role="designer")
    designer = tokens.issue_api_token(human("createApiToken", "admin"), request).token
    calls = aws_calls.recorded(monkeypatch)
    headers = {"Authorization": f"Bearer {designer}"}
    refused = client.post("/api/v1/print", json=body, headers=headers)
    assert refused.status_code == 403 and refused.json()["code"] == "auth.forbidden"
    assert label not in refused.text and name not in refused.text
    assert "TransactWriteItems" not in calls and "SendMessage" not in calls


@pytest.mark.parametrize("media_type", ["text/plain", "application/json"])
def test_a_hostile_body_is_refused_not_read_along(client: TestClient, media_type: str) -> None:
    """What the route names from its body before the caller is known never fails the request:
    a body nested too deep to parse is refused with its reason, as without the read along."""
    nested = "[" * 100_000 + "]" * 100_000
    headers = {"Authorization": f"Bearer {_service_token()}", "Content-Type": media_type}
    answer = client.post("/api/v1/print", content=nested, headers=headers)
    assert answer.status_code in (400, 415), answer.text
    assert answer.headers["content-type"] == "application/problem+json"
