"""Webhook receivers: registered with a signing secret shown once and kept encrypted under its
own KMS key (moto's), URLs checked, and deliveries to a real receiver on loopback — signed,
logged per attempt, retried with backoff until dead, a 410 disabling the receiver, and each
event delivered to a receiver once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from integration.webhooks.receiver import Receiver
from standardwebhooks import Webhook as Verifier

from etikett import clock
from etikett.domain.webhooks import webhook_delivery as delivery
from etikett.domain.webhooks import webhook_fanout as fanout
from etikett.domain.webhooks import webhook_receivers as receivers
from etikett.domain.webhooks import webhooks
from etikett.domain.webhooks.webhooks import NewWebhook
from etikett.ids import new_id
from etikett.store import clients
from etikett.store import webhooks as webhook_store
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain.callers import human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def _register(url: str, *kinds: str) -> webhooks.CreatedWebhook:
    return webhooks.create(
        human("createWebhook", "admin"),
        NewWebhook(url=url, events=list(kinds or ("label.approved",))),  # type: ignore[arg-type]
    )


def _event(kind: str = "label.approved") -> dict[str, Any]:
    return {
        "id": new_id("evt"),
        "type": kind,
        "created_at": clock.rfc3339(clock.now()),
        "data": {"label_id": "lbl_x", "version": 2},
    }


def _deliver(webhook_id: str, event: dict[str, Any], attempt: int = 1, message: str = "m1") -> Any:
    return delivery.deliver(fanout.Task(webhook_id, event), attempt, message)


# --- receivers ------------------------------------------------------------------------------


def test_the_secret_is_answered_once_and_stored_encrypted(aws: Aws, receiver: Receiver) -> None:
    created = _register(
        receiver.url + "?token=abc", "label.approved", "print.failed", "label.approved"
    )
    assert created.secret.startswith("whsec_")
    assert created.events == ["print.failed", "label.approved"]  # the catalog's order, once
    items = aws.client("dynamodb").scan(TableName=aws.ref("WebhooksTable"))["Items"]
    assert created.secret not in str(items)
    record = receivers.find(created.id)
    assert record is not None and receivers.decrypt_secret(record) == created.secret
    listed = {w.id: w for w in webhooks.list_webhooks(200, None).items}
    assert "secret" not in listed[created.id].model_dump()
    (entry,) = trail(created.id)
    assert entry.details == {
        "url": receiver.url,  # without its query, which may hold the receiver's own token
        "events": ["print.failed", "label.approved"],
    }


def test_a_secret_opens_only_for_its_own_receiver(receiver: Receiver) -> None:
    one, other = _register(receiver.url), _register(receiver.url)
    record, elsewhere = receivers.find(one.id), receivers.find(other.id)
    assert record is not None and elsewhere is not None
    moved = elsewhere._replace(secret_ciphertext=record.secret_ciphertext)
    with pytest.raises(Exception, match="InvalidCiphertext"):
        receivers.decrypt_secret(moved)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hook",
        "ftp://127.0.0.1/x",
        "https://user:secret@example.com/hook",
        "https://example.com/hook#part",
        "nonsense",
    ],
)
def test_urls_that_are_neither_https_nor_loopback_are_refused(url: str) -> None:
    error = _refused(ProblemCode.WEBHOOK_URL_REFUSED, lambda: _register(url))
    assert error.params["fields"][0]["field"] == "body.url"


def test_a_deleted_receiver_is_gone_and_subscribed_to_nothing(receiver: Receiver) -> None:
    created = _register(receiver.url, "print.held")
    assert created.id in receivers.subscribers("print.held")
    webhooks.delete(human("deleteWebhook", "admin"), created.id)
    _refused(ProblemCode.WEBHOOK_NOT_FOUND, lambda: webhooks.load(created.id))
    assert created.id not in receivers.subscribers("print.held")
    assert operations(created.id) == ["createWebhook", "deleteWebhook"]
    _refused(ProblemCode.WEBHOOK_NOT_FOUND, lambda: webhooks.list_deliveries(created.id, 10, None))


# --- deliveries -----------------------------------------------------------------------------


def test_an_event_fans_out_to_its_subscribers_only(aws: Aws, receiver: Receiver) -> None:
    kind = "print.confirmed"
    wanted = {_register(receiver.url, kind).id, _register(receiver.url, kind, "print.sent").id}
    _register(receiver.url, "print.failed")
    sqs, queue = aws.client("sqs"), aws.ref("WebhookDeliveriesQueue")
    sqs.purge_queue(QueueUrl=queue)
    event = _event(kind)
    assert fanout.fan_out(event) == len(receivers.subscribers(kind))
    bodies = []
    while batch := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages"):
        bodies += [fanout.Task.from_message(m["Body"]) for m in batch]
    ours = {task.webhook_id for task in bodies if task.event["id"] == event["id"]}
    assert wanted <= ours and all(task.event == event for task in bodies)


def _messages_about(aws: Aws, event_id: str) -> list[dict[str, Any]]:
    """The deliveries-queue messages of the event, received (each now invisible for a while)."""
    sqs, queue = aws.client("sqs"), aws.ref("WebhookDeliveriesQueue")
    found = []
    while batch := sqs.receive_message(
        QueueUrl=queue, MaxNumberOfMessages=10, AttributeNames=["ApproximateReceiveCount"]
    ).get("Messages"):
        found += [m for m in batch if fanout.Task.from_message(m["Body"]).event["id"] == event_id]
    return found


def test_an_event_nobody_subscribes_to_sends_nothing_to_the_queue(aws: Aws) -> None:
    sqs = clients.client("sqs")  # the fan-out's own client: every call it makes is seen here
    calls: list[str] = []

    def seen(model: Any, **_: Any) -> None:
        calls.append(model.name)

    sqs.meta.events.register("before-call.sqs", seen)
    try:
        event = _event("print.held")
        for webhook_id in receivers.subscribers("print.held"):  # none left from other tests
            webhooks.delete(human("deleteWebhook", "admin"), webhook_id)
        assert fanout.fan_out(event) == 0
    finally:
        sqs.meta.events.unregister("before-call.sqs", seen)
    assert calls == []
    assert _messages_about(aws, event["id"]) == []


def test_an_event_fanned_out_twice_is_delivered_once(aws: Aws, receiver: Receiver) -> None:
    """As when the stream hands a record over again: two messages, one delivery, whichever of
    them comes first, even while the first has not finished."""
    created = _register(receiver.url, "print.sent")
    event = _event("print.sent")
    assert fanout.fan_out(event) >= 1 and fanout.fan_out(event) >= 1
    ours = [
        m
        for m in _messages_about(aws, event["id"])
        if fanout.Task.from_message(m["Body"]).webhook_id == created.id
    ]
    assert len(ours) == 2 and ours[0]["MessageId"] != ours[1]["MessageId"]
    decisions = [
        delivery.deliver(fanout.Task.from_message(m["Body"]), 1, m["MessageId"]) for m in ours
    ]
    assert [d.done for d in decisions] == [True, True]
    assert decisions[1].note.startswith("delivered, or owned")
    assert [r.headers["webhook-id"] for r in receiver.requests] == [event["id"]]


def test_a_delivery_is_signed_logged_and_made_once(receiver: Receiver) -> None:
    created = _register(receiver.url)
    event = _event()
    assert _deliver(created.id, event).done
    (request,) = receiver.requests
    assert json.loads(request.body) == event
    assert request.headers["webhook-id"] == event["id"]
    Verifier(created.secret).verify(request.body, request.headers)  # raises if not signed
    assert _deliver(created.id, event, message="another message").done  # delivered already
    assert len(receiver.requests) == 1
    (logged,) = webhooks.list_deliveries(created.id, 10, None).items
    assert (logged.event_id, logged.attempt, logged.outcome, logged.status_code) == (
        event["id"],
        1,
        "delivered",
        200,
    )


def test_a_failed_attempt_is_retried_with_backoff_until_the_last_is_dead() -> None:
    with Receiver([500, 503, 500]) as failing:
        created = _register(failing.url)
        event = _event()
        first = _deliver(created.id, event, attempt=1)
        assert (first.done, first.retry_in, first.dead) == (False, 2, False)
        second = _deliver(created.id, event, attempt=2)
        assert second.retry_in == 4
        last = _deliver(created.id, event, attempt=delivery.max_attempts())
        assert last.dead and not last.done
        ids = {r.headers["webhook-id"] for r in failing.requests}
        assert ids == {event["id"]} and len(failing.requests) == 3
    attempts = webhooks.list_deliveries(created.id, 10, None).items
    assert [(a.attempt, a.outcome) for a in attempts] == [
        (delivery.max_attempts(), "dead"),
        (2, "retrying"),
        (1, "retrying"),
    ]
    assert attempts[1].next_attempt_at is not None and attempts[1].error == "HTTP 503"
    assert attempts[0].next_attempt_at is None


def test_another_message_does_not_take_over_a_delivery_in_flight() -> None:
    with Receiver([500]) as failing:
        created = _register(failing.url)
        event = _event()
        _deliver(created.id, event, attempt=1, message="first")
        duplicate = _deliver(created.id, event, attempt=1, message="second")
        assert duplicate.done and duplicate.note.startswith("delivered, or owned")
        assert len(failing.requests) == 1


def test_410_gone_disables_the_receiver_with_the_reason() -> None:
    with Receiver([410]) as gone:
        created = _register(gone.url, "print.failed")
        event = _event("print.failed")
        assert _deliver(created.id, event).done
        disabled = webhooks.load(created.id)
        assert not disabled.active and disabled.disabled_reason is not None
        assert event["id"] in disabled.disabled_reason
        assert created.id not in receivers.subscribers("print.failed")
        assert _deliver(created.id, _event("print.failed")).note.startswith("receiver removed")
        assert len(gone.requests) == 1
    (logged,) = webhooks.list_deliveries(created.id, 10, None).items
    assert (logged.outcome, logged.status_code) == ("failed", 410)


def test_deliveries_page_newest_first() -> None:
    with Receiver([500, 500, 500, 500]) as failing:
        created = _register(failing.url)
        for attempt in range(1, 5):
            _deliver(created.id, _event(), attempt=1, message=f"m{attempt}")
    first = webhooks.list_deliveries(created.id, 3, None)
    rest = webhooks.list_deliveries(created.id, 3, first.next_cursor)
    moments = [d.at for d in first.items + rest.items]
    assert len(moments) == 4 and moments == sorted(moments, reverse=True)
    assert webhook_store.get(created.id) is not None
