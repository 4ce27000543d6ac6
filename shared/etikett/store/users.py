"""The users table: user records, username claims (uniqueness) and failed-login counters."""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

_META = table_meta("users_table")


def username_key(username: str) -> str:
    """Usernames are unique regardless of case."""
    return username.casefold()


class UsersByUsername(GlobalSecondaryIndex["UserRecord"]):
    class Meta:
        index_name = "by_username"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    username_key = UnicodeAttribute(range_key=True)


class UserRecord(Model):
    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # the user id, usr_…
    kind = UnicodeAttribute(default="user")
    username = UnicodeAttribute()
    username_key = UnicodeAttribute()
    display_name = UnicodeAttribute()
    roles = ListAttribute(of=UnicodeAttribute, default=list)
    active = BooleanAttribute(default=True)
    password_hash = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()

    by_username = UsersByUsername()


class UsernameClaim(Model):
    """One item per username, written in its user's transaction: uniqueness by condition."""

    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # "username#<casefolded name>"
    user_id = UnicodeAttribute()

    @staticmethod
    def key_for(username: str) -> str:
        return f"username#{username_key(username)}"


class LoginFailures(Model):
    """Failed logins of one username within the current window (the throttle's memory)."""

    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # "login#<casefolded name>"
    failures = NumberAttribute(default=0)
    window_ends = UTCDateTimeAttribute()
    expires = TTLAttribute(null=True)

    @staticmethod
    def key_for(username: str) -> str:
        return f"login#{username_key(username)}"


class SetupMarker(Model):
    """Written once with the first admin, so two concurrent setups cannot both succeed."""

    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # always KEY
    user_id = UnicodeAttribute()

    KEY = "setup#done"
