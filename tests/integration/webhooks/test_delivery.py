"""Events through the running service to real receivers on loopback: an approval becomes a signed
`label.approved` delivery; failures are retried with the same webhook-id; 410 disables."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from standardwebhooks import Webhook

from support.client import Api

from .receiver import Received, Receiver

Register = Callable[..., dict[str, Any]]


def _for(label_id: str) -> Callable[[Received], bool]:
    """Requests about this label only (other tests' approvals may still be on their way)."""
    return lambda r: json.loads(r.body)["data"].get("label_id") == label_id


def _deliveries(admin: Api, webhook_id: str, entries: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while True:
        items = admin.get(f"/webhooks/{webhook_id}/deliveries").json()["items"]
        if len(items) >= entries or time.monotonic() > deadline:
            return items
        time.sleep(0.1)


def test_an_approval_is_delivered_signed_to_its_subscribers_only(
    admin: Api, register: Register, approve: Callable[[], str]
) -> None:
    with Receiver() as receiver, Receiver() as other:
        hook = register(receiver.url, ["label.approved"])
        register(other.url, ["print.failed", "print.sent", "print.held", "print.confirmed"])
        label_id = approve()
        mine = _for(label_id)
        receiver.wait_for(lambda rs: any(mine(r) for r in rs))
        (request,) = [r for r in receiver.requests if mine(r)]

        event = Webhook(hook["secret"]).verify(request.body, request.headers)
        assert event == {
            "id": request.headers["webhook-id"],
            "type": "label.approved",
            "created_at": event["created_at"],
            "data": {
                "label_id": label_id,
                "version": 1,
                "name": event["data"]["name"],
                "approved_by": {"actor": "human", "subject": "root-admin"},
                "author": {"actor": "human", "subject": "root-admin"},
                "previous_version": None,
            },
        }
        assert event["id"].startswith("evt_") and event["data"]["name"].startswith("hooked-")
        assert request.path == "/hooks"
        assert request.headers["content-type"] == "application/json"
        assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 60

        (entry, *_) = _deliveries(admin, hook["id"], 1)
        assert {k: entry[k] for k in ("event_id", "kind", "attempt", "status_code", "outcome")} == {
            "event_id": event["id"],
            "kind": "label.approved",
            "attempt": 1,
            "status_code": 200,
            "outcome": "delivered",
        }
        assert entry["duration_ms"] >= 0 and entry["at"].endswith("Z")
        time.sleep(1)
        assert [r for r in other.requests if mine(r)] == []


def test_failures_are_retried_with_the_same_webhook_id(
    admin: Api, register: Register, approve: Callable[[], str]
) -> None:
    with Receiver([500, 500]) as receiver:
        hook = register(receiver.url, ["label.approved"])
        label_id = approve()
        mine = _for(label_id)
        receiver.wait_for(lambda rs: len([r for r in rs if mine(r)]) == 3, timeout=60)
        requests = [r for r in receiver.requests if mine(r)]
        assert [r.status for r in requests] == [500, 500, 200]
        assert len({r.headers["webhook-id"] for r in requests}) == 1
        for request in requests:
            Webhook(hook["secret"]).verify(request.body, request.headers)
        stamps = [int(r.headers["webhook-timestamp"]) for r in requests]
        assert stamps[1] - stamps[0] >= 1 and stamps[2] - stamps[1] >= 3  # 2 s, then 4 s

        log = _deliveries(admin, hook["id"], 3)
        assert [(d["attempt"], d["outcome"], d["status_code"]) for d in log] == [
            (3, "delivered", 200),
            (2, "retrying", 500),
            (1, "retrying", 500),
        ]
        assert log[1]["error"] == "HTTP 500" and log[1]["next_attempt_at"] > log[1]["at"]
        first = admin.get(f"/webhooks/{hook['id']}/deliveries", params={"limit": 2}).json()
        rest = admin.get(
            f"/webhooks/{hook['id']}/deliveries",
            params={"limit": 2, "cursor": first["next_cursor"]},
        ).json()
        assert [d["attempt"] for d in first["items"] + rest["items"]] == [3, 2, 1]
        time.sleep(1)
        assert len([r for r in receiver.requests if mine(r)]) == 3


def test_410_gone_disables_the_receiver_and_removed_ones_get_nothing(
    admin: Api, register: Register, approve: Callable[[], str]
) -> None:
    with Receiver([410]) as receiver, Receiver() as removed:
        hook = register(receiver.url, ["label.approved"])
        gone = register(removed.url, ["label.approved"])
        assert admin.delete(f"/webhooks/{gone['id']}").status_code == 204
        label_id = approve()
        receiver.wait_for(lambda rs: any(_for(label_id)(r) for r in rs))
        deadline = time.monotonic() + 60
        listed: dict[str, Any] = {}
        while time.monotonic() < deadline:
            items = admin.get("/webhooks", params={"limit": 200}).json()["items"]
            listed = next(w for w in items if w["id"] == hook["id"])
            if not listed["active"]:
                break
            time.sleep(0.1)
        assert listed["active"] is False
        assert "410" in listed["disabled_reason"] and listed["disabled_at"]
        log = _deliveries(admin, hook["id"], 1)
        assert [(d["attempt"], d["outcome"], d["status_code"]) for d in log] == [(1, "failed", 410)]

        later = approve()
        time.sleep(2)
        assert [r for r in receiver.requests if _for(later)(r)] == []
        assert len(receiver.requests) == 1
        assert removed.requests == []
