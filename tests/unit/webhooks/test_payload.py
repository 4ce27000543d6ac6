"""The payload receivers get, built from an outbox item as the events table's stream shows it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from etikett.domain.webhooks import events
from etikett.store import events as store_events
from etikett.store.events import EventRecord


def _stream_image(record: EventRecord) -> dict:
    """A NEW_IMAGE: the item's attributes in DynamoDB's typed JSON, as GetRecords answers."""
    return store_events.stream_image(record)


def test_catalog_is_exactly_spec_part_6() -> None:
    assert set(events.EVENT_KINDS) == {
        "print.failed",
        "print.held",
        "print.sent",
        "print.confirmed",
        "label.approved",
    }


def test_payload_of_a_label_approved_item() -> None:
    record = EventRecord(
        id="evt_01JABC",
        kind="label.approved",
        at=datetime(2026, 11, 5, 9, 30, 0, 123456, tzinfo=UTC),
        subject_id="lbl_01J",
        data={
            "label_id": "lbl_01J",
            "version": 3,
            "name": "Versand 4×6",
            "approved_by": {"actor": "human", "subject": "ada"},
            "author": {"actor": "service", "subject": "label-bot"},
            "previous_version": None,
        },
    )
    image = _stream_image(record)
    assert image["kind"] == {"S": "label.approved"} and "M" in image["data"]
    assert events.payload_from_image(image) == {
        "id": "evt_01JABC",
        "type": "label.approved",
        "created_at": "2026-11-05T09:30:00.123Z",
        "data": {
            "label_id": "lbl_01J",
            "version": 3,
            "name": "Versand 4×6",
            "approved_by": {"actor": "human", "subject": "ada"},
            "author": {"actor": "service", "subject": "label-bot"},
            "previous_version": None,
        },
    }


def test_payload_of_a_print_outcome_keeps_numbers_and_lists() -> None:
    record = EventRecord(
        id="evt_01JDEF",
        kind="print.sent",
        at=datetime(2026, 11, 5, 9, 31, tzinfo=UTC),
        subject_id="job_01J",
        data={"job_id": "job_01J", "labels": 1000, "copies": 2, "ratio": 0.5, "serials": ["A1"]},
    )
    payload = events.payload_from_image(_stream_image(record))
    assert payload["type"] == "print.sent"
    assert payload["data"] == {
        "job_id": "job_01J",
        "labels": 1000,
        "copies": 2,
        "ratio": 0.5,
        "serials": ["A1"],
    }
    assert isinstance(payload["data"]["labels"], int)


def test_body_is_compact_utf8_json() -> None:
    body = events.encode({"id": "evt_1", "type": "label.approved", "data": {"name": "Größe"}})
    assert body == '{"id":"evt_1","type":"label.approved","data":{"name":"Größe"}}'.encode()
    assert json.loads(body)["data"]["name"] == "Größe"
