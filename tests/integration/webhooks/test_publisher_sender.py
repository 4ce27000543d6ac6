"""The outbox to the receivers, in process with moto's server: events-table items (written as the
print path writes its outcomes) are fanned out from the table's stream by the events publisher to
the receivers subscribed to their kind, and delivered signed; failures retry, then dead-letter."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from etikett.domain.webhooks import webhooks
from etikett.ids import new_id
from etikett.store import clients
from etikett.store import events as store_events
from etikett.store.events import EventRecord
from etikett.store.unit_of_work import UnitOfWork
from support.outbox_stream import publisher_event
from support.stack import REGION

from .receiver import Receiver
from .stack import Stack, webhook_stack

MAX_ATTEMPTS = 3


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # One stack per module: moto's state is per process (see stack.py).
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        webhook_stack(
            tmp_path_factory.mktemp("stack"), monkeypatch, {"WebhookMaxAttempts": MAX_ATTEMPTS}
        ) as running,
    ):
        yield running


@pytest.fixture(autouse=True)
def _receivers_go_with_their_test(stack: Stack) -> Iterator[None]:
    yield
    stack.unsubscribe_all()


def _outcome(kind: str, job_id: str) -> EventRecord:
    """An outbox item as the print path records an outcome (in its job's transaction)."""
    outcome = kind.removeprefix("print.")
    return EventRecord(
        id=new_id("evt"),
        kind=kind,
        at=datetime.now(UTC),
        subject_id=job_id,
        data={
            "job_id": job_id,
            "label_id": "lbl_01TEST",
            "label_version": 2,
            "printer": "Packtisch 1",
            "labels": 3,
            "copies": 1,
            "outcome": outcome,
            "reason": "paper_out" if outcome == "held" else None,
        },
    )


def _commit(*records: EventRecord) -> None:
    with UnitOfWork() as uow:
        for record in records:
            store_events.add(uow, record)


def _log(webhook_id: str, entries: int) -> list[webhooks.Delivery]:
    """The delivery log once it has `entries` entries (written just after each attempt)."""
    deadline = time.monotonic() + 30
    while True:
        items = webhooks.list_deliveries(webhook_id, 50, None).items
        if len(items) >= entries or time.monotonic() > deadline:
            return items
        time.sleep(0.05)


def _events(receiver: Receiver, secret: str) -> list[dict]:
    return [Webhook(secret).verify(r.body, r.headers) for r in receiver.requests]


def test_print_outcomes_reach_exactly_the_subscribed_receivers(stack: Stack) -> None:
    with Receiver() as shipped, Receiver() as trouble, Receiver() as labels:
        sent_hook = stack.subscribe(shipped.url, ["print.sent", "print.confirmed"])
        trouble_hook = stack.subscribe(trouble.url, ["print.failed", "print.held"])
        labels_hook = stack.subscribe(labels.url, ["label.approved"])
        records = {
            kind: _outcome(kind, f"job_{n}")
            for n, kind in enumerate(
                ["print.held", "print.sent", "print.confirmed", "print.failed"]
            )
        }
        _commit(*records.values())

        shipped.wait_for(lambda rs: len(rs) == 2)
        trouble.wait_for(lambda rs: len(rs) == 2)
        time.sleep(1)  # room for anything that should not come
        got = _events(shipped, sent_hook.secret)
        assert sorted(e["type"] for e in got) == ["print.confirmed", "print.sent"]
        assert sorted(e["type"] for e in _events(trouble, trouble_hook.secret)) == [
            "print.failed",
            "print.held",
        ]
        assert labels.requests == []
        sent = next(e for e in got if e["type"] == "print.sent")
        record = records["print.sent"]
        assert sent == {
            "id": record.id,
            "type": "print.sent",
            "created_at": sent["created_at"],
            "data": record.data,
        }
        assert sent["created_at"].endswith("Z")
        assert {r.headers["webhook-id"] for r in shipped.requests} == {
            records["print.sent"].id,
            records["print.confirmed"].id,
        }
        assert [(d.outcome, d.attempt, d.status_code) for d in _log(sent_hook.id, 2)] == [
            ("delivered", 1, 200)
        ] * 2
        assert webhooks.list_deliveries(labels_hook.id, 50, None).items == []


def _deliveries_drained(stack: Stack) -> None:
    """Until the deliveries queue holds no message, visible or in flight."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    deadline = time.monotonic() + 10
    while True:
        counts = stack.sqs.get_queue_attributes(
            QueueUrl=stack.queue("WebhookDeliveriesQueue"), AttributeNames=names
        )["Attributes"]
        if all(counts[name] == "0" for name in names):
            return
        assert time.monotonic() < deadline, counts
        time.sleep(0.05)


def test_an_event_fanned_out_twice_is_delivered_once(stack: Stack) -> None:
    with Receiver() as receiver:
        stack.subscribe(receiver.url, ["print.confirmed"])
        record = _outcome("print.confirmed", "job_twice")
        _commit(record)
        receiver.wait_for(lambda rs: len(rs) == 1)
        # As when Lambda hands the stream record over again (after a later record of its batch
        # failed): the publisher fans the event out a second time.
        replay = publisher_event(
            stack.dynamodb, stack.streams, stack.queue("EventsTable"), [record.id], REGION
        )
        answer = stack.functions.invoke("EventsPublisherFunction", replay)
        assert answer == {"batchItemFailures": []}
        _deliveries_drained(stack)  # the second task was received and let go
        assert len(receiver.requests) == 1


def test_an_event_nobody_hears_of_sends_no_delivery_message(stack: Stack) -> None:
    sqs = clients.client("sqs")  # the events publisher's client (the same process)
    sent: list[str] = []

    def seen(params: dict[str, Any], **_: Any) -> None:
        sent.extend(json.loads(e["MessageBody"])["event"]["id"] for e in params["Entries"])

    with Receiver() as receiver:
        stack.subscribe(receiver.url, ["print.sent"])
        unheard, heard = _outcome("print.held", "job_u"), _outcome("print.sent", "job_h")
        sqs.meta.events.register("provide-client-params.sqs.SendMessageBatch", seen)
        try:
            _commit(unheard)
            _commit(heard)  # later on the same stream: once it is delivered, both were handled
            receiver.wait_for(lambda rs: len(rs) == 1)
            _deliveries_drained(stack)
        finally:
            sqs.meta.events.unregister("provide-client-params.sqs.SendMessageBatch", seen)
    assert sent == [heard.id]  # once: no stream retry, no message for the unheard event


def test_a_failed_fan_out_is_retried_from_its_stream_record(stack: Stack) -> None:
    faults = httpx.Client(base_url=f"{stack.endpoint}/moto-api/etikett/faults")
    # The subscriptions' Query throttled beyond the SDK's retries (4 attempts in all), once.
    rule = {"service": "dynamodb", "operations": ["Query"], "limit": 4}
    with Receiver() as receiver:
        hook = stack.subscribe(receiver.url, ["print.failed"])
        record = _outcome("print.failed", "job_retry")
        faults.post("", json={"rules": [rule]}).raise_for_status()
        try:
            _commit(record)
            receiver.wait_for(lambda rs: len(rs) == 1, timeout=30)
            (fired,) = faults.get("").json()["rules"]
        finally:
            faults.delete("")
        _deliveries_drained(stack)
    assert fired["fired"] == 4  # the first fan-out failed; only the stream's retry could deliver
    assert [e["id"] for e in _events(receiver, hook.secret)] == [record.id]


def test_failures_retry_then_die_without_holding_up_other_receivers(stack: Stack) -> None:
    with Receiver() as healthy, Receiver([500, 500]) as flaky, Receiver([503] * 9) as broken:
        hooks = {
            name: stack.subscribe(receiver.url, ["print.failed"])
            for name, receiver in (("healthy", healthy), ("flaky", flaky), ("broken", broken))
        }
        record = _outcome("print.failed", "job_f")
        _commit(record)
        healthy.wait_for(lambda rs: len(rs) == 1)

        flaky.wait_for(lambda rs: len(rs) == 3, timeout=60)  # after 2 s, then 4 s more
        broken.wait_for(lambda rs: len(rs) == MAX_ATTEMPTS, timeout=60)
        # Not held up by the others' retries: delivered before the first of them (2 s after the
        # first attempts), whatever time a loaded machine needs to get there.
        assert healthy.requests[0].at < min(flaky.requests[1].at, broken.requests[1].at)
        assert [r.status for r in flaky.requests] == [500, 500, 200]
        for receiver in (healthy, flaky, broken):
            assert {r.headers["webhook-id"] for r in receiver.requests} == {record.id}
        assert [(d.attempt, d.outcome, d.status_code) for d in _log(hooks["flaky"].id, 3)] == [
            (3, "delivered", 200),
            (2, "retrying", 500),
            (1, "retrying", 500),
        ]
        assert [d.outcome for d in _log(hooks["healthy"].id, 1)] == ["delivered"]

        # After the last attempt: dead, and the task in the dead-letter queue.
        log = _log(hooks["broken"].id, MAX_ATTEMPTS)
        assert [(d.attempt, d.outcome, d.status_code, d.error) for d in log] == [
            (3, "dead", 503, "HTTP 503"),
            (2, "retrying", 503, "HTTP 503"),
            (1, "retrying", 503, "HTTP 503"),
        ]
        assert log[0].next_attempt_at is None and log[1].next_attempt_at is not None
        deadline = time.monotonic() + 30
        dead: list[dict] = []
        while not dead and time.monotonic() < deadline:
            dead = stack.receive_all("WebhookDeliveriesDlq")
        (message,) = dead
        assert json.loads(message["Body"]) == {
            "webhook_id": hooks["broken"].id,
            "event": json.loads(broken.requests[0].body),
        }
        time.sleep(1)
        assert [len(r.requests) for r in (healthy, flaky, broken)] == [1, 3, MAX_ATTEMPTS]
