"""The audit log: an entry for every mutating operation, filters, pagination, and no secrets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from support.client import PASSWORD, Api, problem, unique


def _all(api: Api, **params: str) -> list[dict]:
    items, cursor = [], None
    while True:
        page = api.get(
            "/audit-log", params={"limit": 200, **params, **({"cursor": cursor} if cursor else {})}
        ).json()
        items.extend(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            return items


def test_each_mutation_writes_an_entry_with_actor_operation_target_outcome(admin: Api) -> None:
    me = admin.get("/auth/whoami").json()
    user = admin.create_user(["designer"])
    admin.post(f"/users/{user['id']}/roles", json={"role": "operator"})
    admin.delete(f"/users/{user['id']}/roles/operator")
    admin.post(f"/users/{user['id']}/password", json={"password": "another password"})
    admin.post(f"/users/{user['id']}/deactivate")
    admin.post(f"/users/{user['id']}/reactivate")
    entries = _all(admin, target=user["id"])
    operations = [e["operation_id"] for e in reversed(entries)]
    assert operations == [
        "createUser",
        "postUserRole",
        "deleteUserRole",
        "postUserPassword",
        "postUserDeactivate",
        "postUserReactivate",
    ]
    for entry in entries:
        assert entry["actor"] == "human" and entry["subject"] == me["subject"]
        assert entry["outcome"] == "success" and entry["id"].startswith("aud_")
        assert entry["at"].endswith("Z")
    assert admin.get(f"/audit-log/{entries[0]['id']}").json() == entries[0]


def test_auth_operations_are_audited_and_hold_no_secret(admin: Api, anonymous: Api) -> None:
    user = admin.create_user(["designer"], password="secret-password-1")
    session = admin.login(user["username"], "secret-password-1")
    issued = admin.service_token("designer")
    admin.delete(f"/auth/tokens/{issued['id']}")
    anonymous.post("/auth/login", json={"username": user["username"], "password": "guessed-wrong"})
    admin.as_token(session).post("/auth/logout")

    logins = _all(admin, operation="login", target=user["id"])
    assert {e["outcome"] for e in logins} == {"success", "refused"}
    refused = next(e for e in logins if e["outcome"] == "refused")
    assert refused["actor"] == "anonymous" and refused["code"] == "auth.invalid_credentials"
    assert refused["subject"] == user["username"]
    assert [e["operation_id"] for e in _all(admin, target=issued["id"])] == [
        "deleteApiToken",
        "createApiToken",
    ]
    everything = admin.get("/audit-log", params={"limit": 200}).text
    for secret in ("secret-password-1", "guessed-wrong", session, issued["token"], PASSWORD):
        assert secret not in everything


def test_refused_changes_by_known_callers_are_audited(admin: Api) -> None:
    who, designer = admin.user_session(["designer"])
    problem(
        designer.post("/users", json={"username": unique("x"), "password": PASSWORD}),
        403,
        "auth.forbidden",
    )
    entries = _all(admin, actor=who["username"], operation="createUser")
    assert len(entries) == 1
    assert entries[0]["outcome"] == "refused" and entries[0]["code"] == "auth.forbidden"


def test_filters_combine_and_time_ranges_work(admin: Api) -> None:
    start = datetime.now(UTC) - timedelta(seconds=1)
    operator, session = admin.user_session(["operator", "admin"])
    created = session.create_user(["designer"])
    session.post(f"/users/{created['id']}/deactivate")
    end = datetime.now(UTC) + timedelta(seconds=1)

    mine = _all(admin, actor=operator["username"])
    assert [e["operation_id"] for e in mine] == ["postUserDeactivate", "createUser", "login"]
    only = _all(admin, actor=operator["username"], operation="postUserDeactivate")
    assert [e["target_id"] for e in only] == [created["id"]]
    within = _all(admin, actor=operator["username"], since=start.isoformat(), until=end.isoformat())
    assert within == mine
    before = _all(admin, actor=operator["username"], until=start.isoformat())
    assert before == []
    problem(
        admin.get("/audit-log", params={"since": end.isoformat(), "until": start.isoformat()}),
        422,
        "request.invalid",
    )


def test_pagination_is_newest_first_without_gaps_or_repeats(admin: Api) -> None:
    user = admin.create_user(["designer"])
    for role in ("operator", "approver", "admin"):
        admin.post(f"/users/{user['id']}/roles", json={"role": role})
        admin.delete(f"/users/{user['id']}/roles/{role}")
    expected = _all(admin, target=user["id"])
    assert len(expected) == 7
    paged, cursor = [], None
    while True:
        page = admin.get(
            "/audit-log",
            params={"target": user["id"], "limit": 3, **({"cursor": cursor} if cursor else {})},
        ).json()
        paged.extend(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert [e["id"] for e in paged] == [e["id"] for e in expected]
    assert [e["id"] for e in paged] == sorted((e["id"] for e in paged), reverse=True)


def test_reading_the_audit_log_needs_approver_or_admin(admin: Api) -> None:
    _, approver = admin.user_session(["approver"])
    assert approver.get("/audit-log").status_code == 200
    _, operator = admin.user_session(["operator"])
    problem(operator.get("/audit-log"), 403, "auth.forbidden")
    problem(approver.get("/audit-log/aud_unknown"), 404, "audit.not_found")
