"""Sealing and opening credential secrets (envelope encryption), and the store key's export.

- Each secret gets its own data key from KMS (`GenerateDataKey`, AES-256, encryption context
  `{"etikett:credential": ref}`); the secret is AES-256-GCM under that key (a fresh 96-bit nonce,
  the ref as associated data). KMS's wrapped data key is stored beside the ciphertext, so opening
  a secret needs `kms:Decrypt` with that very context: a ciphertext copied to another ref opens
  nowhere.
- The data key is also wrapped under the **store key** (AES-256-GCM, associated data naming the
  ref): 32 random bytes made once by KMS and kept wrapped by KMS in the credentials table. The
  store key is what `exportCredentialMasterKey` hands an admin, wrapped under a passphrase, so a
  backup of the table can be opened where this KMS key does not exist (`open_with_store_key`).
- An export is Argon2id (64 MiB, 3 passes) of the passphrase into a 256-bit key, then
  AES-256-GCM of the store key; the format is in docs/guides/backup-restore.md and
  `unwrap_export` reads it.

Plaintext keys live only in memory, only as long as one call needs them (the store key is cached
per warm container, like the webhook secrets); nothing here logs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from typing import Any

from etikett import clock
from etikett.settings import get_settings
from etikett.store import credentials as store
from etikett.store import keys
from etikett.store.credentials import Sealed, StoreKeyRecord
from etikett_engine.errors import InvalidRequest, ProblemCode

# `cryptography` is imported in the functions that seal and open: the Credentials function's
# cold start does not load it (bench/cold_start.py counts its modules).

STORE_CONTEXT = {"etikett:credential-store": "store-key"}
EXPORT_FORMAT = "etikett.credential-store-key"
EXPORT_VERSION = 1
KDF = {"name": "argon2id", "time_cost": 3, "memory_cost_kib": 65536, "parallelism": 1}
MIN_PASSPHRASE = 12
NONCE_BYTES = 12

_store_keys: dict[str, bytes] = {}
_lock = threading.Lock()


def _context(ref: str) -> dict[str, str]:
    return {"etikett:credential": ref}


def _key_id() -> str:
    return get_settings().required("credentials_key")


def _aesgcm(key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key)


def _seal_bytes(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    sealed: bytes = _aesgcm(key).encrypt(nonce, plaintext, aad)
    return nonce + sealed


def _open_bytes(key: bytes, sealed: bytes, aad: bytes) -> bytes:
    return bytes(_aesgcm(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], aad))


def _secret_aad(ref: str) -> bytes:
    return f"etikett:credential:{ref}".encode()


def _escrow_aad(ref: str) -> bytes:
    return f"etikett:credential-data-key:{ref}".encode()


def fingerprint(store_key: bytes) -> str:
    """The store key's public name (`csk_` + 16 hex): an HMAC under the key, so it says nothing
    about the key but tells two keys apart."""
    digest = hmac.new(store_key, b"etikett credential store key id", hashlib.sha256).hexdigest()
    return "csk_" + digest[:16]


# --- the store key ---------------------------------------------------------------------------


def store_key() -> tuple[bytes, str]:
    """The store key and its id, made on first use (one writer wins; the others read it)."""
    record = store.store_key()
    if record is None:
        plaintext, wrapped, kms_key_id = keys.generate_data_key(_key_id(), STORE_CONTEXT)
        made = StoreKeyRecord(
            wrapped_key=wrapped,
            kms_key_id=kms_key_id,
            key_id=fingerprint(plaintext),
            created_at=clock.now(),
        )
        if store.add_store_key(made):
            return plaintext, made.key_id
        record = store.store_key()
        assert record is not None
    with _lock:
        cached = _store_keys.get(record.key_id)
    if cached is None:
        cached = keys.decrypt(_key_id(), record.wrapped_key, STORE_CONTEXT)
        with _lock:
            _store_keys[record.key_id] = cached
    return cached, record.key_id


# --- secrets ---------------------------------------------------------------------------------


def seal(ref: str, secret: str) -> Sealed:
    key, key_id = store_key()
    data_key, wrapped, kms_key_id = keys.generate_data_key(_key_id(), _context(ref))
    return Sealed(
        ciphertext=_seal_bytes(data_key, secret.encode(), _secret_aad(ref)),
        wrapped_key=wrapped,
        escrowed_key=_seal_bytes(key, data_key, _escrow_aad(ref)),
        kms_key_id=kms_key_id,
        store_key_id=key_id,
    )


def open_secret(ref: str, sealed: Sealed) -> str:
    """The secret, through KMS (which checks the context). Decrypt names the service's own
    credentials key, never the key an item names: a stored item cannot point the service at
    another key it may use."""
    data_key = keys.decrypt(_key_id(), sealed.wrapped_key, _context(ref))
    return _open_bytes(data_key, sealed.ciphertext, _secret_aad(ref)).decode()


def open_with_store_key(ref: str, sealed: Sealed, key: bytes) -> str:
    """The secret without KMS: through the escrowed data key and the store key (restoring a
    backup elsewhere). Fails (`cryptography.exceptions.InvalidTag`) under any other key or ref."""
    data_key = _open_bytes(key, sealed.escrowed_key, _escrow_aad(ref))
    return _open_bytes(data_key, sealed.ciphertext, _secret_aad(ref)).decode()


# --- the passphrase-wrapped export --------------------------------------------------------------


def check_passphrase(passphrase: str) -> None:
    if len(passphrase) < MIN_PASSPHRASE or len(set(passphrase)) < 5:
        raise InvalidRequest(
            f"The passphrase must have at least {MIN_PASSPHRASE} characters and not repeat a "
            "few of them.",
            ProblemCode.CREDENTIAL_PASSPHRASE_WEAK,
            min_length=MIN_PASSPHRASE,
        )


def _derive(passphrase: str, salt: bytes, kdf: dict[str, Any]) -> bytes:
    from argon2.low_level import Type, hash_secret_raw

    if kdf.get("name") != "argon2id":
        raise ValueError(f"unknown KDF {kdf.get('name')!r}")
    return hash_secret_raw(
        secret=passphrase.encode(),
        salt=salt,
        time_cost=int(kdf["time_cost"]),
        memory_cost=int(kdf["memory_cost_kib"]),
        parallelism=int(kdf["parallelism"]),
        hash_len=32,
        type=Type.ID,
    )


def _export_aad(key_id: str) -> bytes:
    return f"{EXPORT_FORMAT}/{EXPORT_VERSION}:{key_id}".encode()


def wrap_for_export(key: bytes, key_id: str, passphrase: str) -> dict[str, Any]:
    """The export document (docs/guides/backup-restore.md): the store key under a
    passphrase-derived key."""
    salt = os.urandom(16)
    wrapping = _derive(passphrase, salt, KDF)
    nonce = os.urandom(NONCE_BYTES)
    b64 = base64.b64encode
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "key_id": key_id,
        "created_at": clock.rfc3339(clock.now()),
        "kdf": {**KDF, "salt": b64(salt).decode()},
        "cipher": {"name": "AES-256-GCM", "nonce": b64(nonce).decode()},
        "ciphertext": b64(_aesgcm(wrapping).encrypt(nonce, key, _export_aad(key_id))).decode(),
    }


def unwrap_export(export: dict[str, Any], passphrase: str) -> bytes:
    """The store key from an export and its passphrase; `ValueError` if either is wrong."""
    from cryptography.exceptions import InvalidTag

    if export.get("format") != EXPORT_FORMAT or export.get("version") != EXPORT_VERSION:
        raise ValueError("not an Etikett credential-store key export (format/version)")
    try:
        kdf = export["kdf"]
        wrapping = _derive(passphrase, base64.b64decode(kdf["salt"]), kdf)
        key = _aesgcm(wrapping).decrypt(
            base64.b64decode(export["cipher"]["nonce"]),
            base64.b64decode(export["ciphertext"]),
            _export_aad(str(export["key_id"])),
        )
    except InvalidTag:
        raise ValueError("wrong passphrase, or the export was altered") from None
    except (KeyError, TypeError) as error:
        raise ValueError(f"the export is incomplete ({error})") from None
    if fingerprint(key) != export["key_id"]:
        raise ValueError("the key does not match its key_id")
    return bytes(key)


# --- restoring a backup elsewhere -------------------------------------------------------------


def _attribute(item: dict[str, Any], name: str) -> Any:
    """A value of an item in DynamoDB's JSON (`aws dynamodb scan`, a table export): strings as
    they are, binaries base64 (as the CLI writes them) or bytes (as boto3 reads them)."""
    value = item.get(name)
    if not isinstance(value, dict) or not value:
        return None
    ((kind, content),) = value.items()
    if kind == "B":
        return content if isinstance(content, bytes) else base64.b64decode(content)
    if kind == "BOOL":
        return bool(content)
    if kind == "NULL":
        return None
    if kind == "L":
        return [_attribute({"item": entry}, "item") for entry in content]
    return content


def restore_body(item: dict[str, Any], key: bytes) -> dict[str, Any] | None:
    """The `createCredential` body that re-creates the credential of a backed-up item, its
    secret opened with the store key (no KMS); None for items that are not credentials."""
    if _attribute(item, "listing") != store.LISTED:
        return None
    ref = str(_attribute(item, "ref"))
    kind = _attribute(item, "kind")
    secret = None
    if _attribute(item, "ciphertext") is not None:
        sealed = Sealed(
            ciphertext=_attribute(item, "ciphertext"),
            wrapped_key=_attribute(item, "wrapped_key") or b"",
            escrowed_key=_attribute(item, "escrowed_key"),
            kms_key_id=str(_attribute(item, "kms_key_id")),
            store_key_id=str(_attribute(item, "store_key_id")),
        )
        secret = open_with_store_key(ref, sealed, key)
    if kind == "secret":
        body: dict[str, Any] = {"ref": ref, "kind": "secret", "value": secret}
        origins = _attribute(item, "origins")
        if origins is not None:
            body["origins"] = list(origins)
        return body
    body = {
        "ref": ref,
        "kind": "language-model",
        "provider": _attribute(item, "provider"),
        "model": _attribute(item, "model"),
        "endpoint": _attribute(item, "endpoint"),
        "shareSampleValues": bool(_attribute(item, "share_sample_values")),
    }
    if secret is not None:
        body["apiKey"] = secret
    return body
