"""The events table: an outbox of domain events (`label.approved`, print outcomes), written in the
same transaction as the change that caused them, for the webhook sender to deliver."""

from __future__ import annotations

from pynamodb.attributes import MapAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

STREAM = "events"


class EventsByTime(GlobalSecondaryIndex["EventRecord"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class EventRecord(Model):
    Meta = table_meta("events_table")

    id = UnicodeAttribute(hash_key=True)  # evt_<ULID>
    stream = UnicodeAttribute(default=STREAM)
    kind = UnicodeAttribute()  # e.g. "label.approved"
    at = UTCDateTimeAttribute()
    subject_id = UnicodeAttribute()  # the label, job, … the event is about
    data = MapAttribute()

    by_time = EventsByTime()
