"""The webhooks tables: receivers with their subscriptions, and the delivery log with one state
item per delivery (receiver × event)."""

from __future__ import annotations

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

WEBHOOK_SK = "webhook"
KIND = "webhook"
LOG_PREFIX = "log#"
STATE_PREFIX = "state#"

_WEBHOOKS = table_meta("webhooks_table")
_DELIVERIES = table_meta("webhook_deliveries_table")


class WebhooksByKind(GlobalSecondaryIndex["WebhookRecord"]):
    """Every receiver, newest first (ids are ULIDs); subscriptions have no `kind`, so are absent."""

    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    pk = UnicodeAttribute(range_key=True)


class WebhookRecord(Model):
    Meta = _WEBHOOKS
    pk = UnicodeAttribute(hash_key=True)  # whk_…
    sk = UnicodeAttribute(range_key=True, default=WEBHOOK_SK)
    kind = UnicodeAttribute(default=KIND)
    url = UnicodeAttribute()
    events = ListAttribute(of=UnicodeAttribute)
    # The signing secret, encrypted under the webhook-secrets KMS key with the id as context.
    secret_ciphertext = BinaryAttribute(legacy_encoding=False)
    active = BooleanAttribute(default=True)
    disabled_reason = UnicodeAttribute(null=True)
    disabled_at = UTCDateTimeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    by_kind = WebhooksByKind()


class SubscriptionRecord(Model):
    """One per (event kind, active receiver): the fan-out reads a kind's receivers in one query."""

    Meta = _WEBHOOKS
    pk = UnicodeAttribute(hash_key=True)  # "sub#<event kind>"
    sk = UnicodeAttribute(range_key=True)  # whk_…

    @staticmethod
    def key_for(kind: str) -> str:
        return f"sub#{kind}"


class DeliveryLogRecord(Model):
    """One attempt to deliver an event to a receiver."""

    Meta = _DELIVERIES
    webhook_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # "log#<ULID>": newest last
    event_id = UnicodeAttribute()
    kind = UnicodeAttribute()
    attempt = NumberAttribute()
    status_code = NumberAttribute(null=True)
    outcome = UnicodeAttribute()  # delivered | retrying | failed | dead
    error = UnicodeAttribute(null=True)
    duration_ms = NumberAttribute()
    at = UTCDateTimeAttribute()
    next_attempt_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute(null=True)


class DeliveryStateRecord(Model):
    """Where one delivery stands. The first queue message to claim it owns it, so a duplicated
    message (a replayed stream record, SQS's at-least-once) makes no second delivery."""

    Meta = _DELIVERIES
    webhook_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # "state#<event id>"
    message_id = UnicodeAttribute(null=True)
    status = UnicodeAttribute(null=True)  # sending | retrying | delivered | dead | disabled
    attempts = NumberAttribute(default=0)
    updated_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute(null=True)
