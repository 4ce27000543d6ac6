"""Every error class answers an RFC 9457 problem with a stable code, never a 500."""

from __future__ import annotations

from support.client import Api, problem


def test_malformed_json_is_a_400(admin: Api) -> None:
    response = admin.post(
        "/users", content=b'{"username": ', headers={"content-type": "application/json"}
    )
    problem(response, 400, "request.malformed")


def test_validation_failure_is_a_422_naming_the_fields(admin: Api) -> None:
    body = problem(admin.post("/auth/tokens", json={"role": "emperor"}), 422, "request.invalid")
    assert {f["field"] for f in body["params"]["fields"]} == {"body.subject", "body.role"}
    body = problem(admin.get("/users", params={"limit": 500}), 422, "request.invalid")
    assert [f["field"] for f in body["params"]["fields"]] == ["query.limit"]


def test_unknown_route_is_a_404(anonymous: Api) -> None:
    body = problem(anonymous.get("/no-such-thing"), 404, "route.not_found")
    assert body["params"]["path"] == "/api/v1/no-such-thing"
    problem(anonymous.http.get("/elsewhere"), 404, "route.not_found")


def test_wrong_method_is_a_405_with_allow(anonymous: Api) -> None:
    response = anonymous.delete("/auth/setup")
    body = problem(response, 405, "route.method_not_allowed")
    assert body["params"]["allowed"] == ["GET", "POST"]
    assert response.headers["allow"] == "GET, POST"
    problem(anonymous.request("PUT", "/users/usr_x"), 405, "route.method_not_allowed")


def test_missing_or_bad_token_is_a_401_with_www_authenticate(anonymous: Api) -> None:
    for headers, code in (
        ({}, "auth.unauthenticated"),
        ({"Authorization": "Bearer etks_not-a-real-token"}, "auth.invalid_token"),
        ({"Authorization": "Bearer garbage"}, "auth.invalid_token"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "auth.invalid_token"),
    ):
        response = anonymous.http.get("/api/v1/auth/whoami", headers=headers)
        problem(response, 401, code)
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_forbidden_is_a_403_naming_the_required_roles(admin: Api) -> None:
    _, designer = admin.user_session(["designer"])
    body = problem(designer.get("/audit-log"), 403, "auth.forbidden")
    assert body["params"]["required"] == ["admin", "approver"]
    assert body["params"]["operation_id"] == "listAuditLog"


def test_a_cursor_we_did_not_issue_is_a_400(admin: Api) -> None:
    for cursor in ("not-base64!!", "eyJhIjogMX0", "W10"):
        problem(admin.get("/users", params={"cursor": cursor}), 400, "request.invalid_cursor")


def test_wrong_content_type_is_refused_clearly(admin: Api) -> None:
    response = admin.post("/users", content=b"username=x", headers={"content-type": "text/plain"})
    assert response.status_code in (400, 415, 422)
    assert response.headers["content-type"].startswith("application/problem+json")


def test_huge_or_odd_values_never_500(admin: Api) -> None:
    for body in (
        {"username": "x" * 10_000, "password": "p" * 2000},
        [],
        "text",
        12,
        {"username": None, "password": None},
        {"username": "ok-name", "password": "ab\x00cdefgh"},
    ):
        response = admin.post("/users", json=body)
        assert response.status_code < 500, response.text
