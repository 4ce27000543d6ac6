"""Signing per Standard Webhooks: checked with the library a receiver would use, and by hand."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from etikett.domain.webhooks.webhook_delivery import signed_headers
from etikett.domain.webhooks.webhook_receivers import SECRET_BYTES, new_secret

BODY = '{"id":"evt_1","type":"label.approved","data":{"name":"Größe"}}'.encode()


def test_secret_is_whsec_and_base64_of_32_random_bytes() -> None:
    secret = new_secret()
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]+={0,2}", secret)
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == SECRET_BYTES
    assert new_secret() != secret


def test_receivers_verify_the_signature() -> None:
    secret = new_secret()
    headers = signed_headers(secret, "evt_1", BODY, datetime.now(UTC))
    assert headers["webhook-id"] == "evt_1"
    assert headers["content-type"] == "application/json"
    assert Webhook(secret).verify(BODY, headers)["data"]["name"] == "Größe"
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.replace(b"evt_1", b"evt_2"), headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY, {**headers, "webhook-id": "evt_other"})


def test_signature_is_hmac_sha256_of_id_timestamp_body() -> None:
    secret = new_secret()
    at = datetime(2026, 11, 5, 9, 30, 0, 750000, tzinfo=UTC)
    headers = signed_headers(secret, "evt_1", BODY, at)
    assert headers["webhook-timestamp"] == str(int(at.timestamp())) == "1793871000"
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, b"evt_1.1793871000." + BODY, hashlib.sha256).digest()
    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()


def test_an_old_timestamp_is_refused_by_receivers() -> None:
    secret = new_secret()
    headers = signed_headers(secret, "evt_1", BODY, datetime(2020, 1, 1, tzinfo=UTC))
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(secret).verify(BODY, headers)
