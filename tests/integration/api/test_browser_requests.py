"""Requests as a browser could send them, over real HTTP: a change signed in by the session cookie
needs the console's CSRF header and a page of this origin; bodies are JSON (or, for an upload,
form data) and nothing is guessed. Bearer requests only meet the last rule."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from etikett.api.access import CSRF_HEADER, SESSION_COOKIE
from support.client import Api, problem, unique

NEW_LABEL = {"name": "CSRF probe", "width_mm": 50, "height_mm": 30}


@pytest.fixture(scope="module")
def designer_session(admin: Api) -> str:
    user = admin.create_user(["designer"])
    return admin.login(user["username"])


@pytest.fixture(scope="module")
def browser(admin: Api, designer_session: str) -> Iterator[httpx.Client]:
    """A client holding the session cookie only, as the browser does."""
    client = httpx.Client(
        base_url=f"{admin.base_url}/api/v1",
        cookies={SESSION_COOKIE: designer_session},
        timeout=30,
    )
    yield client
    client.close()


def _label_names(admin: Api) -> set[str]:
    return {label["name"] for label in admin.get("/labels", params={"limit": 200}).json()["items"]}


def test_the_console_request_is_accepted(browser: httpx.Client, admin: Api) -> None:
    name = unique("console")
    response = browser.post(
        "/labels/from-dimensions",
        json={**NEW_LABEL, "name": name},
        headers={CSRF_HEADER: "1", "Origin": admin.base_url, "Sec-Fetch-Site": "same-origin"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name


def test_a_cookie_change_without_the_csrf_header_is_refused(
    browser: httpx.Client, admin: Api
) -> None:
    name = unique("headerless")
    body = problem(
        browser.post(
            "/labels/from-dimensions",
            json={**NEW_LABEL, "name": name},
            headers={"Origin": admin.base_url},
        ),
        403,
        "auth.csrf_required",
    )
    assert body["params"] == {"header": CSRF_HEADER}
    assert name not in _label_names(admin)


def test_reads_with_the_cookie_need_no_header(browser: httpx.Client) -> None:
    assert browser.get("/auth/whoami").json()["actor"] == "human"


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        # Another port of the same host is the same site: SameSite=Strict still sends the cookie.
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_cookie_change_from_another_origin_is_refused(
    browser: httpx.Client, admin: Api, headers: dict[str, str]
) -> None:
    name = unique("foreign")
    response = browser.post(
        "/labels/from-dimensions",
        json={**NEW_LABEL, "name": name},
        headers={CSRF_HEADER: "1", **headers},
    )
    problem(response, 403, "auth.origin_refused")
    assert name not in _label_names(admin)


def test_signing_in_from_another_origin_is_refused(admin: Api, anonymous: Api) -> None:
    user = admin.create_user(["designer"])
    credentials = {"username": user["username"], "password": "correct horse battery"}
    refused = anonymous.post(
        "/auth/login", json=credentials, headers={"Origin": "http://evil.example"}
    )
    problem(refused, 403, "auth.origin_refused")
    assert "set-cookie" not in refused.headers
    same_origin = anonymous.post(
        "/auth/login", json=credentials, headers={"Origin": admin.base_url}
    )
    assert same_origin.status_code == 200, same_origin.text


def test_bearer_requests_are_unaffected(admin: Api, designer_session: str) -> None:
    api = admin.as_token(designer_session)
    response = api.post(
        "/labels/from-dimensions",
        json={**NEW_LABEL, "name": unique("bearer")},
        headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_body_that_is_not_json_is_refused(
    admin: Api, designer_session: str, content_type: str | None
) -> None:
    api = admin.as_token(designer_session)
    name = unique("typed")
    headers = {"Content-Type": content_type} if content_type else {}
    request = httpx.Request(
        "POST",
        f"{admin.base_url}/api/v1/labels/from-dimensions",
        content=f'{{"name": "{name}", "width_mm": 50, "height_mm": 30}}'.encode(),
        headers={"Authorization": f"Bearer {designer_session}", **headers},
    )
    if content_type is None:
        request.headers.pop("content-type", None)
    with httpx.Client(timeout=30) as client:
        response = client.send(request)
    body = problem(response, 415, "request.unsupported_media_type")
    assert body["params"]["accepted"] == ["application/json"]
    assert body["params"]["content_type"] == content_type
    assert name not in _label_names(api)


def test_json_with_a_structured_suffix_and_charset_is_json(admin: Api) -> None:
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        response = admin.post(
            "/labels/from-dimensions",
            content=b'{"name": "suffix", "width_mm": 50, "height_mm": 30}',
            headers={"Content-Type": content_type},
        )
        assert response.status_code == 201, (content_type, response.text)


def test_a_body_on_an_operation_without_one_must_still_be_json(admin: Api) -> None:
    label = admin.post("/labels/from-dimensions", json=NEW_LABEL).json()
    response = admin.post(
        f"/labels/{label['id']}/archive",
        content=b"archived=true",
        headers={"Content-Type": "text/plain"},
    )
    problem(response, 415, "request.unsupported_media_type")
    assert admin.get(f"/labels/{label['id']}").json()["archived"] is False
    assert admin.post(f"/labels/{label['id']}/archive").status_code == 200  # no body at all
