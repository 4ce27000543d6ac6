"""A fresh service: first-time setup, then a restart that loses nothing."""

from __future__ import annotations

import time
from pathlib import Path

from support.client import PASSWORD, Api, problem
from support.server import DevServer


def test_setup_then_restart_keeps_everything(tmp_path: Path) -> None:
    server = DevServer(tmp_path / "home")
    banner = server.start()
    assert f"serving at {server.url}" in banner
    assert "First-time setup needed" in banner
    api = Api(server.url)
    try:
        assert api.get("/auth/setup").json() == {
            "setup_required": True,
            "setup_secret_required": False,  # local mode: a deployed stack asks for its secret
        }
        # Nothing but setup works before there is a user.
        problem(
            api.post("/auth/login", json={"username": "x", "password": "y" * 8}),
            401,
            "auth.invalid_credentials",
        )

        # The first admin's username follows the rule of every username: refused, not a 500.
        refused = api.post("/auth/setup", json={"username": "first admin", "password": PASSWORD})
        assert problem(refused, 422, "request.invalid")["params"]["fields"][0]["field"] == (
            "body.username"
        )
        assert api.get("/auth/setup").json()["setup_required"] is True

        response = api.post("/auth/setup", json={"username": "first", "password": PASSWORD})
        assert response.status_code == 201, response.text
        signed_in = response.json()
        assert signed_in["user"]["roles"] == ["admin"]
        assert signed_in["token"].startswith("etku_")
        cookie = response.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie

        assert api.get("/auth/setup").json()["setup_required"] is False
        problem(
            api.post("/auth/setup", json={"username": "second", "password": PASSWORD}),
            409,
            "auth.setup_done",
        )

        admin = api.as_token(signed_in["token"])
        user = admin.create_user(["designer"], username="kept-user")
        token = admin.service_token("operator")
        audit_before = admin.get("/audit-log", params={"limit": 200}).json()["items"]
        assert len(audit_before) >= 3
    finally:
        assert server.stop() == 0

    # Ctrl-C saved the state; a new process brings all of it back.
    assert (tmp_path / "home" / "aws-state.pickle").exists()
    banner = server.start()
    assert "Setup done" in banner
    try:
        assert api.get("/auth/setup").json()["setup_required"] is False
        assert admin.get("/auth/whoami").json()["subject"] == "first"  # the session survived
        assert admin.get(f"/users/{user['id']}").json()["username"] == "kept-user"
        whoami = api.as_token(token["token"]).get("/auth/whoami").json()
        assert whoami == {
            "actor": "service",
            "subject": token["subject"],
            "roles": ["operator"],
            "user_id": None,
            "token_id": token["id"],
        }
        audit_after = admin.get("/audit-log", params={"limit": 200}).json()["items"]
        assert [e["id"] for e in audit_after[-len(audit_before) :]] == [
            e["id"] for e in audit_before
        ]
        assert api.login("kept-user")
    finally:
        assert server.stop() == 0


def test_state_survives_a_crash_after_the_periodic_snapshot(tmp_path: Path) -> None:
    """Even without a clean stop, what was written a moment before is on disk."""
    server = DevServer(tmp_path / "home")
    server.start()
    api = Api(server.url)
    admin = api.as_token(
        api.post("/auth/setup", json={"username": "crashy", "password": PASSWORD}).json()["token"]
    )
    admin.create_user(["operator"], username="written-before-crash")
    # Until the periodic snapshot (every second) holds the user: the state file is replaced
    # atomically, and moto's pickled items keep their strings as UTF-8. A fixed wait could end
    # before a loaded machine wrote it.
    state = tmp_path / "home" / "aws-state.pickle"
    deadline = time.monotonic() + 60
    while not (state.exists() and b"written-before-crash" in state.read_bytes()):
        assert time.monotonic() < deadline, "no snapshot holds the user after 60 s"
        time.sleep(0.1)
    assert server.process is not None
    server.process.kill()
    server.process.wait()
    server._log_file.close()
    server.start()
    try:
        assert api.login("written-before-crash")
    finally:
        server.stop()
