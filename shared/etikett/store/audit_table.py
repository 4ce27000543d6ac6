"""The audit table: its items and the entries they hold. Written by a unit of work with the
change it records, and read through `store.audit`."""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from pynamodb.attributes import MapAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store import wire_items
from etikett.store.base import Item, item_of, table_meta, values_of

STREAM = "audit"


class AuditRecord(NamedTuple):
    id: str  # aud_<ULID>: sorts by time
    at: dt.datetime
    actor: str  # "human" | "service" | "anonymous" | "system" (a step the service took itself)
    subject: str
    operation_id: str
    target_id: str | None
    outcome: str  # "success" | "refused"
    code: str | None = None  # the problem code of a refusal
    request_id: str | None = None
    details: dict[str, Any] | None = None  # before/after versions and similar; never a secret


class ByTime(GlobalSecondaryIndex["AuditItem"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class BySubject(GlobalSecondaryIndex["AuditItem"]):
    class Meta:
        index_name = "by_subject"
        projection = AllProjection()

    subject = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class ByOperation(GlobalSecondaryIndex["AuditItem"]):
    class Meta:
        index_name = "by_operation"
        projection = AllProjection()

    operation_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class ByTarget(GlobalSecondaryIndex["AuditItem"]):
    class Meta:
        index_name = "by_target"
        projection = AllProjection()

    target_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class AuditItem(Item):
    Meta = table_meta("audit_table")

    id = UnicodeAttribute(hash_key=True)
    stream = UnicodeAttribute(default=STREAM)
    at = UTCDateTimeAttribute()
    actor = UnicodeAttribute()
    subject = UnicodeAttribute()
    operation_id = UnicodeAttribute()
    target_id = UnicodeAttribute(null=True)
    outcome = UnicodeAttribute()
    code = UnicodeAttribute(null=True)
    request_id = UnicodeAttribute(null=True)
    details: MapAttribute[str, Any] = MapAttribute(null=True)

    by_time = ByTime()
    by_subject = BySubject()
    by_operation = ByOperation()
    by_target = ByTarget()


def item(record: AuditRecord) -> AuditItem:
    return item_of(AuditItem, record, stream=STREAM)


def put(record: AuditRecord) -> dict[str, Any]:
    """The transaction's put of `record`'s item (as of `item(record)`, without the model)."""
    return wire_items.put(AuditItem, values_of(record, stream=STREAM))
