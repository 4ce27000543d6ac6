"""Webhook receivers, a subscription item per (event kind, active receiver) for the fan-out, and
per delivery its state and the log of its attempts.

Subscriptions live in one partition (sort key "<kind>#<receiver id>"), so that the events
publisher reads the receivers of every kind in a batch of events with one query. Until
2026-11-28 each kind had its own partition ("sub#<kind>"); the first read copies those over
once (`_copy_per_kind`), and removing a receiver removes both."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import (
    Item,
    condition_failed,
    connection,
    get_item,
    item_of,
    record_of,
    table_meta,
)
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

WEBHOOK_SK = "webhook"
KIND = "webhook"
LOG_PREFIX = "log#"
STATE_PREFIX = "state#"
FINAL_STATES = ("delivered", "disabled")

_WEBHOOKS = table_meta("webhooks_table")
_DELIVERIES = table_meta("webhook_deliveries_table")


class WebhookRecord(NamedTuple):
    id: str  # whk_…
    url: str
    events: tuple[str, ...]
    # The signing secret, encrypted under the webhook-secrets KMS key with the id as context.
    secret_ciphertext: bytes
    active: bool
    disabled_reason: str | None
    disabled_at: dt.datetime | None
    created_at: dt.datetime
    created_by: str


class DeliveryLogRecord(NamedTuple):
    """One attempt to deliver an event to a receiver."""

    webhook_id: str
    event_id: str
    kind: str
    attempt: int
    status_code: int | None
    outcome: str  # delivered | retrying | failed | dead
    error: str | None
    duration_ms: int
    at: dt.datetime
    next_attempt_at: dt.datetime | None


class _ByKind(GlobalSecondaryIndex["_WebhookItem"]):
    """Every receiver, newest first (ids are ULIDs); subscriptions have no `kind`."""

    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True, attr_name="pk")


class _WebhookItem(Item):
    Meta = _WEBHOOKS
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=WEBHOOK_SK)
    kind = UnicodeAttribute(default=KIND)
    url = UnicodeAttribute()
    events = ListAttribute(of=UnicodeAttribute)
    secret_ciphertext = BinaryAttribute(legacy_encoding=False)
    active = BooleanAttribute(default=True)
    disabled_reason = UnicodeAttribute(null=True)
    disabled_at = UTCDateTimeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    by_kind = _ByKind()


class _SubscriptionItem(Item):
    Meta = _WEBHOOKS
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "sub#<event kind>"
    webhook_id = UnicodeAttribute(range_key=True, attr_name="sk")


SUBSCRIPTIONS = "subscriptions"
COPIED = "#copied"  # in SUBSCRIPTIONS: every per-kind subscription was copied in


class _SubscriptionsItem(Item):
    Meta = _WEBHOOKS
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # SUBSCRIPTIONS
    entry = UnicodeAttribute(range_key=True, attr_name="sk")  # "<kind>#<receiver id>" or COPIED


class _LogItem(Item):
    Meta = _DELIVERIES
    webhook_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # "log#<ULID>": newest last
    event_id = UnicodeAttribute()
    kind = UnicodeAttribute()
    attempt = NumberAttribute()
    status_code = NumberAttribute(null=True)
    outcome = UnicodeAttribute()
    error = UnicodeAttribute(null=True)
    duration_ms = NumberAttribute()
    at = UTCDateTimeAttribute()
    next_attempt_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute(null=True)


class _StateItem(Item):
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


def _subscription_key(kind: str) -> str:
    return f"sub#{kind}"


def _webhook(item: _WebhookItem) -> WebhookRecord:
    return record_of(WebhookRecord, item)


def _state(webhook_id: str, event_id: str) -> _StateItem:
    return _StateItem(webhook_id=webhook_id, sk=STATE_PREFIX + event_id)


# --- receivers ------------------------------------------------------------------------------------


def get(webhook_id: str) -> WebhookRecord | None:
    item = get_item(_WebhookItem, webhook_id, WEBHOOK_SK)
    return _webhook(item) if item is not None else None


def page(limit: int, cursor: str | None) -> Page[WebhookRecord]:
    """Every receiver, newest first."""

    def query(**page: Any) -> Any:
        return _WebhookItem.by_kind.query(KIND, scan_index_forward=False, **page)

    return read_page(query, {"kind", "pk", "sk"}, limit, cursor, _webhook)


def subscribers_by_kind(kinds: Collection[str]) -> dict[str, list[str]]:
    """The ids of the active receivers subscribed to each kind, in one query (every kind's:
    the partition holds a few per receiver). `kinds`: every kind of the catalog, for the
    one-time copy (after it, every kind's receivers are answered)."""
    entries = [item.entry for item in _SubscriptionsItem.query(SUBSCRIPTIONS, page_size=1000)]
    if COPIED not in entries:
        _copy_per_kind(kinds)
        entries = [item.entry for item in _SubscriptionsItem.query(SUBSCRIPTIONS)]
    found: dict[str, list[str]] = {}
    for entry in entries:
        kind, _, webhook_id = entry.rpartition("#")
        if kind:
            found.setdefault(kind, []).append(webhook_id)
    return found


COPY_CHUNK = 50  # a transaction takes 100 writes: a check and a put per subscription


def _copy_per_kind(kinds: Collection[str], attempts: int = 5) -> None:
    """Copy the subscriptions of the per-kind partitions into the one partition, then mark it
    copied. Each copy is written only while its original still exists, so a receiver removed
    meanwhile is not brought back: that cancels the chunk, and the copy starts over."""
    # Only this one-time copy writes a transaction here: not loaded at the events publisher's
    # (or the webhook functions') cold start.
    from pynamodb.exceptions import TransactWriteError
    from pynamodb.transactions import TransactWrite

    for _ in range(attempts):
        originals = [
            (kind, item.webhook_id)
            for kind in kinds
            for item in _SubscriptionItem.query(_subscription_key(kind), page_size=100)
        ]
        try:
            for start in range(0, len(originals), COPY_CHUNK):
                with TransactWrite(connection=connection()) as copy:
                    for kind, webhook_id in originals[start : start + COPY_CHUNK]:
                        copy.condition_check(
                            _SubscriptionItem,
                            _subscription_key(kind),
                            webhook_id,
                            condition=_SubscriptionItem.webhook_id.exists(),
                        )
                        copy.save(_subscription(kind, webhook_id))
        except TransactWriteError as error:
            reasons = getattr(error, "cancellation_reasons", None) or []
            codes = {reason.code for reason in reasons if reason is not None}
            if not codes & {"ConditionalCheckFailed", "TransactionConflict"}:
                raise  # not a receiver removed or changed meanwhile: no reason to start over
            continue
        _SubscriptionsItem(SUBSCRIPTIONS, COPIED).save()
        return
    raise RuntimeError("the subscriptions kept changing while they were copied; try again")


def _subscription(kind: str, webhook_id: str) -> _SubscriptionsItem:
    return _SubscriptionsItem(SUBSCRIPTIONS, f"{kind}#{webhook_id}")


def add(uow: UnitOfWork, webhook: WebhookRecord) -> None:
    item = item_of(_WebhookItem, webhook, sk=WEBHOOK_SK, kind=KIND)
    uow.put(item, _WebhookItem.id.does_not_exist(), name=ConditionName.WEBHOOK_ABSENT)
    for kind in webhook.events:
        uow.put(_subscription(kind, webhook.id))


def delete(uow: UnitOfWork, webhook: WebhookRecord) -> None:
    uow.delete(
        _WebhookItem(webhook.id, WEBHOOK_SK),
        _WebhookItem.id.exists(),
        name=ConditionName.WEBHOOK_EXISTS,
    )
    _unsubscribe(uow, webhook)


def disable(uow: UnitOfWork, webhook: WebhookRecord, reason: str, at: dt.datetime) -> None:
    """The receiver gets nothing more; it stays listed, with the reason."""
    uow.update(
        _WebhookItem(webhook.id, WEBHOOK_SK),
        [
            _WebhookItem.active.set(False),
            _WebhookItem.disabled_reason.set(reason),
            _WebhookItem.disabled_at.set(at),
        ],
        _WebhookItem.id.exists(),
        name=ConditionName.WEBHOOK_EXISTS,
    )
    _unsubscribe(uow, webhook)


def _unsubscribe(uow: UnitOfWork, webhook: WebhookRecord) -> None:
    """Within `uow`: the receiver's subscriptions go, in both layouts (see the module note)."""
    for kind in webhook.events:
        uow.delete(_subscription(kind, webhook.id))
        uow.delete(_SubscriptionItem(_subscription_key(kind), webhook.id))


# --- deliveries -----------------------------------------------------------------------------------


def claim_delivery(
    webhook_id: str,
    event_id: str,
    message_id: str,
    attempt: int,
    at: dt.datetime,
    keep: dt.timedelta,
) -> bool:
    """Whether this message may make this attempt: the delivery is neither delivered nor its
    receiver disabled, and no other live message owns it. A dead delivery's message is in the
    dead-letter queue; one moved back from there (by its id or a new one) starts it again."""
    try:
        _state(webhook_id, event_id).update(
            actions=[
                _StateItem.message_id.set(message_id),
                _StateItem.status.set("sending"),
                _StateItem.attempts.set(attempt),
                _StateItem.updated_at.set(at),
                _StateItem.expires.set(at + keep),
            ],
            condition=(
                _StateItem.message_id.does_not_exist()
                | (_StateItem.message_id == message_id)
                | (_StateItem.status == "dead")
            )
            & ~_StateItem.status.is_in(*FINAL_STATES),
        )
    except UpdateError as error:
        if condition_failed(error):
            return False
        raise
    return True


def log_attempt(
    uow: UnitOfWork, entry: DeliveryLogRecord, log_id: str, status: str, keep: dt.timedelta
) -> None:
    """An attempt's log entry, and where the delivery now stands."""
    item = item_of(_LogItem, entry, sk=LOG_PREFIX + log_id, expires=entry.at + keep)
    uow.put(item)
    uow.update(
        _state(entry.webhook_id, entry.event_id),
        [_StateItem.status.set(status), _StateItem.updated_at.set(entry.at)],
    )


def page_log(webhook_id: str, limit: int, cursor: str | None) -> Page[DeliveryLogRecord]:
    """Every attempt for the receiver, newest first."""

    def query(**page: Any) -> Any:
        return _LogItem.query(
            webhook_id, _LogItem.sk.startswith(LOG_PREFIX), scan_index_forward=False, **page
        )

    return read_page(
        query, {"webhook_id", "sk"}, limit, cursor, lambda item: record_of(DeliveryLogRecord, item)
    )
