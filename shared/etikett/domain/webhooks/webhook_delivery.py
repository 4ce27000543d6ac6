"""Delivering events to receivers: the webhook sender's part.

Each delivery task (a deliveries-queue message, made by the fan-out: `webhook_fanout`) is one event
for one receiver. Each attempt POSTs the event signed by the Standard Webhooks scheme and is
written to the delivery log.

A failed attempt is retried through the queue: the message stays (it is reported as a failed batch
item) and becomes visible again after the backoff; the queue's receive count is the attempt number,
and after the last attempt the queue's redrive moves it to the dead-letter queue.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from etikett import clock
from etikett.domain.webhooks import events
from etikett.domain.webhooks import webhook_receivers as receivers
from etikett.domain.webhooks.webhook_fanout import Task
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store import queues, webhooks
from etikett.store.unit_of_work import UnitOfWork
from etikett.store.webhooks import DeliveryLogRecord, WebhookRecord
from etikett_engine import outgoing

if TYPE_CHECKING:
    import httpx

DELIVERIES_QUEUE_ENV = "ETIKETT_WEBHOOK_DELIVERIES_QUEUE"
MAX_DELAY_SECONDS = 900
TIMEOUT_SECONDS = 10.0
LOG_RETENTION = timedelta(days=30)
USER_AGENT = "Etikett-Webhooks/1"
_MAX_ERROR = 300


def max_attempts() -> int:
    """The last attempt; the deliveries queue's maxReceiveCount is the same template parameter."""
    return get_settings().webhook_max_attempts


def backoff_seconds(attempt: int) -> int:
    """How long after failed attempt `attempt` (1 = the first) the next one is made."""
    delay: int = min(2 ** max(1, attempt), MAX_DELAY_SECONDS)
    return delay


def schedule(attempts: int) -> list[int]:
    """The waits between `attempts` attempts."""
    return [backoff_seconds(n) for n in range(1, attempts)]


# --- the queue --------------------------------------------------------------------------------


def postpone(receipt_handle: str, seconds: int) -> None:
    """Make a received delivery message visible again in `seconds` (the backoff)."""
    queues.postpone_delivery(receipt_handle, seconds)


# --- one attempt -------------------------------------------------------------------------------


def signed_headers(secret: str, event_id: str, body: bytes, at: datetime) -> dict[str, str]:
    """The Standard Webhooks headers: the id is the event's, so the same on every retry."""
    # Loaded here, not at the webhook_sender function's cold start.
    from standardwebhooks import Webhook

    stamp = datetime.fromtimestamp(int(at.timestamp()), tz=UTC)
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": event_id,
        "webhook-timestamp": str(int(stamp.timestamp())),
        "webhook-signature": Webhook(secret).sign(event_id, stamp, body.decode()),
    }


class Response(NamedTuple):
    status_code: int | None
    error: str | None
    duration_ms: int

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _http(private_allowed: bool) -> httpx.Client:
    """The engine's pinned client (`etikett_engine.outgoing`), kept per warm container: its
    connections stay."""
    return outgoing.kept_client(timeout=TIMEOUT_SECONDS, private_allowed=private_allowed)


def post(
    url: str, body: bytes, headers: dict[str, str], timeout: float = TIMEOUT_SECONDS
) -> Response:
    """One POST: no retries here, no redirects followed, `timeout` for each phase (connect,
    send, answer). Through the pinned client: every address the name resolves to is checked,
    and the connection goes to a checked one."""
    # Loaded here, not at the webhook_sender function's cold start.
    import httpx

    started = time.monotonic()

    def done(status: int | None, error: str | None) -> Response:
        duration = int((time.monotonic() - started) * 1000)
        return Response(status, error[:_MAX_ERROR] if error else None, duration)

    private_allowed = get_settings().outgoing_private_networks
    try:
        outgoing.check_url(url, private_allowed=private_allowed)
    except outgoing.UrlRefused as refused:
        return done(None, f"URL refused: it {refused}")
    try:
        # The answer's body is not needed: only its status and headers are read.
        with _http(private_allowed).stream(
            "POST", url, content=body, headers=headers, timeout=timeout
        ) as answer:
            status = answer.status_code
            location = answer.headers.get("location")
    except outgoing.AddressRefused as refused:
        return done(None, f"URL refused: {refused}")
    except httpx.TimeoutException:
        return done(None, f"no answer within {timeout:g} s")
    except httpx.ConnectError as error:
        return done(None, f"cannot connect: {error}")
    except httpx.HTTPError as error:
        return done(None, f"{type(error).__name__}: {error}")
    if 300 <= status < 400:
        return done(status, f"redirect to {location!r} not followed")
    return done(status, None if 200 <= status < 300 or status == 410 else f"HTTP {status}")


