"""List answers (`{"items": [...], "next_cursor": ...}`) and the `limit`/`cursor` parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Generic, TypeVar

from fastapi import Query

from etikett.store.pages import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    Page,
    decode_cursor,
    encode_cursor,
)
from etikett_engine.errors import InvalidCursor
from etikett_engine.model import Model

T = TypeVar("T")

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Page size, 1..200.")]
Cursor = Annotated[str | None, Query(description="`next_cursor` of the previous page.")]
DEFAULT = DEFAULT_LIMIT
# A list filter names something (an id, a status): empty, it would be a key DynamoDB refuses.
Filter = Annotated[str | None, Query(min_length=1, max_length=200)]


class ItemList(Model, Generic[T]):
    items: list[T]
    next_cursor: str | None

    @classmethod
    def model_parametrized_name(cls, params: tuple[type, ...]) -> str:
        return f"{params[0].__name__}List"

    @classmethod
    def of(cls, page: Page[T]) -> ItemList[T]:
        return cls(items=page.items, next_cursor=page.next_cursor)


def static_page(items: Sequence[T], limit: int, cursor: str | None) -> Page[T]:
    """A page of a fixed, in-memory catalog, with the same cursor contract as the tables."""
    key = decode_cursor(cursor, {"offset"})
    try:
        start = int(key["offset"]["N"]) if key else 0
    except ValueError:
        raise InvalidCursor("The cursor does not belong to this list.", cursor=cursor) from None
    end = start + limit
    next_key = {"offset": {"N": str(end)}} if end < len(items) else None
    return Page(items=list(items[start:end]), next_cursor=encode_cursor(next_key))
