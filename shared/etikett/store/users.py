"""Users: their records, username claims (uniqueness regardless of case), the first-setup marker
and the failed-login memory of the login throttle."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import PutError, UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import (
    Item,
    changes,
    condition_failed,
    get_item,
    item_of,
    record_of,
    table_meta,
)
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

_META = table_meta("users_table")
KIND = "user"
SETUP_KEY = "setup#done"


class UserRecord(NamedTuple):
    id: str  # usr_…
    username: str
    display_name: str
    roles: tuple[str, ...]
    active: bool
    password_hash: str
    created_at: dt.datetime
    updated_at: dt.datetime


class LoginAttempts(NamedTuple):
    """Failed logins for one username from one client address (a /64 for IPv6)."""

    failures: int
    next_attempt_at: dt.datetime | None  # no attempt is checked before this
    expires: dt.datetime  # forgotten after this (DynamoDB's TTL deletes it later)


def username_key(username: str) -> str:
    """Usernames are unique regardless of case."""
    return username.casefold()


class _ByUsername(GlobalSecondaryIndex["_UserItem"]):
    class Meta:
        index_name = "by_username"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    username_key = UnicodeAttribute(range_key=True)


class _UserItem(Item):
    Meta = _META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    kind = UnicodeAttribute(default=KIND)
    username = UnicodeAttribute()
    username_key = UnicodeAttribute()
    display_name = UnicodeAttribute()
    roles = ListAttribute(of=UnicodeAttribute, default=list)
    active = BooleanAttribute(default=True)
    password_hash = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()
    by_username = _ByUsername()


class _UsernameClaim(Item):
    """One item per username, written in its user's transaction: uniqueness by condition."""

    Meta = _META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "username#<casefolded name>"
    user_id = UnicodeAttribute()


class _SetupMarker(Item):
    """Written once with the first admin, so two concurrent setups cannot both succeed."""

    Meta = _META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")
    user_id = UnicodeAttribute()


class _LoginAttempts(Item):
    Meta = _META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "login#<casefolded name>#<address>"
    failures = NumberAttribute(default=0)
    next_attempt_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute()


def _claim_key(username: str) -> str:
    return f"username#{username_key(username)}"


def _login_key(username: str, address: str) -> str:
    return f"login#{username_key(username)}#{address}"


def _record(item: _UserItem) -> UserRecord:
    return record_of(UserRecord, item)


# --- reading --------------------------------------------------------------------------------------


def get(user_id: str) -> UserRecord | None:
    item = get_item(_UserItem, user_id)
    return _record(item) if item is not None else None


def by_username(username: str) -> UserRecord | None:
    claim = get_item(_UsernameClaim, _claim_key(username))
    return get(claim.user_id) if claim is not None else None


def page(limit: int, cursor: str | None) -> Page[UserRecord]:
    def query(**page: Any) -> Any:
        return _UserItem.by_username.query(KIND, **page)

    return read_page(query, {"pk", "kind", "username_key"}, limit, cursor, _record)


def any_exists() -> bool:
    return next(iter(_UserItem.by_username.query(KIND, limit=1)), None) is not None


def other_active_admin_exists(user_id: str) -> bool:
    return another_active_admin(user_id) is not None


def another_active_admin(user_id: str) -> str | None:
    """The id of an active admin other than `user_id`, if there is one."""
    condition = _UserItem.roles.contains("admin") & (_UserItem.active == True)  # noqa: E712
    found = _UserItem.by_username.query(KIND, filter_condition=condition)
    return next((item.id for item in found if item.id != user_id), None)


def check_active_admin(uow: UnitOfWork, user_id: str) -> None:
    """`admin.active` fails unless `user_id` is still an active admin when `uow` commits."""
    condition = _UserItem.roles.contains("admin") & (_UserItem.active == True)  # noqa: E712
    uow.check(_UserItem, user_id, None, condition, name=ConditionName.ADMIN_ACTIVE)


# --- writing --------------------------------------------------------------------------------------


def add(uow: UnitOfWork, user: UserRecord) -> None:
    """A new user with its username claim; `username.free` fails when the name is taken."""
    item = item_of(_UserItem, user, kind=KIND, username_key=username_key(user.username))
    uow.put(item, _UserItem.id.does_not_exist(), name=ConditionName.USER_ABSENT)
    claim = _UsernameClaim(key=_claim_key(user.username), user_id=user.id)
    uow.put(claim, _UsernameClaim.key.does_not_exist(), name=ConditionName.USERNAME_FREE)


def mark_setup_done(uow: UnitOfWork, user_id: str) -> None:
    """`setup.open` fails when another setup got there first."""
    marker = _SetupMarker(key=SETUP_KEY, user_id=user_id)
    uow.put(marker, _SetupMarker.key.does_not_exist(), name=ConditionName.SETUP_OPEN)


def update(uow: UnitOfWork, before: UserRecord, after: UserRecord) -> None:
    """`after` replaces `before`, unless the user changed meanwhile (`user.unchanged` fails:
    `updated_at` guards against lost updates)."""
    actions = changes(_UserItem, before, after)
    if actions:
        condition = _UserItem.updated_at == before.updated_at
        uow.update(_UserItem(before.id), actions, condition, name=ConditionName.USER_UNCHANGED)


# --- the login throttle's memory ---------------------------------------------------------------


def login_attempts(username: str, address: str) -> LoginAttempts | None:
    try:
        item = _LoginAttempts.get(_login_key(username, address), consistent_read=True)
    except _LoginAttempts.DoesNotExist:
        return None
    return LoginAttempts(
        failures=int(item.failures),
        next_attempt_at=item.next_attempt_at,
        expires=item.expires,
    )


def claim_login_attempt(
    username: str,
    address: str,
    *,
    expected: int | None,
    failures: int,
    next_attempt_at: dt.datetime | None,
    expires: dt.datetime,
) -> bool:
    """Store `failures` if the stored count is still `expected` (None: nothing is stored), in
    one conditional write: False when another attempt was counted since, and nothing was
    written (the caller reads again and retries)."""
    key = _login_key(username, address)
    try:
        if expected is None:
            _LoginAttempts(
                key=key, failures=failures, next_attempt_at=next_attempt_at, expires=expires
            ).save(condition=_LoginAttempts.key.does_not_exist())
        else:
            _LoginAttempts(key=key).update(
                actions=[
                    _LoginAttempts.failures.set(failures),
                    _LoginAttempts.next_attempt_at.remove()
                    if next_attempt_at is None
                    else _LoginAttempts.next_attempt_at.set(next_attempt_at),
                    _LoginAttempts.expires.set(expires),
                ],
                condition=_LoginAttempts.failures == expected,
            )
    except (PutError, UpdateError) as error:
        if condition_failed(error):
            return False
        raise
    return True


def clear_login_attempts(username: str, address: str) -> None:
    _LoginAttempts(key=_login_key(username, address)).delete()
