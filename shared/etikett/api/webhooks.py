"""Routes of the Webhooks group: receivers of the outgoing events (spec part 6) and their
delivery logs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Response

from etikett.api.access import requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.webhooks import webhooks
from etikett.domain.webhooks.events import PAYLOAD_DOC

routes = router(prefix="/api/v1/webhooks", tags=["Webhooks"])
Admin = Annotated[Invocation, requires("admin")]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown webhook (`webhook.not_found`)"}
}


@routes.get(
    "",
    operation_id="listWebhooks",
    response_model=ItemList[webhooks.Webhook],
    summary="List webhook receivers, newest first (never their secrets)",
)
def list_webhooks(
    invocation: Admin, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[webhooks.Webhook]:
    return ItemList[webhooks.Webhook].of(webhooks.list_webhooks(limit, cursor))


@routes.post(
    "",
    operation_id="createWebhook",
    response_model=webhooks.CreatedWebhook,
    status_code=201,
    summary="Register a receiver for event kinds; answers its signing secret, once",
    description=PAYLOAD_DOC,
    responses={
        422: {
            "description": "Invalid request (`request.invalid`: e.g. an unknown event kind; "
            "`webhook.url_refused`: not HTTPS and not loopback)"
        }
    },
)
def create_webhook(body: webhooks.NewWebhook, invocation: Admin) -> webhooks.CreatedWebhook:
    return webhooks.create(invocation, body)


@routes.delete(
    "/{webhookId}",
    operation_id="deleteWebhook",
    status_code=204,
    summary="Remove a receiver; it gets nothing more",
    responses=_NOT_FOUND,
)
def delete_webhook(webhookId: str, invocation: Admin) -> Response:
    webhooks.delete(invocation, webhookId)
    return Response(status_code=204)


@routes.get(
    "/{webhookId}/deliveries",
    operation_id="listWebhookDeliveries",
    response_model=ItemList[webhooks.Delivery],
    summary="A receiver's delivery log: every attempt, newest first",
    responses=_NOT_FOUND,
)
def list_webhook_deliveries(
    webhookId: str, invocation: Admin, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[webhooks.Delivery]:
    return ItemList[webhooks.Delivery].of(webhooks.list_deliveries(webhookId, limit, cursor))
