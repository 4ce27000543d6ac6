"""Webhook receivers as the webhook sender sees them: who subscribed to a kind, one receiver, its
signing secret, disabling it. Free of the API's models, so that the sender starts fast.

The signing secret is stored encrypted under a KMS key of its own, with the receiver's id as
encryption context: reading the table (the MCP function, a backup, an export) does not reveal it;
only the webhook sender may decrypt it, and only for the receiver it is delivering to.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

from etikett import clients, clock
from etikett.settings import get_settings
from etikett.store.webhooks import WEBHOOK_SK, SubscriptionRecord, WebhookRecord

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _context(webhook_id: str) -> dict[str, str]:
    return {"etikett:webhook": webhook_id}


def encrypt_secret(webhook_id: str, secret: str) -> bytes:
    answer = clients.client("kms").encrypt(
        KeyId=get_settings().required("webhook_secrets_key"),
        Plaintext=secret.encode(),
        EncryptionContext=_context(webhook_id),
    )
    return bytes(answer["CiphertextBlob"])


def decrypt_secret(record: WebhookRecord) -> str:
    answer = clients.client("kms").decrypt(
        KeyId=get_settings().required("webhook_secrets_key"),
        CiphertextBlob=bytes(record.secret_ciphertext),
        EncryptionContext=_context(record.pk),
    )
    return bytes(answer["Plaintext"]).decode()


def find(webhook_id: str) -> WebhookRecord | None:
    try:
        return WebhookRecord.get(webhook_id, WEBHOOK_SK)
    except WebhookRecord.DoesNotExist:
        return None


def subscribers(kind: str) -> list[str]:
    """The ids of the active receivers subscribed to `kind`."""
    return [
        record.sk
        for record in SubscriptionRecord.query(SubscriptionRecord.key_for(kind), page_size=100)
    ]


def disable(record: WebhookRecord, reason: str, tx: Any) -> None:
    """Within `tx`: the receiver gets nothing more (it answered 410 Gone); it stays listed, with
    the reason."""
    tx.update(
        record,
        actions=[
            WebhookRecord.active.set(False),
            WebhookRecord.disabled_reason.set(reason),
            WebhookRecord.disabled_at.set(clock.now()),
        ],
        condition=WebhookRecord.pk.exists(),
    )
    for kind in record.events:
        tx.delete(SubscriptionRecord(pk=SubscriptionRecord.key_for(str(kind)), sk=record.pk))
