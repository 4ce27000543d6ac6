"""Local mode keeps moto's KMS keys across restarts: a credential stored before a restart opens
after it (its data key decrypts under the same key), and the store key stays the same."""

from __future__ import annotations

from pathlib import Path

from support.client import PASSWORD, Api
from support.model_server import ModelServer
from support.server import DevServer

from .conftest import KEY, language_model


def test_credentials_open_after_a_restart(tmp_path: Path) -> None:
    server = DevServer(tmp_path / "home")
    server.start()
    try:
        setup = Api(server.url).post("/auth/setup", json={"username": "r", "password": PASSWORD})
        admin = Api(server.url, setup.json()["token"])
        with ModelServer(api_key=KEY) as model:
            created = language_model(admin, model, "anthropic-messages")
            passphrase = "restart passphrase 42"
            before = admin.post("/credentials/master-key/export", json={"passphrase": passphrase})
            assert before.status_code == 200, before.text
            assert server.stop() == 0
            server.start()
            tested = admin.post(f"/credentials/{created['ref']}/test").json()
            assert tested["ok"] is True, tested
            assert model.requests[-1].headers["x-api-key"] == KEY
        after = admin.post("/credentials/master-key/export", json={"passphrase": passphrase})
        assert after.json()["key_id"] == before.json()["key_id"]
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
