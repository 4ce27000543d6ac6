"""Policies: named service-wide switches such as `aiFreigabePflicht` (absent: the default)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, NamedTuple

from pynamodb.attributes import BooleanAttribute, UnicodeAttribute, UTCDateTimeAttribute

from etikett.store.base import Item, get_item, item_of, record_of, table_meta

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork


class PolicyRecord(NamedTuple):
    name: str
    enabled: bool
    updated_at: dt.datetime
    updated_by: str


class _PolicyItem(Item):
    Meta = table_meta("policies_table")

    name = UnicodeAttribute(hash_key=True)
    enabled = BooleanAttribute()
    updated_at = UTCDateTimeAttribute()
    updated_by = UnicodeAttribute()


def get(name: str) -> PolicyRecord | None:
    item = get_item(_PolicyItem, name)
    return record_of(PolicyRecord, item) if item is not None else None


def put(uow: UnitOfWork, policy: PolicyRecord) -> None:
    uow.put(item_of(_PolicyItem, policy))
