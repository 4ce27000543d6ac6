"""The events publisher's entry on the events table's stream (moto's, in process): each new outbox
item is fanned out to the receivers subscribed to its kind, straight onto the deliveries queue; a
record whose fan-out fails is the batch's item failure, from which the stream retries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from etikett import settings
from etikett.domain.webhooks import webhook_fanout as fanout
from etikett.domain.webhooks import webhook_receivers as receivers
from etikett.domain.webhooks import webhooks
from etikett.domain.webhooks.webhooks import NewWebhook
from etikett.ids import new_id
from etikett.local.functions import FunctionRegistry
from etikett.store import events as store_events
from etikett.store.events import EventRecord
from etikett.store.unit_of_work import UnitOfWork
from support.outbox_stream import publisher_event
from unit.domain.callers import human
from unit.domain.conftest import REGION, Aws

PUBLISHER = "EventsPublisherFunction"


def _commit(kind: str) -> EventRecord:
    record = EventRecord(
        id=new_id("evt"),
        kind=kind,
        at=datetime.now(UTC),
        subject_id="job_pub",
        data={"job_id": "job_pub", "outcome": kind.removeprefix("print.")},
    )
    with UnitOfWork() as uow:
        store_events.add(uow, record)
    return record


def _stream(aws: Aws, *records: EventRecord) -> dict[str, Any]:
    return publisher_event(
        aws.client("dynamodb"),
        aws.client("dynamodbstreams"),
        aws.ref("EventsTable"),
        [record.id for record in records],
        REGION,
    )


def _deliveries_of(aws: Aws, event_id: str | None) -> list[fanout.Task]:
    """The queue's tasks for the event `event_id` (None: every event's)."""
    sqs, queue = aws.client("sqs"), aws.ref("WebhookDeliveriesQueue")
    tasks = []
    while batch := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages"):
        tasks += [fanout.Task.from_message(m["Body"]) for m in batch]
    return [task for task in tasks if event_id in (None, task.event["id"])]


@pytest.fixture
def publisher(aws: Aws) -> FunctionRegistry:
    return FunctionRegistry(aws.template.functions, REGION)


def _unsubscribe_everyone_from(kind: str) -> None:
    for webhook_id in receivers.subscribers(kind):
        webhooks.delete(human("deleteWebhook", "admin"), webhook_id)


def test_a_new_outbox_item_becomes_one_delivery_task_per_subscriber(
    aws: Aws, publisher: FunctionRegistry
) -> None:
    _unsubscribe_everyone_from("print.sent")
    hooks = [
        webhooks.create(
            human("createWebhook", "admin"),
            NewWebhook(url="http://127.0.0.1:9/hook", events=["print.sent"]),  # type: ignore[list-item]
        ).id
        for _ in range(2)
    ]
    record = _commit("print.sent")
    assert publisher.invoke(PUBLISHER, _stream(aws, record)) == {"batchItemFailures": []}
    tasks = _deliveries_of(aws, record.id)
    assert sorted(task.webhook_id for task in tasks) == sorted(hooks)
    assert {task.event["type"] for task in tasks} == {"print.sent"}


def test_a_failed_fan_out_is_the_batch_item_failure_the_stream_retries_from(
    aws: Aws, publisher: FunctionRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unsubscribe_everyone_from("print.confirmed")
    _unsubscribe_everyone_from("print.failed")
    webhooks.create(
        human("createWebhook", "admin"),
        NewWebhook(url="http://127.0.0.1:9/hook", events=["print.failed"]),  # type: ignore[list-item]
    )
    unheard, failed = _commit("print.confirmed"), _commit("print.failed")
    batch = _stream(aws, unheard, failed)
    # The deliveries queue refuses (here: it is not there); nobody hears of the first event, so
    # it needs no queue and is done.
    monkeypatch.setenv("ETIKETT_WEBHOOK_DELIVERIES_QUEUE", aws.ref("WebhookDeliveriesQueue") + "x")
    settings.reload()
    try:
        answer = publisher.invoke(PUBLISHER, batch)
    finally:
        monkeypatch.undo()
        settings.reload()
    sequence = batch["Records"][1]["dynamodb"]["SequenceNumber"]
    assert answer == {"batchItemFailures": [{"itemIdentifier": sequence}]}
    assert _deliveries_of(aws, failed.id) == []
    # The stream hands the batch over again from the failed record: now it is fanned out.
    retried = {"Records": batch["Records"][1:]}
    assert publisher.invoke(PUBLISHER, retried) == {"batchItemFailures": []}
    assert [task.event["id"] for task in _deliveries_of(aws, failed.id)] == [failed.id]


def test_a_batch_reads_every_kind_s_receivers_at_once_and_the_next_batch_reads_them_again(
    aws: Aws, publisher: FunctionRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from etikett.store import webhooks as subscriptions

    _unsubscribe_everyone_from("print.sent")
    _unsubscribe_everyone_from("print.failed")
    admin = human("createWebhook", "admin")
    first = webhooks.create(
        admin,
        NewWebhook(url="http://127.0.0.1:9/a", events=["print.sent", "print.failed"]),  # type: ignore[list-item]
    ).id
    reads: list[int] = []
    real = subscriptions.subscribers_by_kind

    def counted(kinds: Any) -> dict[str, list[str]]:
        reads.append(1)
        return real(kinds)

    monkeypatch.setattr(subscriptions, "subscribers_by_kind", counted)
    batch = [_commit("print.sent"), _commit("print.failed"), _commit("print.sent")]
    assert publisher.invoke(PUBLISHER, _stream(aws, *batch)) == {"batchItemFailures": []}
    assert reads == [1]  # one query for both kinds
    tasks = _deliveries_of(aws, None)  # the queue read once: a read hides what it received
    for record in batch:
        assert [t.webhook_id for t in tasks if t.event["id"] == record.id] == [first]
    # A receiver subscribed since hears the next batch's events.
    second = webhooks.create(
        admin,
        NewWebhook(url="http://127.0.0.1:9/b", events=["print.sent"]),  # type: ignore[list-item]
    ).id
    later = _commit("print.sent")
    assert publisher.invoke(PUBLISHER, _stream(aws, later)) == {"batchItemFailures": []}
    assert sorted(t.webhook_id for t in _deliveries_of(aws, later.id)) == sorted([first, second])
    assert reads == [1, 1]


def test_subscriptions_kept_per_kind_before_are_copied_once_and_removed_with_their_receiver(
    aws: Aws,
) -> None:
    """Before 2026-11-28 each kind's subscriptions had a partition of their own: the first
    read copies them into the one partition, and removing the receiver removes both."""
    from etikett.store import webhooks as subscriptions

    admin = human("createWebhook", "admin")
    kinds = ["print.held", "label.approved"]
    kept = webhooks.create(
        admin,
        NewWebhook(url="http://127.0.0.1:9/k", events=kinds),  # type: ignore[arg-type]
    )
    # As a service before that day had it: per-kind items only, nothing copied yet.
    old, new = subscriptions._SubscriptionItem, subscriptions._SubscriptionsItem
    for kind in kinds:
        new(subscriptions.SUBSCRIPTIONS, f"{kind}#{kept.id}").delete()
        old(key=f"sub#{kind}", webhook_id=kept.id).save()
    new(subscriptions.SUBSCRIPTIONS, subscriptions.COPIED).delete()
    assert kept.id in receivers.subscribers("print.held")  # copied at the first read
    for kind in kinds:
        new.get(subscriptions.SUBSCRIPTIONS, f"{kind}#{kept.id}")  # raises if it is not there
    webhooks.delete(human("deleteWebhook", "admin"), kept.id)
    found = subscriptions.subscribers_by_kind(kinds)
    assert all(kept.id not in found.get(kind, []) for kind in kinds)
    assert [list(old.query(f"sub#{kind}")) for kind in kinds] == [[], []]


def test_a_receiver_removed_while_the_subscriptions_are_copied_is_not_brought_back(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy's transaction writes each subscription only while its original still exists: a
    receiver removed between the copy's read and its write cancels the chunk, and the copy
    starts over from what is there now."""
    from etikett.store import webhooks as subscriptions

    admin = human("createWebhook", "admin")
    kind = "print.failed"
    kept, removed = (
        webhooks.create(
            admin,
            NewWebhook(url=f"http://127.0.0.1:9/{name}", events=[kind]),  # type: ignore[list-item]
        )
        for name in ("kept", "removed")
    )
    old, new = subscriptions._SubscriptionItem, subscriptions._SubscriptionsItem
    for receiver in (kept, removed):  # the layout before 2026-11-28, nothing copied yet
        new(subscriptions.SUBSCRIPTIONS, f"{kind}#{receiver.id}").delete()
        old(key=f"sub#{kind}", webhook_id=receiver.id).save()
    new(subscriptions.SUBSCRIPTIONS, subscriptions.COPIED).delete()

    reads: list[list[str]] = []
    query = old.query

    def read_then_remove(*args: Any, **kwargs: Any) -> Any:
        found = list(query(*args, **kwargs))
        reads.append([item.webhook_id for item in found])
        if len(reads) == 1:  # removed after the copy read it, before its transaction
            old(key=f"sub#{kind}", webhook_id=removed.id).delete()
        return iter(found)

    monkeypatch.setattr(old, "query", read_then_remove)
    found = subscriptions.subscribers_by_kind([kind])
    ours = {kept.id, removed.id}
    assert [receiver for receiver in found[kind] if receiver in ours] == [kept.id]
    assert [sorted(ours & set(ids)) for ids in reads] == [sorted(ours), [kept.id]]
    entries = {item.entry for item in new.query(subscriptions.SUBSCRIPTIONS)}
    assert subscriptions.COPIED in entries and f"{kind}#{removed.id}" not in entries
