"""User management: create, read, list, roles, passwords, deactivation and reactivation."""

from __future__ import annotations

from support.client import PASSWORD, Api, problem, unique


def test_create_and_read_a_user_without_password_material(admin: Api) -> None:
    name = unique("Designer")
    response = admin.post(
        "/users",
        json={
            "username": name,
            "password": PASSWORD,
            "roles": ["designer", "operator"],
            "display_name": "Dana Designer",
        },
    )
    assert response.status_code == 201
    user = response.json()
    assert set(user) == {
        "id",
        "username",
        "display_name",
        "roles",
        "active",
        "created_at",
        "updated_at",
    }
    assert user["id"].startswith("usr_")
    assert user["roles"] == ["designer", "operator"] and user["active"] is True
    assert PASSWORD not in response.text and "argon2" not in response.text
    assert admin.get(f"/users/{user['id']}").json() == user
    problem(admin.get("/users/usr_unknown"), 404, "user.not_found")


def test_usernames_are_unique_regardless_of_case(admin: Api) -> None:
    name = unique("Unique")
    admin.create_user(["designer"], username=name)
    body = problem(
        admin.post("/users", json={"username": name.upper(), "password": PASSWORD}),
        409,
        "user.username_taken",
    )
    assert body["params"]["username"] == name.upper()


def test_bad_user_input_names_the_fields(admin: Api) -> None:
    body = problem(
        admin.post(
            "/users",
            json={
                "username": "has space",
                "password": PASSWORD,
                "roles": ["wizard"],
                "colour": "red",
            },
        ),
        422,
        "request.invalid",
    )
    fields = {f["field"] for f in body["params"]["fields"]}
    assert fields == {"body.username", "body.roles.0", "body.colour"}
    problem(
        admin.post("/users", json={"username": unique("weak"), "password": "short"}),
        422,
        "auth.weak_password",
    )


def test_list_users_is_paginated_and_complete(admin: Api) -> None:
    prefix = unique("page")
    created = {admin.create_user(["designer"], username=f"{prefix}-{i}")["id"] for i in range(5)}
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = admin.get("/users", params=params).json()
        assert len(page["items"]) <= 2
        seen.extend(item["id"] for item in page["items"])
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert created <= set(seen)
    assert len(seen) == len(set(seen))  # no user twice
    assert pages >= 3
    names = [
        u["username"].casefold() for u in admin.get("/users", params={"limit": 200}).json()["items"]
    ]
    assert names == sorted(names)


def test_grant_and_revoke_roles_take_effect_at_once(admin: Api) -> None:
    user, session = admin.user_session(["designer"])
    problem(session.get("/users"), 403, "auth.forbidden")
    granted = admin.post(f"/users/{user['id']}/roles", json={"role": "admin"})
    assert granted.status_code == 200 and granted.json()["roles"] == ["admin", "designer"]
    assert session.get("/users").status_code == 200  # the same session, new role
    revoked = admin.delete(f"/users/{user['id']}/roles/admin")
    assert revoked.status_code == 200 and revoked.json()["roles"] == ["designer"]
    problem(session.get("/users"), 403, "auth.forbidden")
    problem(admin.delete(f"/users/{user['id']}/roles/admin"), 404, "user.role_not_held")
    problem(
        admin.post(f"/users/{user['id']}/roles", json={"role": "wizard"}), 422, "request.invalid"
    )


def test_set_password_ends_the_users_sessions(admin: Api) -> None:
    user, session = admin.user_session(["operator"])
    assert (
        admin.post(f"/users/{user['id']}/password", json={"password": "fresh password"}).status_code
        == 204
    )
    problem(session.get("/auth/whoami"), 401, "auth.invalid_token")
    assert admin.login(user["username"], "fresh password")


def test_deactivation_ends_sessions_and_blocks_login_until_reactivated(admin: Api) -> None:
    user, session = admin.user_session(["operator"])
    deactivated = admin.post(f"/users/{user['id']}/deactivate")
    assert deactivated.status_code == 200 and deactivated.json()["active"] is False
    problem(session.get("/auth/whoami"), 401, "auth.invalid_token")
    problem(
        admin.post(
            "/auth/login", token="", json={"username": user["username"], "password": PASSWORD}
        ),
        403,
        "auth.user_inactive",
    )
    reactivated = admin.post(f"/users/{user['id']}/reactivate")
    assert reactivated.status_code == 200 and reactivated.json()["active"] is True
    assert admin.login(user["username"])


def test_the_last_active_admin_cannot_be_removed(admin: Api) -> None:
    # Other tests may add admins; deactivate every other admin first to be the last one standing.
    me = admin.get("/auth/whoami").json()
    others = [
        u
        for u in admin.get("/users", params={"limit": 200}).json()["items"]
        if "admin" in u["roles"] and u["active"] and u["id"] != me["user_id"]
    ]
    for other in others:
        assert admin.post(f"/users/{other['id']}/deactivate").status_code == 200
    problem(admin.post(f"/users/{me['user_id']}/deactivate"), 409, "user.last_admin")
    problem(admin.delete(f"/users/{me['user_id']}/roles/admin"), 409, "user.last_admin")
    second = admin.create_user(["admin"])
    revoked = admin.delete(f"/users/{second['id']}/roles/admin")
    assert revoked.status_code == 200


