"""A small HTTP client for the API with the calls most tests make."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

PASSWORD = "correct horse battery"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class Api:
    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url
        self.token = token
        self.http = httpx.Client(base_url=base_url, timeout=30)

    def headers(self, token: str | None = None) -> dict[str, str]:
        token = self.token if token is None else token  # "" sends no token at all
        return {"Authorization": f"Bearer {token}"} if token else {}

    def request(
        self, method: str, path: str, *, token: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = {**self.headers(token), **kwargs.pop("headers", {})}
        response = self.http.request(method, f"/api/v1{path}", headers=headers, **kwargs)
        self.http.cookies.clear()  # a test states its credentials explicitly, never by accident
        return response

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def as_token(self, token: str) -> Api:
        return Api(self.base_url, token)

    # --- frequent steps -------------------------------------------------------------------------

    def create_user(
        self, roles: list[str], username: str | None = None, password: str = PASSWORD
    ) -> dict[str, Any]:
        response = self.post(
            "/users",
            json={"username": username or unique("user"), "password": password, "roles": roles},
        )
        assert response.status_code == 201, response.text
        return response.json()

    def login(self, username: str, password: str = PASSWORD) -> str:
        response = self.post(
            "/auth/login", json={"username": username, "password": password}, token=""
        )
        assert response.status_code == 200, response.text
        return response.json()["token"]

    def user_session(self, roles: list[str]) -> tuple[dict[str, Any], Api]:
        user = self.create_user(roles)
        return user, self.as_token(self.login(user["username"]))

    def service_token(self, role: str, **extra: Any) -> dict[str, Any]:
        response = self.post(
            "/auth/tokens", json={"subject": unique("agent"), "role": role, **extra}
        )
        assert response.status_code == 201, response.text
        return response.json()


def problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """Assert `response` is an RFC 9457 problem with this status and code; answer its body."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json"), response.headers
    body = response.json()
    assert body["code"] == code, body
    assert body["status"] == status
    assert {"type", "title", "detail", "params"} <= set(body)
    return body


def before_expiry(steps: Callable[[datetime], T], lead: float = 2.0) -> tuple[T, datetime]:
    """`steps(expires_at)` with `expires_at` `lead` seconds ahead, done again with twice the lead
    while they ended only after that moment; what they answered, and the moment they were given.

    For tests of expiry that need something done first while it is still valid (issue a token,
    use it): a loaded machine may take longer than a short lead, and the test then cannot tell
    an expired token from a wrong answer. The service's clock is this machine's."""
    while True:
        expires_at = datetime.now(UTC) + timedelta(seconds=lead)
        answer = steps(expires_at)
        if datetime.now(UTC) < expires_at:
            return answer, expires_at
        assert lead < 60, f"the steps before expiry took longer than {lead} s"
        lead *= 2
