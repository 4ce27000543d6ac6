"""Cursor pagination over DynamoDB queries: a page reads O(page size), never the whole table."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from typing import Any, Generic, NamedTuple, TypeVar

from etikett_engine.errors import InvalidCursor

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


class Page(NamedTuple, Generic[T]):
    items: list[T]
    next_cursor: str | None


def encode_cursor(last_key: dict[str, dict[str, str]] | None) -> str | None:
    if not last_key:
        return None
    raw = json.dumps(last_key, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, key_names: Iterable[str]) -> dict[str, dict[str, str]] | None:
    """Accept only a cursor shaped like one we issued for this very index."""
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError) as error:
        raise InvalidCursor("The cursor is not valid.", cursor=cursor) from error
    allowed = set(key_names)
    if (
        not isinstance(key, dict)
        or not key
        or not set(key) <= allowed
        or not all(
            isinstance(value, dict)
            and len(value) == 1
            and next(iter(value)) in ("S", "N")
            and isinstance(next(iter(value.values())), str)
            for value in key.values()
        )
    ):
        raise InvalidCursor("The cursor does not belong to this list.", cursor=cursor)
    return key


def read_page(
    query: Callable[..., Any],
    key_names: Iterable[str],
    limit: int,
    cursor: str | None,
    convert: Callable[[Any], T],
) -> Page[T]:
    """Run `query(limit=…, page_size=…, last_evaluated_key=…)` for one page; convert its items."""
    results = query(
        limit=limit, page_size=limit, last_evaluated_key=decode_cursor(cursor, key_names)
    )
    items = [convert(record) for record in results]
    next_key = results.last_evaluated_key if len(items) == limit else None
    return Page(items=items, next_cursor=encode_cursor(next_key))
