"""Receivers registered by a test are removed after it, so the session's dev server does not keep
retrying deliveries to receivers that are gone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from support.client import Api, unique


@pytest.fixture
def register(admin: Api) -> Iterator[Callable[..., dict[str, Any]]]:
    created: list[str] = []

    def register(url: str, events: list[str], api: Api = admin) -> dict[str, Any]:
        response = api.post("/webhooks", json={"url": url, "events": events})
        assert response.status_code == 201, response.text
        created.append(response.json()["id"])
        return response.json()

    yield register
    for webhook_id in created:
        assert admin.delete(f"/webhooks/{webhook_id}").status_code in (204, 404)


@pytest.fixture
def approve(admin: Api) -> Callable[[], str]:
    """Create a label and approve its version 1: a `label.approved` event. Answers the label id."""

    def approve() -> str:
        created = admin.post(
            "/labels/from-dimensions",
            json={"name": unique("hooked"), "width_mm": 50, "height_mm": 30},
        )
        assert created.status_code == 201, created.text
        label_id = created.json()["id"]
        approved = admin.post(
            f"/labels/{label_id}/status", json={"version": 1, "status": "approved"}
        )
        assert approved.status_code == 200, approved.text
        return label_id

    return approve
