"""The fan-out of an event to its receivers: one delivery task per receiver subscribed to the
event's kind, each its own message on the deliveries queue, so that a slow or failing receiver
never delays or duplicates another. The events publisher runs it for each committed event; the
webhook sender delivers the tasks (`webhook_delivery`).

Only what the fan-out needs is imported here (the subscriptions and the queue), so the events
publisher's cold start does not load the delivery's modules.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from etikett.domain.webhooks.events import EVENT_KINDS
from etikett.store import queues, webhooks


class Task(NamedTuple):
    """One event for one receiver: a deliveries-queue message."""

    webhook_id: str
    event: dict[str, Any]

    def to_message(self) -> str:
        return json.dumps({"webhook_id": self.webhook_id, "event": self.event})

    @classmethod
    def from_message(cls, body: str) -> Task:
        data = json.loads(body)
        return cls(webhook_id=str(data["webhook_id"]), event=dict(data["event"]))


class QueueError(RuntimeError):
    """The deliveries queue refused some messages; the event is fanned out again."""


class Subscriptions:
    """The receivers of every kind of event, read once for a batch of events (one query): a
    print's `print.sent` and `print.confirmed` often come in one batch, a sync of offline prints
    a hundred events. Made anew for each batch: a receiver subscribed since counts from the
    next."""

    def __init__(self) -> None:
        self._receivers: dict[str, list[str]] | None = None

    def receivers(self, kind: str) -> list[str]:
        if self._receivers is None:
            self._receivers = webhooks.subscribers_by_kind(EVENT_KINDS)
        return self._receivers.get(kind, [])


def fan_out(event: dict[str, Any], subscriptions: Subscriptions | None = None) -> int:
    """A delivery task per receiver subscribed to the event's kind; answers how many. No receiver:
    no queue call at all. `subscriptions`: the batch's, read once per kind (default: read now).

    Fanning the same event out twice is harmless: a delivery is claimed by one message only
    (`webhook_delivery.claim`), so the second task finds it delivered or owned and sends nothing.
    """
    receivers = (subscriptions or Subscriptions()).receivers(event["type"])
    tasks = [Task(webhook_id, event) for webhook_id in receivers]
    try:
        queues.send_deliveries([task.to_message() for task in tasks])
    except queues.QueueRefused as refused:
        raise QueueError(str(refused)) from None
    return len(tasks)
