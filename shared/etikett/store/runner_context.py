"""Context parameters of Runner groups and Runners, in the runners table beside their owner
(deployments keep theirs elsewhere): named JSON values the flows of a site read."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)

from etikett.store.base import Item, get_item, item_of, record_of
from etikett.store.pages import Page, read_page
from etikett.store.runners import META

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork


class ContextRecord(NamedTuple):
    """A context parameter of a group or a Runner (deployments keep theirs elsewhere)."""

    owner_id: str  # rgp_… or run_…
    name: str
    value: Any
    updated_at: dt.datetime
    updated_by: str
    revision: int


class _ContextItem(Item):
    Meta = META
    owner_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # context#<name>
    name = UnicodeAttribute()
    value = JSONAttribute(null=True)  # any JSON value, null too
    updated_at = UTCDateTimeAttribute()
    updated_by = UnicodeAttribute()
    revision = NumberAttribute(default=1)


def context_sk(name: str) -> str:
    return f"context#{name}"


def _context(item: _ContextItem) -> ContextRecord:
    return record_of(ContextRecord, item)


def page_context(owner_id: str, limit: int, cursor: str | None) -> Page[ContextRecord]:
    def query(**page: Any) -> Any:
        return _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#"), **page)

    return read_page(query, {"pk", "sk"}, limit, cursor, _context)


def context_of(owner_id: str) -> list[ContextRecord]:
    return [
        _context(item)
        for item in _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#"))
    ]


def get_context(owner_id: str, name: str) -> ContextRecord | None:
    item = get_item(_ContextItem, owner_id, context_sk(name))
    return _context(item) if item is not None else None


def put_context(uow: UnitOfWork, parameter: ContextRecord) -> None:
    uow.put(item_of(_ContextItem, parameter, sk=context_sk(parameter.name)))


def delete_context(uow: UnitOfWork, parameter: ContextRecord) -> None:
    uow.delete(_ContextItem(parameter.owner_id, context_sk(parameter.name)))


def delete_context_of(owner_id: str) -> None:
    for item in _ContextItem.query(owner_id, _ContextItem.sk.startswith("context#")):
        item.delete()
