"""Local mode keeps moto's KMS keys across restarts: a credential stored before a restart opens
after it (its data key decrypts under the same key), and the store key stays the same."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from etikett.local.restore import PASSPHRASE_ENV
from support.client import PASSWORD, Api
from support.model_server import ModelServer
from support.server import DevServer

from .conftest import KEY, aws, language_model, table_named


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


def test_a_backup_restores_in_another_etikett(
    tmp_path: Path, ai_server: DevServer, root: Api
) -> None:
    """The credentials table of one Etikett (as `aws dynamodb scan` writes it) and its exported
    store key re-create the credentials in another, whose KMS key is a different one."""
    with ModelServer(api_key=KEY) as model:
        created = language_model(root, model, "openai-chat")
        passphrase = "move me elsewhere 77"
        export = root.post("/credentials/master-key/export", json={"passphrase": passphrase})
        scan = aws(ai_server, "dynamodb").scan(TableName=table_named(ai_server, "CredentialsTable"))
        items = [
            {
                name: {"B": base64.b64encode(value["B"]).decode()} if "B" in value else value
                for name, value in item.items()
            }
            for item in scan["Items"]
        ]
        (tmp_path / "export.json").write_text(json.dumps(export.json()))
        (tmp_path / "scan.json").write_text(json.dumps({"Items": items}))

        target = DevServer(tmp_path / "target")
        target.start()
        try:
            setup = Api(target.url).post(
                "/auth/setup", json={"username": "t", "password": PASSWORD}
            )
            admin = Api(target.url, setup.json()["token"])
            command = [
                sys.executable, "-m", "etikett.local.cli", "restore-credentials",
                "--export", str(tmp_path / "export.json"),
                "--items", str(tmp_path / "scan.json"),
            ]  # fmt: skip
            wrong = subprocess.run(
                command, env={**os.environ, PASSPHRASE_ENV: "not it at all"}, capture_output=True
            )
            assert wrong.returncode == 1 and b"passphrase" in wrong.stderr
            restored = subprocess.run(
                [*command, "--to", target.url, "--token", admin.token or ""],
                env={**os.environ, PASSPHRASE_ENV: passphrase},
                capture_output=True,
                text=True,
            )
            assert restored.returncode == 0, restored.stdout + restored.stderr
            assert f"{created['ref']} (language-model): restored" in restored.stdout
            assert KEY not in restored.stdout
            again = admin.get("/credentials", params={"limit": 200}).json()["items"]
            assert created["ref"] in {item["ref"] for item in again}
            model.clear()
            assert admin.post(f"/credentials/{created['ref']}/test").json()["ok"] is True
            assert model.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        finally:
            target.stop()
