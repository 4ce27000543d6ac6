"""Webhook receivers: registering (with a signing secret shown once), listing, removing, and
their delivery logs."""

from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator

from etikett import clock
from etikett.domain import outgoing
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.webhooks.events import EVENT_KINDS, EventKind
from etikett.domain.webhooks.webhook_receivers import encrypt_secret, new_secret
from etikett.ids import new_id
from etikett.store import webhooks
from etikett.store.pages import Page
from etikett.store.unit_of_work import UnitOfWork
from etikett.store.webhooks import DeliveryLogRecord, WebhookRecord
from etikett_engine.errors import InvalidRequest, NotFound, ProblemCode
from etikett_engine.model import Model

Outcome = Literal["delivered", "retrying", "failed", "dead"]


class NewWebhook(Model):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(
        min_length=1,
        max_length=outgoing.MAX_URL_LENGTH,
        description="HTTPS; plain HTTP only to loopback (localhost, 127.0.0.0/8, ::1), for tests.",
        examples=["https://example.com/hooks/etikett"],
    )
    events: list[EventKind] = Field(
        min_length=1,
        max_length=len(EVENT_KINDS),
        description="The event kinds to receive (spec part 6).",
        examples=[["label.approved", "print.failed"]],
    )

    @field_validator("events")
    @classmethod
    def _unique(cls, events: list[str]) -> list[str]:
        return [kind for kind in EVENT_KINDS if kind in events]  # catalog order, no duplicates


class Webhook(Model):
    id: str
    url: str
    events: list[EventKind]
    active: bool = Field(description="False once the receiver answered 410 Gone.")
    disabled_reason: str | None = None
    disabled_at: str | None = None
    created_at: str
    created_by: str


class CreatedWebhook(Webhook):
    secret: str = Field(
        description="The signing secret (`whsec_` + base64 of 32 random bytes). Shown in this "
        "answer only; store it as a secret.",
        examples=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    )


class Delivery(Model):
    event_id: str
    kind: EventKind
    attempt: int = Field(description="1 for the first try.")
    status_code: int | None = Field(description="The receiver's HTTP status; none on a timeout.")
    outcome: Outcome = Field(
        description="delivered (2xx); retrying (failed, tried again later); failed (410: the "
        "receiver is disabled); dead (the last attempt failed)."
    )
    error: str | None = None
    duration_ms: int
    at: str
    next_attempt_at: str | None = None


def _shown(url: str) -> str:
    """The URL without its query, which some receivers use for a token of their own."""
    return urlsplit(url)._replace(query="").geturl()


def _rfc3339(moment: datetime | None) -> str | None:
    return clock.rfc3339(moment) if moment is not None else None


def view(record: WebhookRecord) -> Webhook:
    return Webhook(
        id=record.id,
        url=record.url,
        events=list(record.events),
        active=bool(record.active),
        disabled_reason=record.disabled_reason,
        disabled_at=_rfc3339(record.disabled_at),
        created_at=clock.rfc3339(record.created_at),
        created_by=record.created_by,
    )


def delivery_view(record: DeliveryLogRecord) -> Delivery:
    return Delivery(
        event_id=record.event_id,
        kind=record.kind,
        attempt=record.attempt,
        status_code=record.status_code,
        outcome=record.outcome,
        error=record.error,
        duration_ms=record.duration_ms,
        at=clock.rfc3339(record.at),
        next_attempt_at=_rfc3339(record.next_attempt_at),
    )


# --- operations --------------------------------------------------------------------------------


def load(webhook_id: str) -> WebhookRecord:
    record = webhooks.get(webhook_id)
    if record is None:
        raise NotFound(
            f"No webhook {webhook_id}.", ProblemCode.WEBHOOK_NOT_FOUND, webhook_id=webhook_id
        )
    return record


def create(invocation: Invocation, request: NewWebhook) -> CreatedWebhook:
    try:
        url = outgoing.check_url(request.url)
    except outgoing.UrlRefused as refused:
        raise InvalidRequest(
            f"The webhook URL is refused: it {refused}.",
            ProblemCode.WEBHOOK_URL_REFUSED,
            fields=[{"field": "body.url", "message": str(refused), "type": "value_error"}],
        ) from None
    caller = invocation.caller
    assert caller is not None
    webhook_id = new_id("whk")
    secret = new_secret()
    record = WebhookRecord(
        id=webhook_id,
        url=url,
        events=tuple(request.events),
        secret_ciphertext=encrypt_secret(webhook_id, secret),
        active=True,
        disabled_reason=None,
        disabled_at=None,
        created_at=clock.now(),
        created_by=caller.subject,
    )
    details = {"url": _shown(url), "events": request.events}
    with UnitOfWork(audit.record(invocation, webhook_id, details=details)) as uow:
        webhooks.add(uow, record)
    return CreatedWebhook(**view(record).model_dump(), secret=secret)


def list_webhooks(limit: int, cursor: str | None) -> Page[Webhook]:
    found = webhooks.page(limit, cursor)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def delete(invocation: Invocation, webhook_id: str) -> None:
    record = load(webhook_id)
    details = {"url": _shown(record.url), "events": list(record.events)}
    with UnitOfWork(audit.record(invocation, webhook_id, details=details)) as uow:
        webhooks.delete(uow, record)


def list_deliveries(webhook_id: str, limit: int, cursor: str | None) -> Page[Delivery]:
    """Every attempt for the receiver, newest first."""
    load(webhook_id)
    found = webhooks.page_log(webhook_id, limit, cursor)
    return Page(items=[delivery_view(r) for r in found.items], next_cursor=found.next_cursor)
