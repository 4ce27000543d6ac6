"""KMS: encrypting small secrets (the CA's private key, webhook secrets) under the service's keys,
always with an encryption context naming what the secret belongs to."""

from __future__ import annotations

from etikett.store import clients


def encrypt(key_id: str, plaintext: bytes, context: dict[str, str]) -> bytes:
    answer = clients.client("kms").encrypt(
        KeyId=key_id, Plaintext=plaintext, EncryptionContext=context
    )
    return bytes(answer["CiphertextBlob"])


def decrypt(key_id: str, ciphertext: bytes, context: dict[str, str]) -> bytes:
    answer = clients.client("kms").decrypt(
        KeyId=key_id, CiphertextBlob=ciphertext, EncryptionContext=context
    )
    return bytes(answer["Plaintext"])


def generate_data_key(key_id: str, context: dict[str, str]) -> tuple[bytes, bytes, str]:
    """A fresh AES-256 data key: (plaintext, the KMS-wrapped copy, the key's ARN)."""
    answer = clients.client("kms").generate_data_key(
        KeyId=key_id, KeySpec="AES_256", EncryptionContext=context
    )
    return bytes(answer["Plaintext"]), bytes(answer["CiphertextBlob"]), str(answer["KeyId"])
