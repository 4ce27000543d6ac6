"""The policies table: named service-wide settings such as `aiFreigabePflicht`."""

from __future__ import annotations

from pynamodb.attributes import BooleanAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.models import Model

from etikett.store.base import table_meta


class PolicyRecord(Model):
    Meta = table_meta("policies_table")

    name = UnicodeAttribute(hash_key=True)
    enabled = BooleanAttribute()
    updated_at = UTCDateTimeAttribute()
    updated_by = UnicodeAttribute()
