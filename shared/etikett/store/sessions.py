"""A session and its user in one round trip (one consistent read of both items): a session token
names its user, so every request signed in by a person needs one read, not two. A service token
(no user) is read the same way when the request's own items ride along."""

from __future__ import annotations

from etikett.store.base import ReadAlong, found, reads
from etikett.store.tokens import TokenRecord, _TokenItem
from etikett.store.tokens import _record as token_of
from etikett.store.users import UserRecord, _UserItem
from etikett.store.users import _record as user_of


def with_user(
    token_hash: str, user_id: str | None, *, along: ReadAlong | None = None
) -> tuple[TokenRecord | None, UserRecord | None]:
    """The token stored under `token_hash` and the user `user_id` (each None if absent or not
    asked for), and the items `along` asks for, in the same round trip."""
    with reads() as batch:
        token = batch.get(_TokenItem, token_hash)
        user = batch.get(_UserItem, user_id) if user_id is not None else None
        if along is not None:
            along.ask(batch)
    token_item = found(token)
    user_item = found(user) if user is not None else None
    return (
        token_of(token_item) if token_item is not None else None,
        user_of(user_item) if user_item is not None else None,
    )
