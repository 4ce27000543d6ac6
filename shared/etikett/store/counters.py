"""The counters table: named serial sequences; values are taken with atomic updates."""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

COUNTERS_TABLE_ENV = "ETIKETT_COUNTERS_TABLE"


class CountersByName(GlobalSecondaryIndex["CounterRecord"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)


class CounterRecord(Model):
    Meta = table_meta(COUNTERS_TABLE_ENV, "CountersTable")
    name = UnicodeAttribute(hash_key=True)
    kind = UnicodeAttribute(default="counter")
    start = NumberAttribute()
    step = NumberAttribute()
    current = NumberAttribute()  # the last value handed out (start - step before the first)
    issued = NumberAttribute(default=0)  # values handed out since creation
    format = UnicodeAttribute(null=True)
    reset = UnicodeAttribute(default="never")  # never | daily | monthly | yearly (UTC)
    period = UnicodeAttribute(default="")  # the reset period `current` belongs to
    active = BooleanAttribute(default=True)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    by_name = CountersByName()