class Decision(NamedTuple):
    """What becomes of the queue message: deleted (`done`), retried after `retry_in` seconds, or
    left to the queue's redrive to the dead-letter queue (`dead`)."""

    done: bool = False
    retry_in: int | None = None
    dead: bool = False
    note: str = ""


_secrets: dict[str, str] = {}


def _secret(record: WebhookRecord) -> str:
    # Secrets never change for an id (ids are never reused): decrypt once per warm container.
    if record.id not in _secrets:
        if len(_secrets) > 1000:
            _secrets.clear()
        _secrets[record.id] = receivers.decrypt_secret(record)
    return _secrets[record.id]


def claim(webhook_id: str, event_id: str, message_id: str, attempt: int) -> bool:
    """Whether this message may make this attempt (see `store.webhooks.claim_delivery`)."""
    return webhooks.claim_delivery(
        webhook_id, event_id, message_id, attempt, clock.now(), LOG_RETENTION
    )


def _record(
    record: WebhookRecord,
    event: dict[str, Any],
    attempt: int,
    response: Response,
    outcome: str,
    status: str,
    *,
    next_attempt_at: datetime | None = None,
    disable_reason: str | None = None,
) -> None:
    entry = DeliveryLogRecord(
        webhook_id=record.id,
        event_id=event["id"],
        kind=event["type"],
        attempt=attempt,
        status_code=response.status_code,
        outcome=outcome,
        error=response.error,
        duration_ms=response.duration_ms,
        at=clock.now(),
        next_attempt_at=next_attempt_at,
    )
    with UnitOfWork() as uow:
        webhooks.log_attempt(uow, entry, new_id("dlv"), status, LOG_RETENTION)
        if disable_reason is not None:
            receivers.disable(uow, record, disable_reason)


def deliver(task: Task, attempt: int, message_id: str) -> Decision:
    """Attempt `attempt` (the queue's receive count) of delivering `task`."""
    event = task.event
    record = receivers.find(task.webhook_id)
    if record is None or not record.active:
        return Decision(done=True, note="receiver removed or disabled; nothing sent")
    if not claim(record.id, event["id"], message_id, attempt):
        return Decision(done=True, note="delivered, or owned by another message")
    body = events.encode(event)
    headers = signed_headers(_secret(record), event["id"], body, clock.now())
    response = post(record.url, body, headers)
    if response.delivered:
        _record(record, event, attempt, response, "delivered", "delivered")
        return Decision(done=True, note="delivered")
    if response.status_code == 410:
        reason = (
            f"The receiver answered 410 Gone to event {event['id']} "
            f"at {clock.rfc3339(clock.now())}."
        )
        _record(record, event, attempt, response, "failed", "disabled", disable_reason=reason)
        return Decision(done=True, note="receiver disabled (410)")
    if attempt >= max_attempts():
        _record(record, event, attempt, response, "dead", "dead")
        return Decision(dead=True, note=response.error or "failed")
    delay = backoff_seconds(attempt)
    _record(
        record,
        event,
        attempt,
        response,
        "retrying",
        "retrying",
        next_attempt_at=clock.now() + timedelta(seconds=delay),
    )
    return Decision(retry_in=delay, note=response.error or "failed")
