"""The outgoing event catalog (spec part 6) and the payload every receiver gets, made from an
outbox item of the events table.

An event is published iff its outbox item was committed: the events publisher reads the events
table's stream, never the code that made the change, and fans each event out to its receivers
(`webhook_fanout.fan_out`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, get_args

from etikett import clock

if TYPE_CHECKING:
    from etikett.store.events import EventRecord

EventKind = Literal["print.failed", "print.held", "print.sent", "print.confirmed", "label.approved"]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)

PAYLOAD_DOC = """\
Every event is POSTed as JSON (`content-type: application/json`):

```json
{"id": "evt_01J…", "type": "label.approved", "created_at": "2026-11-05T09:30:00.123Z",
 "data": {"label_id": "lbl_01J…", "version": 3, "name": "Shipping 4x6",
          "approved_by": {"actor": "human", "subject": "ada"},
          "author": {"actor": "service", "subject": "label-bot"}, "previous_version": 2}}
```

`print.*` events carry `data`: `job_id`, `label_id`, `label_version`, `printer`, `labels`,
`copies`, `outcome`, `reason`. A print a Runner made while the service was unreachable is
announced when it syncs, with `printed_offline: true` and its print time `printed_at` (and
`flag` when the sync found something wrong but archived it, e.g. `deployment_not_approved`).

Signed by the Standard Webhooks scheme: headers `webhook-id` (the event id; the same on every
retry, so dedupe by it), `webhook-timestamp` (Unix seconds of this attempt) and
`webhook-signature` (`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` with
the secret's bytes). Verify with any Standard Webhooks library, e.g. Python's
`standardwebhooks.Webhook(secret).verify(body, headers)`.

Answer 2xx within 10 s to acknowledge. `410 Gone` disables the receiver (see `listWebhooks`,
`disabled_reason`). Anything else (or a timeout, or a redirect, which is never followed) is
retried with exponential backoff: 2, 4, 8, … seconds after the failed attempt, at most 900 s
apart, until the last attempt (12 by default); the delivery is then `dead`.
`listWebhookDeliveries` shows every attempt. Only HTTPS receivers, or plain HTTP on loopback
(`localhost`, 127.0.0.0/8, ::1) for development.
"""


def payload(record: EventRecord) -> dict[str, Any]:
    """What receivers get: `{"id", "type", "created_at", "data"}`."""
    return {
        "id": record.id,
        "type": record.kind,
        "created_at": clock.rfc3339(record.at),
        "data": record.data or {},
    }


def payload_from_image(image: dict[str, Any]) -> dict[str, Any]:
    """The payload of an events-table item as a DynamoDB stream shows it (typed attributes)."""
    # Imported here: the webhook sender encodes payloads but reads no events table.
    from etikett.store import events

    return payload(events.from_stream_image(image))


def encode(event: dict[str, Any]) -> bytes:
    """The body bytes: compact UTF-8 JSON, the same on every attempt."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
