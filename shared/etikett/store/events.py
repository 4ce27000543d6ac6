"""The events outbox: domain events (`label.approved`, print outcomes), written in the same
transaction as the change that caused them; the events table's stream publishes them."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import MapAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.ids import new_id
from etikett.store import wire_items
from etikett.store.base import Item, record_from, table_meta, values_of

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

STREAM = "events"


class EventRecord(NamedTuple):
    id: str  # evt_<ULID>
    kind: str  # e.g. "label.approved"
    at: dt.datetime
    subject_id: str  # the label, job, … the event is about
    data: dict[str, Any]


class _ByTime(GlobalSecondaryIndex["_EventItem"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _EventItem(Item):
    Meta = table_meta("events_table")

    id = UnicodeAttribute(hash_key=True)
    stream = UnicodeAttribute(default=STREAM)
    kind = UnicodeAttribute()
    at = UTCDateTimeAttribute()
    subject_id = UnicodeAttribute()
    data: MapAttribute[str, Any] = MapAttribute()

    by_time = _ByTime()


def new_event(kind: str, subject_id: str, data: dict[str, Any], *, at: dt.datetime) -> EventRecord:
    return EventRecord(id=new_id("evt"), kind=kind, at=at, subject_id=subject_id, data=data)


def add(uow: UnitOfWork, event: EventRecord) -> None:
    """Into the outbox, with the change that caused it."""
    uow.put_request(wire_items.put(_EventItem, values_of(event, stream=STREAM)))


def from_stream_image(image: dict[str, Any]) -> EventRecord:
    """An outbox item as the table's DynamoDB stream shows it (typed attributes)."""
    return record_from(EventRecord, wire_items.values(_EventItem, image))


def stream_image(event: EventRecord) -> dict[str, Any]:
    """The item's attributes in DynamoDB's typed JSON, as a stream record's NEW_IMAGE carries."""
    return wire_items.item(_EventItem, values_of(event, stream=STREAM))
