"""Webhook receivers as the webhook sender sees them: who subscribed to a kind, one receiver, its
signing secret, disabling it. Free of the API's models, so that the sender starts fast.

The signing secret is stored encrypted under a KMS key of its own, with the receiver's id as
encryption context: reading the table (the MCP function, a backup, an export) does not reveal it;
only the webhook sender may decrypt it, and only for the receiver it is delivering to.
"""

from __future__ import annotations

import base64
import secrets

from etikett import clock
from etikett.domain.webhooks.events import EVENT_KINDS
from etikett.settings import get_settings
from etikett.store import keys, webhooks
from etikett.store.unit_of_work import UnitOfWork
from etikett.store.webhooks import WebhookRecord

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _context(webhook_id: str) -> dict[str, str]:
    return {"etikett:webhook": webhook_id}


def encrypt_secret(webhook_id: str, secret: str) -> bytes:
    key = get_settings().required("webhook_secrets_key")
    return keys.encrypt(key, secret.encode(), _context(webhook_id))


def decrypt_secret(record: WebhookRecord) -> str:
    key = get_settings().required("webhook_secrets_key")
    return keys.decrypt(key, bytes(record.secret_ciphertext), _context(record.id)).decode()


def find(webhook_id: str) -> WebhookRecord | None:
    return webhooks.get(webhook_id)


def subscribers(kind: str) -> list[str]:
    """The ids of the active receivers subscribed to `kind`."""
    return webhooks.subscribers_by_kind(EVENT_KINDS).get(kind, [])


def disable(uow: UnitOfWork, record: WebhookRecord, reason: str) -> None:
    """Within `uow`: the receiver gets nothing more (it answered 410 Gone); it stays listed,
    with the reason."""
    webhooks.disable(uow, record, reason, clock.now())
