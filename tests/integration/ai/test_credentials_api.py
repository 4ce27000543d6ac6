"""Credentials over REST: stored encrypted, never shown, admin only, audited; tests of the
provider; and the master-key export, restorable with its passphrase alone."""

from __future__ import annotations

import base64
import json

import pytest

from etikett.domain.credentials import credential_vault
from etikett.store.credentials import Sealed
from support.client import Api, problem, unique
from support.model_server import Answer, ModelServer
from support.server import DevServer

from .conftest import KEY, aws, language_model, table_named

SECRET_VALUE = "erp-token-Hs72kd9QpW"


def _secret(admin: Api, value: str = SECRET_VALUE) -> dict:
    response = admin.post(
        "/credentials", json={"ref": unique("erp"), "kind": "secret", "value": value}
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_credentials_are_stored_sealed_and_never_shown(
    root: Api, model: ModelServer, ai_server: DevServer
) -> None:
    created = language_model(root, model, "anthropic-messages", shareSampleValues=True)
    assert created == {
        "ref": created["ref"],
        "kind": "language-model",
        "provider": "anthropic-messages",
        "model": "anthropic-messages-model",
        "endpoint": model.endpoint("anthropic-messages"),
        "shareSampleValues": True,
        "default": False,
        "has_secret": True,
        "origins": None,  # a secret's (where it may be sent)
        "created_at": created["created_at"],
        "created_by": "ai-admin",
    }
    local = language_model(root, model, "openai-chat", key=None)
    assert local["has_secret"] is False
    secret = _secret(root)
    assert secret["has_secret"] is True and secret["provider"] is None

    listed = root.get("/credentials", params={"limit": 200})
    assert listed.status_code == 200
    refs = [item["ref"] for item in listed.json()["items"]]
    assert {created["ref"], local["ref"], secret["ref"]} <= set(refs) and refs == sorted(refs)
    first = root.get("/credentials", params={"limit": 1}).json()
    assert len(first["items"]) == 1 and first["next_cursor"]

    audit = root.get("/audit-log", params={"operation": "createCredential"}).json()["items"]
    assert {created["ref"], secret["ref"]} <= {entry["target_id"] for entry in audit}
    for text in (listed.text, json.dumps(audit), ai_server.log.read_text()):
        assert KEY not in text and SECRET_VALUE not in text

    # At rest: ciphertexts only; KMS opens the data key only with the credential's own ref.
    dynamodb, kms = aws(ai_server, "dynamodb"), aws(ai_server, "kms")
    table = table_named(ai_server, "CredentialsTable")
    item = dynamodb.get_item(TableName=table, Key={"ref": {"S": secret["ref"]}})["Item"]
    raw = json.dumps(item, default=str)
    assert SECRET_VALUE not in raw and base64.b64encode(SECRET_VALUE.encode()).decode() not in raw
    assert set(item) >= {"ciphertext", "wrapped_key", "escrowed_key", "kms_key_id"}
    with pytest.raises(kms.exceptions.InvalidCiphertextException):
        kms.decrypt(
            CiphertextBlob=item["wrapped_key"]["B"],
            EncryptionContext={"etikett:credential": created["ref"]},
        )
    data_key = kms.decrypt(
        CiphertextBlob=item["wrapped_key"]["B"],
        EncryptionContext={"etikett:credential": secret["ref"]},
    )["Plaintext"]
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    sealed = item["ciphertext"]["B"]
    opened = AESGCM(data_key).decrypt(
        sealed[:12], sealed[12:], f"etikett:credential:{secret['ref']}".encode()
    )
    assert opened.decode() == SECRET_VALUE


def test_refusals(root: Api, model: ModelServer) -> None:
    created = language_model(root, model, "openai-chat")
    taken = root.post("/credentials", json={"ref": created["ref"], "kind": "secret", "value": "x"})
    problem(taken, 409, "credential.exists")
    for endpoint in (
        "http://example.com/v1",
        "ftp://example.com",
        "https://api.example.com/v1?key=1",
        "https://169.254.169.254/v1",  # cloud metadata: refused when stored, not when used
        "https://[ff02::1]/v1",
    ):
        refused = root.post(
            "/credentials",
            json={
                "ref": unique("bad"),
                "kind": "language-model",
                "provider": "openai-chat",
                "model": "m",
                "endpoint": endpoint,
            },
        )
        body = problem(refused, 422, "credential.endpoint_refused")
        assert body["params"]["fields"][0]["field"] == "body.endpoint"
    problem(
        root.post("/credentials", json={"ref": "no spaces", "kind": "secret", "value": "x"}),
        422,
        "request.invalid",
    )
    problem(
        root.post("/credentials", json={"ref": "x", "kind": "token", "value": "x"}),
        422,
        "request.invalid",
    )
    problem(root.delete("/credentials/nope"), 404, "credential.not_found")
    problem(root.post("/credentials/nope/test"), 404, "credential.not_found")


def test_only_admins_and_the_export_only_for_a_person(
    root: Api, people: dict[str, Api], agents: dict[str, Api], model: ModelServer
) -> None:
    created = language_model(root, model, "openai-chat")
    ref = created["ref"]
    for caller in [*people.values(), agents["designer"], agents["operator"], agents["approver"]]:
        problem(caller.get("/credentials"), 403, "auth.forbidden")
        problem(
            caller.post("/credentials", json={"ref": unique("x"), "kind": "secret", "value": "v"}),
            403,
            "auth.forbidden",
        )
        problem(caller.delete(f"/credentials/{ref}"), 403, "auth.forbidden")
        problem(caller.post(f"/credentials/{ref}/test"), 403, "auth.forbidden")
        problem(
            caller.post("/credentials/master-key/export", json={"passphrase": "a long passphrase"}),
            403,
            "auth.forbidden",
        )
    admin_agent = agents["admin"]
    assert admin_agent.get("/credentials").status_code == 200
    assert admin_agent.post(f"/credentials/{ref}/test").json()["ok"] is True
    own = admin_agent.post(
        "/credentials", json={"ref": unique("agent"), "kind": "secret", "value": "v"}
    )
    assert own.status_code == 201
    assert admin_agent.delete(f"/credentials/{own.json()['ref']}").status_code == 204
    problem(
        admin_agent.post(
            "/credentials/master-key/export", json={"passphrase": "a long passphrase"}
        ),
        403,
        "auth.human_required",
    )


def test_provider_tests_answer_ok_or_the_code(root: Api, model: ModelServer) -> None:
    good = language_model(root, model, "anthropic-messages")
    answer = root.post(f"/credentials/{good['ref']}/test")
    assert answer.status_code == 200, answer.text
    assert answer.json()["ok"] is True and answer.json()["model"] == "test-model"
    assert model.requests[-1].headers["x-api-key"] == KEY

    wrong = language_model(root, model, "openai-chat", key="sk-wrong")
    failed = root.post(f"/credentials/{wrong['ref']}/test").json()
    assert failed["ok"] is False and failed["code"] == "ai.unauthorized"
    assert "sk-wrong" not in json.dumps(failed)

    # A 429 is retried after its retry-after, as every AI call's is (the contract's rule).
    asked = len(model.requests)
    model.then(Answer(429, {}, {"retry-after": "1"}))
    retried = root.post(f"/credentials/{good['ref']}/test").json()
    assert retried["ok"] is True and retried["latency_ms"] >= 1000, retried
    assert len(model.requests) == asked + 2
    # Still limited after the retries: ok false with the code.
    model.then(*[Answer(429, {}, {"retry-after": "1"})] * 3)
    limited = root.post(f"/credentials/{good['ref']}/test").json()
    assert limited["ok"] is False and limited["code"] == "ai.rate_limited"
    assert len(model.requests) == asked + 2 + 3

    model.then(Answer(200, b"{not json"))
    broken = root.post(f"/credentials/{good['ref']}/test").json()
    assert broken["code"] == "ai.bad_response"

    gone = root.post(
        "/credentials",
        json={
            "ref": unique("gone"),
            "kind": "language-model",
            "provider": "generic-json",
            "model": "m",
            "endpoint": "http://127.0.0.1:9/generate",
        },
    ).json()
    unreachable = root.post(f"/credentials/{gone['ref']}/test").json()
    assert unreachable["ok"] is False and unreachable["code"] == "ai.unreachable"

    secret = _secret(root)
    opened = root.post(f"/credentials/{secret['ref']}/test").json()
    assert opened["ok"] is True and SECRET_VALUE not in json.dumps(opened)


def test_delete_is_audited_and_final(root: Api) -> None:
    secret = _secret(root)
    assert root.delete(f"/credentials/{secret['ref']}").status_code == 204
    problem(root.delete(f"/credentials/{secret['ref']}"), 404, "credential.not_found")
    entries = root.get("/audit-log", params={"target": secret["ref"]}).json()["items"]
    assert [(e["operation_id"], e["outcome"]) for e in entries] == [
        ("deleteCredential", "refused"),  # the second delete
        ("deleteCredential", "success"),
        ("createCredential", "success"),
    ]
    assert SECRET_VALUE not in json.dumps(entries)


def test_master_key_export_opens_a_backup_without_kms(root: Api, ai_server: DevServer) -> None:
    secret = _secret(root, "backup-me-Lk2")
    problem(
        root.post("/credentials/master-key/export", json={"passphrase": "short"}),
        422,
        "credential.passphrase_weak",
    )
    passphrase = "a long and private passphrase"
    exported = root.post("/credentials/master-key/export", json={"passphrase": passphrase})
    assert exported.status_code == 200, exported.text
    document = exported.json()
    assert document["format"] == "etikett.credential-store-key" and document["version"] == 1
    assert document["kdf"]["name"] == "argon2id" and document["kdf"]["memory_cost_kib"] >= 65536
    assert document["cipher"]["name"] == "AES-256-GCM"
    again = root.post("/credentials/master-key/export", json={"passphrase": passphrase}).json()
    assert again["key_id"] == document["key_id"] and again["ciphertext"] != document["ciphertext"]

    with pytest.raises(ValueError, match="passphrase"):
        credential_vault.unwrap_export(document, passphrase + "!")
    key = credential_vault.unwrap_export(document, passphrase)
    assert credential_vault.fingerprint(key) == document["key_id"]

    # A table backup (the item as DynamoDB exports it) opens with the key alone.
    item = aws(ai_server, "dynamodb").get_item(
        TableName=table_named(ai_server, "CredentialsTable"), Key={"ref": {"S": secret["ref"]}}
    )["Item"]
    sealed = Sealed(
        ciphertext=item["ciphertext"]["B"],
        wrapped_key=item["wrapped_key"]["B"],
        escrowed_key=item["escrowed_key"]["B"],
        kms_key_id=item["kms_key_id"]["S"],
        store_key_id=item["store_key_id"]["S"],
    )
    assert sealed.store_key_id == document["key_id"]
    assert credential_vault.open_with_store_key(secret["ref"], sealed, key) == "backup-me-Lk2"
    with pytest.raises(Exception):  # noqa: B017 - any other ref fails the tag
        credential_vault.open_with_store_key("another-ref", sealed, key)

    entries = root.get("/audit-log", params={"operation": "exportCredentialMasterKey"}).json()
    assert entries["items"][0]["details"] == {"key_id": document["key_id"], "kdf": "argon2id"}
    assert passphrase not in json.dumps(entries) and passphrase not in ai_server.log.read_text()
