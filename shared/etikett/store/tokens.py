"""Tokens: service-account tokens and session tokens, keyed by the secret's SHA-256 (the secret
itself is never stored)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, get_item, item_of, record_of, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

SERVICE_OWNER = "service"


class TokenRecord(NamedTuple):
    token_hash: str  # hex SHA-256 of the secret
    id: str  # tok_… (service) or ses_… (session)
    kind: str  # "service" | "session"
    owner: str  # SERVICE_OWNER, or the user id of a session
    subject: str
    role: str | None  # service tokens carry one role; sessions take the user's
    user_id: str | None
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None = None


class _ById(GlobalSecondaryIndex["_TokenItem"]):
    class Meta:
        index_name = "by_id"
        projection = AllProjection()

    id = UnicodeAttribute(hash_key=True)


class _ByOwner(GlobalSecondaryIndex["_TokenItem"]):
    class Meta:
        index_name = "by_owner"
        projection = AllProjection()

    owner = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _TokenItem(Item):
    Meta = table_meta("tokens_table")

    token_hash = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute()
    kind = UnicodeAttribute()
    owner = UnicodeAttribute()
    subject = UnicodeAttribute()
    role = UnicodeAttribute(null=True)
    user_id = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    expires_at = UTCDateTimeAttribute(null=True)
    revoked_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute(null=True)  # lets DynamoDB drop dead sessions; reads check expiry too

    by_id = _ById()
    by_owner = _ByOwner()


def _record(item: _TokenItem) -> TokenRecord:
    return record_of(TokenRecord, item)


def get(token_hash: str) -> TokenRecord | None:
    item = get_item(_TokenItem, token_hash)
    return _record(item) if item is not None else None


def by_id(token_id: str) -> TokenRecord | None:
    item = next(iter(_TokenItem.by_id.query(token_id, limit=1)), None)
    return _record(item) if item is not None else None


def page_service_tokens(limit: int, cursor: str | None) -> Page[TokenRecord]:
    """Service-account tokens, newest first."""

    def query(**page: Any) -> Any:
        return _TokenItem.by_owner.query(SERVICE_OWNER, scan_index_forward=False, **page)

    return read_page(query, {"token_hash", "owner", "id"}, limit, cursor, _record)


def add(uow: UnitOfWork, token: TokenRecord) -> None:
    """A new token; sessions expire from the table (TTL) when they expire."""
    expires = token.expires_at if token.kind == "session" else None
    item = item_of(_TokenItem, token, expires=expires)
    uow.put(item, _TokenItem.token_hash.does_not_exist(), name=ConditionName.TOKEN_ABSENT)


def revoke(uow: UnitOfWork, token: TokenRecord, at: dt.datetime) -> None:
    uow.update(
        _TokenItem(token.token_hash),
        [_TokenItem.revoked_at.set(at)],
        _TokenItem.token_hash.exists(),
        name=ConditionName.TOKEN_EXISTS,
    )


def delete(token_hash: str) -> None:
    _TokenItem(token_hash).delete()


def delete_sessions_of(user_id: str, *, keep: str | None = None) -> int:
    """Every session of a user goes (but `keep`); answers how many."""
    ended = 0
    for item in _TokenItem.by_owner.query(user_id):
        if item.token_hash != keep:
            item.delete()
            ended += 1
    return ended