def test_user_management_is_for_admins(admin: Api) -> None:
    target = admin.create_user(["designer"])
    for roles in (["designer"], ["operator"], ["approver"]):
        _, session = admin.user_session(roles)
        for method, path, body in (
            ("GET", "/users", None),
            ("POST", "/users", {"username": unique("x"), "password": PASSWORD}),
            ("GET", f"/users/{target['id']}", None),
            ("POST", f"/users/{target['id']}/roles", {"role": "admin"}),
            ("DELETE", f"/users/{target['id']}/roles/designer", None),
            ("POST", f"/users/{target['id']}/password", {"password": "whatever123"}),
            ("POST", f"/users/{target['id']}/deactivate", None),
            ("POST", f"/users/{target['id']}/reactivate", None),
        ):
            problem(session.request(method, path, json=body), 403, "auth.forbidden")
    assert admin.get(f"/users/{target['id']}").json()["roles"] == ["designer"]


def test_an_agent_cannot_mint_a_person_while_the_policy_is_on(admin: Api) -> None:
    """With `aiFreigabePflicht` on, an admin token could otherwise create a user (or set a
    password, grant a role, bring a user back) and sign in as that person: a human session
    that approves what agents made."""
    agent = admin.as_token(admin.service_token("admin")["token"])
    target = admin.create_user(["designer"])
    admin.post(f"/users/{target['id']}/deactivate")
    name = unique("minted")
    attempts = (
        ("createUser", "/users", {"username": name, "password": PASSWORD, "roles": ["admin"]}),
        ("postUserRole", f"/users/{target['id']}/roles", {"role": "approver"}),
        ("postUserPassword", f"/users/{target['id']}/password", {"password": "agent's choice"}),
        ("postUserReactivate", f"/users/{target['id']}/reactivate", None),
    )
    for operation, path, body in attempts:
        refused = problem(agent.post(path, json=body), 403, "policy.human_required")
        assert refused["params"]["policy"] == "aiFreigabePflicht", operation
    # Nothing changed: no user, no role, the old password, still inactive.
    usernames = {u["username"] for u in admin.get("/users", params={"limit": 200}).json()["items"]}
    assert name not in usernames
    after = admin.get(f"/users/{target['id']}").json()
    assert after["roles"] == ["designer"] and after["active"] is False
    entries = admin.get(
        "/audit-log", params={"actor": agent.get("/auth/whoami").json()["subject"]}
    ).json()["items"]
    assert {(e["operation_id"], e["outcome"], e["code"]) for e in entries} >= {
        (operation, "refused", "policy.human_required") for operation, _, _ in attempts
    }
    # Taking access away stays open to agents (locking an account out must never wait).
    assert agent.post(f"/users/{target['id']}/deactivate").status_code == 200
    assert agent.delete(f"/users/{target['id']}/roles/designer").status_code == 200


def test_with_the_policy_off_an_admin_token_manages_users(admin: Api) -> None:
    agent = admin.as_token(admin.service_token("admin")["token"])
    try:
        assert (
            admin.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": False})
        ).status_code == 200
        created = agent.post("/users", json={"username": unique("bot-made"), "password": PASSWORD})
        assert created.status_code == 201, created.text
        user_id = created.json()["id"]
        assert agent.post(f"/users/{user_id}/roles", json={"role": "operator"}).status_code == 200
        reset = agent.post(f"/users/{user_id}/password", json={"password": "fresh password"})
        assert reset.status_code == 204
    finally:
        admin.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": True})


def test_a_token_an_agent_mints_is_never_a_person(admin: Api) -> None:
    """createApiToken makes service actors only, whoever asks and whatever subject it names."""
    agent = admin.as_token(admin.service_token("admin")["token"])
    person = admin.create_user(["designer"])
    issued = agent.post("/auth/tokens", json={"subject": person["username"], "role": "admin"})
    assert issued.status_code == 201, issued.text
    assert issued.json()["token"].startswith("etks_")
    minted = admin.as_token(issued.json()["token"])
    who = minted.get("/auth/whoami").json()
    assert who["actor"] == "service" and who["user_id"] is None
    change = {"current_password": PASSWORD, "new_password": "x" * 12}
    problem(minted.post("/auth/password", json=change), 403, "auth.human_required")
    problem(minted.post("/auth/logout"), 409, "auth.not_a_session")
    problem(
        minted.post("/users", json={"username": unique("via-minted"), "password": PASSWORD}),
        403,
        "policy.human_required",
    )
