"""Stored credentials: secrets sealed by envelope encryption with moto's KMS (a data key per
secret, the ref as context) and never answered, listed, logged or audited; the default language
model; and the store key's passphrase-wrapped export that opens a backup without KMS."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.exceptions import InvalidTag

from etikett.domain.credentials import credential_vault, credentials, opening
from etikett.domain.credentials.credentials import NewLanguageModel, NewSecret
from etikett.ids import new_id
from etikett.store import credentials as credential_store
from etikett_engine.errors import EtikettError, ProblemCode
from support.model_server import ModelServer
from unit.domain.callers import human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")

API_KEY = "sk-test-0123456789abcdef"


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _ref() -> str:
    return f"cred-{new_id('x')[-8:].lower()}"


def _model(ref: str | None = None, **more: Any) -> credentials.Credential:
    body = {
        "ref": ref or _ref(),
        "kind": "language-model",
        "provider": "openai-chat",
        "model": "gpt-test",
        "endpoint": "https://models.example.com/v1",
        **more,
    }
    return credentials.create(
        human("createCredential", "admin"), NewLanguageModel.model_validate(body)
    )


def _secret(value: str, ref: str | None = None) -> credentials.Credential:
    return credentials.create(
        human("createCredential", "admin"), NewSecret(ref=ref or _ref(), kind="secret", value=value)
    )


def test_a_secret_is_never_answered_listed_stored_plainly_or_audited(aws: Aws) -> None:
    created = _model(apiKey=API_KEY, default=False)
    assert created.has_secret and API_KEY not in created.model_dump_json()
    listed = {c.ref: c for c in credentials.list_credentials(200, None).items}
    assert listed[created.ref].has_secret and API_KEY not in str(listed)
    items = aws.client("dynamodb").scan(TableName=aws.ref("CredentialsTable"))["Items"]
    assert API_KEY not in str(items)
    (entry,) = trail(created.ref)
    assert entry.details["has_secret"] is True and API_KEY not in str(entry)  # type: ignore[index]
    _, endpoint = opening.language_model(created.ref)
    assert endpoint.api_key == API_KEY and endpoint.url == "https://models.example.com/v1"


def test_each_secret_is_sealed_under_its_own_data_key_bound_to_its_ref() -> None:
    one, other = _secret("erp-password-1"), _secret("erp-password-1")
    sealed_one = credentials.load(one.ref).sealed
    sealed_other = credentials.load(other.ref).sealed
    assert sealed_one is not None and sealed_other is not None
    assert sealed_one.ciphertext != sealed_other.ciphertext
    assert sealed_one.wrapped_key != sealed_other.wrapped_key
    assert credential_vault.open_secret(one.ref, sealed_one) == "erp-password-1"
    with pytest.raises(Exception, match="InvalidCiphertext"):
        credential_vault.open_secret(other.ref, sealed_one)  # KMS checks the ref (context)
    key, _ = credential_vault.store_key()
    assert credential_vault.open_with_store_key(one.ref, sealed_one, key) == "erp-password-1"
    with pytest.raises(InvalidTag):
        credential_vault.open_with_store_key(other.ref, sealed_one, key)


def test_a_ref_is_taken_once_and_a_refused_create_changes_nothing() -> None:
    created = _secret("first")
    error = _refused(ProblemCode.CREDENTIAL_EXISTS, lambda: _secret("second", ref=created.ref))
    assert error.params["ref"] == created.ref and "second" not in error.detail
    sealed = credentials.load(created.ref).sealed
    assert sealed is not None and credential_vault.open_secret(created.ref, sealed) == "first"
    assert operations(created.ref) == ["createCredential"]


@pytest.mark.parametrize(
    "endpoint",
    ["http://models.example.com/v1", "https://models.example.com/v1?key=abc", "ftp://host/x"],
)
def test_model_endpoints_are_https_or_loopback_without_a_query(endpoint: str) -> None:
    error = _refused(ProblemCode.CREDENTIAL_ENDPOINT_REFUSED, lambda: _model(endpoint=endpoint))
    assert error.params["fields"][0]["field"] == "body.endpoint"


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [
        ("https://169.254.169.254/v1", "link-local"),  # cloud metadata
        ("https://[::ffff:169.254.169.254]/v1", "link-local"),
        ("https://[fe80::1]/v1", "link-local"),
        ("https://224.0.0.251/v1", "not a unicast address"),  # multicast
        ("https://0.0.0.0/v1", "not a unicast address"),  # unspecified
        ("https://240.0.0.1/v1", "not a unicast address"),  # reserved
    ],
)
def test_endpoints_naming_addresses_never_connected_to_are_refused_when_stored(
    endpoint: str, reason: str
) -> None:
    ref = _ref()
    error = _refused(
        ProblemCode.CREDENTIAL_ENDPOINT_REFUSED, lambda: _model(ref=ref, endpoint=endpoint)
    )
    assert error.status == 422 and reason in error.detail
    assert error.params["fields"][0]["field"] == "body.endpoint"
    _refused(ProblemCode.CREDENTIAL_NOT_FOUND, lambda: credentials.load(ref))
    assert operations(ref) == []


def test_a_deleted_credential_is_gone_and_so_is_its_default_mark(
    empty: Aws,
) -> None:
    created = _model(default=True)
    assert opening.language_model(None)[0].ref == created.ref
    credentials.delete(human("deleteCredential", "admin"), created.ref)
    _refused(ProblemCode.CREDENTIAL_NOT_FOUND, lambda: credentials.load(created.ref))
    assert credential_store.default_ref() is None
    assert operations(created.ref) == ["createCredential", "deleteCredential"]
    _refused(
        ProblemCode.CREDENTIAL_NOT_FOUND,
        lambda: credentials.delete(human("deleteCredential"), created.ref),
    )


def test_the_language_model_used_is_the_named_the_default_or_the_only_one(
    empty: Aws,
) -> None:
    error = _refused(ProblemCode.AI_NO_CREDENTIAL, lambda: opening.language_model(None))
    assert error.params["candidates"] == 0
    only = _model()
    secret = _secret("not a model")
    assert opening.language_model(None)[0].ref == only.ref
    second = _model()
    error = _refused(ProblemCode.AI_NO_CREDENTIAL, lambda: opening.language_model(None))
    assert error.params["candidates"] == 2
    chosen = _model(default=True)
    assert opening.language_model(None)[0].ref == chosen.ref
    assert opening.language_model(second.ref)[0].ref == second.ref
    listed = {c.ref: c.default for c in credentials.list_credentials(200, None).items}
    assert listed == {only.ref: False, second.ref: False, chosen.ref: True, secret.ref: False}
    _refused(ProblemCode.CREDENTIAL_NOT_LANGUAGE_MODEL, lambda: opening.language_model(secret.ref))


def test_a_model_credential_is_tested_against_the_model_and_a_secret_by_opening_it() -> None:
    with ModelServer(api_key=API_KEY) as server:
        good = _model(endpoint=server.endpoint("openai-chat"), apiKey=API_KEY)
        assert opening.test(good.ref).ok
        wrong = _model(endpoint=server.endpoint("openai-chat"), apiKey="sk-wrong")
        answer = opening.test(wrong.ref)
        assert (answer.ok, answer.code) == (False, "ai.unauthorized")
        assert "sk-wrong" not in str(answer)
    assert opening.test(_secret("opens").ref).detail == "The secret opens."


def test_the_exported_store_key_opens_a_backup_without_kms() -> None:
    created = _secret("backup-me")
    _refused(
        ProblemCode.CREDENTIAL_PASSPHRASE_WEAK,
        lambda: credentials.export_master_key(human("exportCredentialMasterKey"), "aaaaaaaaaaaaaa"),
    )
    passphrase = "Tresor im Keller 42"
    exported = credentials.export_master_key(human("exportCredentialMasterKey"), passphrase)
    assert trail(exported.key_id)[-1].details == {"key_id": exported.key_id, "kdf": "argon2id"}
    document = exported.model_dump()
    key = credential_vault.unwrap_export(document, passphrase)
    item = credential_store.raw_item(created.ref)
    assert item is not None
    assert credential_vault.restore_body(item, key) == {
        "ref": created.ref,
        "kind": "secret",
        "value": "backup-me",
    }
    with pytest.raises(ValueError, match="wrong passphrase"):
        credential_vault.unwrap_export(document, "Tresor im Keller 43")
    tampered = {**document, "key_id": "csk_0000000000000000"}
    with pytest.raises(ValueError):
        credential_vault.unwrap_export(tampered, passphrase)


def test_the_store_key_is_made_once() -> None:
    first = credential_vault.store_key()
    credential_vault._store_keys.clear()  # another warm container reads it from the table
    assert credential_vault.store_key() == first
    sealed = credentials.load(_secret("x").ref).sealed
    assert sealed is not None and sealed.store_key_id == first[1]
