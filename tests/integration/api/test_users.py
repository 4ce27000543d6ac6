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
