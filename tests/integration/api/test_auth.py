"""Authentication: login, logout, cookies, service tokens, whoami, own password, the throttle."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from support.client import PASSWORD, Api, before_expiry, problem, unique


def test_login_answers_a_session_token_and_an_httponly_cookie(admin: Api, anonymous: Api) -> None:
    user = admin.create_user(["designer"])
    response = anonymous.post(
        "/auth/login", json={"username": user["username"], "password": PASSWORD}
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "expires_at", "user"}
    assert body["user"]["id"] == user["id"]
    assert body["token"].startswith("etku_") and len(body["token"]) >= 5 + 43
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"etikett_session={body['token']};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie

    # The cookie alone authenticates (the browser console), as a human actor.
    whoami = anonymous.get(
        "/auth/whoami", headers={"Cookie": f"etikett_session={body['token']}"}
    ).json()
    assert whoami == {
        "actor": "human",
        "subject": user["username"],
        "roles": ["designer"],
        "user_id": user["id"],
        "token_id": None,
    }


def test_usernames_are_case_insensitive_at_login(admin: Api) -> None:
    user = admin.create_user(["designer"], username=unique("MixedCase"))
    assert admin.login(user["username"].upper())


def test_logout_ends_exactly_this_session(admin: Api) -> None:
    user = admin.create_user(["operator"])
    first = admin.as_token(admin.login(user["username"]))
    second = admin.as_token(admin.login(user["username"]))
    response = first.post("/auth/logout")
    assert response.status_code == 204
    assert (
        'etikett_session=""' in response.headers["set-cookie"]
        or "Max-Age=0" in response.headers["set-cookie"]
    )
    problem(first.get("/auth/whoami"), 401, "auth.invalid_token")
    assert second.get("/auth/whoami").status_code == 200


def test_logout_with_a_service_token_is_refused(admin: Api) -> None:
    token = admin.service_token("designer")
    problem(admin.as_token(token["token"]).post("/auth/logout"), 409, "auth.not_a_session")


def test_wrong_credentials_are_one_answer_for_unknown_user_and_wrong_password(
    admin: Api, anonymous: Api
) -> None:
    user = admin.create_user(["designer"])
    wrong = problem(
        anonymous.post(
            "/auth/login", json={"username": user["username"], "password": "not the password"}
        ),
        401,
        "auth.invalid_credentials",
    )
    unknown = problem(
        anonymous.post(
            "/auth/login", json={"username": unique("ghost"), "password": "not the password"}
        ),
        401,
        "auth.invalid_credentials",
    )
    assert wrong["detail"] == unknown["detail"]


def test_service_token_is_shown_once_and_listed_without_secret(admin: Api) -> None:
    issued = admin.service_token("designer")
    assert set(issued) >= {"id", "token", "subject", "role", "expires_at", "created_at"}
    assert issued["id"].startswith("tok_")
    assert issued["token"].startswith("etks_") and len(issued["token"]) >= 5 + 43
    assert issued["expires_at"] is None

    agent = admin.as_token(issued["token"])
    assert agent.get("/auth/whoami").json() == {
        "actor": "service",
        "subject": issued["subject"],
        "roles": ["designer"],
        "user_id": None,
        "token_id": issued["id"],
    }

    seen = []
    cursor = None
    while True:
        response = admin.get(
            "/auth/tokens", params={"limit": 200, **({"cursor": cursor} if cursor else {})}
        )
        assert response.status_code == 200
        assert issued["token"] not in response.text
        page = response.json()
        seen.extend(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    listed = next(item for item in seen if item["id"] == issued["id"])
    assert "token" not in listed and "token_hash" not in listed
    assert listed["subject"] == issued["subject"]


def test_revoked_token_stops_working_at_once(admin: Api) -> None:
    issued = admin.service_token("operator")
    agent = admin.as_token(issued["token"])
    assert agent.get("/auth/whoami").status_code == 200
    assert admin.delete(f"/auth/tokens/{issued['id']}").status_code == 204
    problem(agent.get("/auth/whoami"), 401, "auth.invalid_token")
    # Revoking again changes nothing; an unknown id is a 404.
    assert admin.delete(f"/auth/tokens/{issued['id']}").status_code == 204
    problem(admin.delete("/auth/tokens/tok_unknown"), 404, "token.not_found")


def test_token_expiry(admin: Api) -> None:
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    body = problem(
        admin.post(
            "/auth/tokens", json={"subject": "late", "role": "designer", "expires_at": past}
        ),
        422,
        "request.invalid",
    )
    assert [f["field"] for f in body["params"]["fields"]] == ["body.expires_at"]

    def issue_and_use(expires_at: datetime) -> tuple[dict[str, Any], Api, int]:
        issued = admin.service_token("designer", expires_at=expires_at.isoformat())
        agent = admin.as_token(issued["token"])
        return issued, agent, agent.get("/auth/whoami").status_code

    (issued, agent, status), soon = before_expiry(issue_and_use)
    assert issued["expires_at"].startswith(soon.strftime("%Y-%m-%dT%H:%M:%S"))
    assert status == 200  # used before it expired
    time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.3)
    response = agent.get("/auth/whoami")
    problem(response, 401, "auth.token_expired")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_only_admins_issue_tokens(admin: Api) -> None:
    _, designer = admin.user_session(["designer"])
    body = problem(
        designer.post("/auth/tokens", json={"subject": "x", "role": "admin"}), 403, "auth.forbidden"
    )
    assert body["params"]["required"] == ["admin"]
    service = admin.as_token(admin.service_token("operator")["token"])
    problem(service.get("/auth/tokens"), 403, "auth.forbidden")


def test_change_own_password_keeps_this_session_and_ends_the_others(admin: Api) -> None:
    user = admin.create_user(["designer"])
    current = admin.as_token(admin.login(user["username"]))
    other = admin.as_token(admin.login(user["username"]))
    problem(
        current.post(
            "/auth/password",
            json={"current_password": "wrong password", "new_password": "a new secret"},
        ),
        403,
        "auth.wrong_password",
    )
    problem(
        current.post(
            "/auth/password", json={"current_password": PASSWORD, "new_password": "short"}
        ),
        422,
        "auth.weak_password",
    )
    response = current.post(
        "/auth/password", json={"current_password": PASSWORD, "new_password": "a new secret"}
    )
    assert response.status_code == 204
    assert current.get("/auth/whoami").status_code == 200
    problem(other.get("/auth/whoami"), 401, "auth.invalid_token")
    assert admin.login(user["username"], "a new secret")
    problem(
        admin.post(
            "/auth/login", token="", json={"username": user["username"], "password": PASSWORD}
        ),
        401,
        "auth.invalid_credentials",
    )


def test_change_own_password_is_for_people_only(admin: Api) -> None:
    agent = admin.as_token(admin.service_token("admin")["token"])
    problem(
        agent.post("/auth/password", json={"current_password": "x", "new_password": "y" * 10}),
        403,
        "auth.human_required",
    )


def test_repeated_failed_logins_are_throttled_per_username_and_address(
    admin: Api, anonymous: Api
) -> None:
    user = admin.create_user(["designer"])
    bystander = admin.create_user(["designer"])
    for _ in range(5):
        problem(
            anonymous.post(
                "/auth/login", json={"username": user["username"], "password": "wrong guess"}
            ),
            401,
            "auth.invalid_credentials",
        )
    for password in ("wrong guess", PASSWORD):  # even the right password waits now
        response = anonymous.post(
            "/auth/login", json={"username": user["username"], "password": password}
        )
        body = problem(response, 429, "auth.login_throttled")
        retry_after = int(response.headers["retry-after"])
        assert 1 <= retry_after <= 30  # the first wait; each further failure doubles it
        assert body["params"]["retry_after"] == retry_after
    assert anonymous.login(bystander["username"])  # other usernames are not affected
