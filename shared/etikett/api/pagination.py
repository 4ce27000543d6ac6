"""List answers (`{"items": [...], "next_cursor": ...}`) and the `limit`/`cursor` parameters."""

from __future__ import annotations

from typing import Annotated, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel

from etikett.store.pages import DEFAULT_LIMIT, MAX_LIMIT, Page

T = TypeVar("T")

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Page size, 1..200.")]
Cursor = Annotated[str | None, Query(description="`next_cursor` of the previous page.")]
DEFAULT = DEFAULT_LIMIT


class ItemList(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None

    @classmethod
    def model_parametrized_name(cls, params: tuple[type, ...]) -> str:
        return f"{params[0].__name__}List"

    @classmethod
    def of(cls, page: Page[T]) -> ItemList[T]:
        return cls(items=page.items, next_cursor=page.next_cursor)
