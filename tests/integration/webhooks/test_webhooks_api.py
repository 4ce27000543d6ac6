"""The Webhooks group: registering receivers (secret shown once), listing, removing, access."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from standardwebhooks import Webhook

from support.client import Api, problem

Register = Callable[..., dict[str, Any]]


def test_create_answers_the_secret_once_and_lists_never_show_it(
    admin: Api, register: Register
) -> None:
    created = register(
        "https://example.com/hooks/etikett?tenant=7",
        ["label.approved", "print.failed", "print.failed"],
    )
    assert created["id"].startswith("whk_")
    assert created["url"] == "https://example.com/hooks/etikett?tenant=7"
    assert created["events"] == ["print.failed", "label.approved"]
    assert created["active"] is True and created["disabled_reason"] is None
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", created["secret"])
    Webhook(created["secret"])  # a receiver's library takes it as it is

    listing = admin.get("/webhooks", params={"limit": 200})
    assert listing.status_code == 200
    assert created["secret"] not in listing.text and "secret" not in listing.text
    (listed,) = [w for w in listing.json()["items"] if w["id"] == created["id"]]
    assert listed == {k: v for k, v in created.items() if k != "secret"}

    audit = admin.get("/audit-log", params={"target": created["id"]}).json()["items"]
    assert [(e["operation_id"], e["outcome"]) for e in audit] == [("createWebhook", "success")]
    assert audit[0]["details"] == {
        "url": "https://example.com/hooks/etikett",
        "events": ["print.failed", "label.approved"],
    }
    assert created["secret"] not in str(audit)


def test_lists_are_paginated_newest_first(admin: Api, register: Register) -> None:
    ids = [register("https://example.com/p", ["print.sent"])["id"] for _ in range(3)]
    seen, cursor = [], None
    while True:
        page = admin.get(
            "/webhooks", params={"limit": 1, **({"cursor": cursor} if cursor else {})}
        ).json()
        assert len(page["items"]) <= 1
        seen += [w["id"] for w in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert [i for i in seen if i in ids] == ids[::-1]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hooks",
        "http://localhost:9/hooks",
        "http://[::1]:9/hooks",
        "https://hooks.example.org:8443/in",
    ],
)
def test_https_or_loopback_urls_are_accepted(register: Register, url: str) -> None:
    assert register(url, ["print.held"])["url"] == url


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hooks",
        "http://10.0.0.7:8080/hooks",
        "http://127.0.0.1.nip.io/hooks",
        "ftp://example.com/hooks",
        "https://user:pass@example.com/hooks",
        "not a url",
    ],
)
def test_other_urls_are_refused(admin: Api, url: str) -> None:
    body = problem(
        admin.post("/webhooks", json={"url": url, "events": ["print.held"]}),
        422,
        "webhook.url_refused",
    )
    assert [f["field"] for f in body["params"]["fields"]] == ["body.url"]


@pytest.mark.parametrize(
    "events",
    [["runner.offline"], ["label.approved", "label.created"], [], "label.approved", None],
)
def test_only_kinds_of_the_catalog(admin: Api, events: Any) -> None:
    body = problem(
        admin.post("/webhooks", json={"url": "https://example.com/x", "events": events}),
        422,
        "request.invalid",
    )
    assert {f["field"].split(".")[1] for f in body["params"]["fields"]} == {"events"}


def test_refusals_are_audited(admin: Api) -> None:
    problem(
        admin.post("/webhooks", json={"url": "http://example.com/", "events": ["print.sent"]}),
        422,
        "webhook.url_refused",
    )
    entries = admin.get("/audit-log", params={"operation": "createWebhook", "limit": 5}).json()
    assert entries["items"][0]["outcome"] == "refused"
    assert entries["items"][0]["code"] == "webhook.url_refused"


def test_delete_removes_the_receiver(admin: Api, register: Register) -> None:
    webhook_id = register("https://example.com/gone", ["print.confirmed"])["id"]
    assert admin.delete(f"/webhooks/{webhook_id}").status_code == 204
    ids = [w["id"] for w in admin.get("/webhooks", params={"limit": 200}).json()["items"]]
    assert webhook_id not in ids
    problem(admin.delete(f"/webhooks/{webhook_id}"), 404, "webhook.not_found")
    problem(admin.get(f"/webhooks/{webhook_id}/deliveries"), 404, "webhook.not_found")
    audit = admin.get("/audit-log", params={"target": webhook_id}).json()["items"]
    assert [(e["operation_id"], e["outcome"]) for e in audit][:2] == [
        ("deleteWebhook", "refused"),
        ("deleteWebhook", "success"),
    ]


def test_only_admins(admin: Api, anonymous: Api, register: Register) -> None:
    webhook_id = register("https://example.com/a", ["print.sent"])["id"]
    _, approver = admin.user_session(["approver", "designer", "operator"])
    for response in (
        approver.get("/webhooks"),
        approver.post("/webhooks", json={"url": "https://example.com/", "events": ["print.sent"]}),
        approver.delete(f"/webhooks/{webhook_id}"),
        approver.get(f"/webhooks/{webhook_id}/deliveries"),
    ):
        assert problem(response, 403, "auth.forbidden")["params"]["required"] == ["admin"]
    problem(anonymous.get("/webhooks"), 401, "auth.unauthenticated")


def test_the_openapi_document_describes_payload_signing_and_access(anonymous: Api) -> None:
    spec = anonymous.get("/openapi.json").json()
    operations = {
        op["operationId"]: op
        for path, item in spec["paths"].items()
        if path.startswith("/api/v1/webhooks")
        for op in item.values()
    }
    assert set(operations) == {
        "listWebhooks",
        "createWebhook",
        "deleteWebhook",
        "listWebhookDeliveries",
    }
    for operation in operations.values():
        assert operation["x-etikett-access"]["roles"] == ["admin"]
        assert operation["x-etikett-mcp"] is True
    description = operations["createWebhook"]["description"]
    for phrase in ('"type": "label.approved"', "webhook-id", "webhook-signature", "410 Gone"):
        assert phrase in description
    codes = spec["x-etikett-problem-codes"]
    assert {"webhook.not_found", "webhook.url_refused"} <= set(codes)
