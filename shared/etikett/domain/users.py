"""Users and their roles: create, read, list, grant and revoke roles, passwords, (de)activation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from pynamodb.exceptions import TransactWriteError

from etikett import clock
from etikett.domain import audit, passwords, tokens
from etikett.domain.actors import Invocation, Role
from etikett.errors import Conflict, NotFound, ProblemCode
from etikett.ids import new_id
from etikett.store.base import cancellation_codes, transaction
from etikett.store.pages import Page, read_page
from etikett.store.users import UsernameClaim, UserRecord, username_key

USERNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$"


class User(BaseModel):
    id: str
    username: str
    display_name: str
    roles: list[Role]
    active: bool
    created_at: str
    updated_at: str


class NewUser(BaseModel):
    model_config = {"extra": "forbid"}

    username: str = Field(
        pattern=USERNAME_PATTERN, description="Letters, digits, . _ @ -; unique regardless of case."
    )
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    roles: list[Role] = Field(default_factory=list)
    display_name: str | None = Field(default=None, max_length=200)


def view(record: UserRecord) -> User:
    return User(
        id=record.pk,
        username=record.username,
        display_name=record.display_name,
        roles=sorted(record.roles),  # type: ignore[arg-type]
        active=record.active,
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def new_record(request: NewUser) -> UserRecord:
    passwords.check_rules(request.password, username=request.username)
    now = clock.now()
    return UserRecord(
        pk=new_id("usr"),
        kind="user",
        username=request.username,
        username_key=username_key(request.username),
        display_name=request.display_name or request.username,
        roles=sorted(set(request.roles)),
        active=True,
        password_hash=passwords.hash_password(request.password),
        created_at=now,
        updated_at=now,
    )


def save_new(invocation: Invocation, record: UserRecord, *extra: Any) -> None:
    """Write a new user, its username claim, its audit entry and `extra` records, all or nothing."""
    try:
        with transaction() as tx:
            tx.save(record, condition=UserRecord.pk.does_not_exist())
            tx.save(
                UsernameClaim(pk=UsernameClaim.key_for(record.username), user_id=record.pk),
                condition=UsernameClaim.pk.does_not_exist(),
            )
            tx.save(
                audit.entry(
                    invocation,
                    record.pk,
                    details={"username": record.username, "roles": list(record.roles)},
                )
            )
            for item in extra:
                tx.save(item, condition=type(item)._hash_key_attribute().does_not_exist())
    except TransactWriteError as error:
        codes = cancellation_codes(error)
        if len(codes) > 1 and codes[1] == "ConditionalCheckFailed":
            raise Conflict(
                f"The username {record.username!r} is taken.",
                ProblemCode.USER_USERNAME_TAKEN,
                username=record.username,
            ) from None
        if any(code == "ConditionalCheckFailed" for code in codes[3:]):
            raise Conflict(
                "The change raced with another one; nothing was written.",
                ProblemCode.RESOURCE_CONFLICT,
            ) from None
        raise


def create(invocation: Invocation, request: NewUser) -> User:
    record = new_record(request)
    save_new(invocation, record)
    return view(record)


def load(user_id: str) -> UserRecord:
    try:
        return UserRecord.get(user_id)
    except UserRecord.DoesNotExist:
        raise NotFound(f"No user {user_id}.", ProblemCode.USER_NOT_FOUND, user_id=user_id) from None


def get(user_id: str) -> User:
    return view(load(user_id))


def list_users(limit: int, cursor: str | None) -> Page[User]:
    def query(**page: object) -> object:
        return UserRecord.by_username.query("user", **page)

    return read_page(query, {"pk", "kind", "username_key"}, limit, cursor, view)


def any_user_exists() -> bool:
    return next(iter(UserRecord.by_username.query("user", limit=1)), None) is not None


def _other_active_admin_exists(user_id: str) -> bool:
    condition = UserRecord.roles.contains("admin") & (UserRecord.active == True)  # noqa: E712
    for record in UserRecord.by_username.query("user", filter_condition=condition):
        if record.pk != user_id:
            return True
    return False


def _update(
    invocation: Invocation,
    record: UserRecord,
    actions: list[Any],
    details: dict[str, Any] | None = None,
) -> UserRecord:
    """Change a user and audit it together; the user's `updated_at` guards against lost updates."""
    now = clock.now()
    with transaction() as tx:
        tx.update(
            record,
            actions=[*actions, UserRecord.updated_at.set(now)],
            condition=UserRecord.updated_at == record.updated_at,
        )
        tx.save(audit.entry(invocation, record.pk, details=details))
    return load(record.pk)


def _guarded_update(invocation: Invocation, user_id: str, change: Any) -> User:
    """Retry a read-modify-write a few times when another change to the same user raced it."""
    for _ in range(3):
        record = load(user_id)
        try:
            return view(change(record))
        except TransactWriteError as error:
            if "ConditionalCheckFailed" not in cancellation_codes(error):
                raise
    raise Conflict(
        "The user was changed concurrently; try again.",
        ProblemCode.RESOURCE_CONFLICT,
        user_id=user_id,
    )


def grant_role(invocation: Invocation, user_id: str, role: Role) -> User:
    def change(record: UserRecord) -> UserRecord:
        if role in record.roles:
            return record
        roles = sorted({*record.roles, role})
        return _update(invocation, record, [UserRecord.roles.set(roles)], {"role": role})

    return _guarded_update(invocation, user_id, change)


def revoke_role(invocation: Invocation, user_id: str, role: str) -> User:
    def change(record: UserRecord) -> UserRecord:
        if role not in record.roles:
            raise NotFound(
                f"The user does not hold the role {role!r}.",
                ProblemCode.USER_ROLE_NOT_HELD,
                user_id=user_id,
                role=role,
            )
        if role == "admin" and record.active and not _other_active_admin_exists(user_id):
            raise Conflict(
                "This is the last active admin.", ProblemCode.USER_LAST_ADMIN, user_id=user_id
            )
        roles = sorted(set(record.roles) - {role})
        return _update(invocation, record, [UserRecord.roles.set(roles)], {"role": role})

    return _guarded_update(invocation, user_id, change)


def set_password(
    invocation: Invocation, user_id: str, password: str, *, keep_session: str | None = None
) -> User:
    """A new password ends the user's sessions (but `keep_session`, the one changing it)."""

    def change(record: UserRecord) -> UserRecord:
        passwords.check_rules(password, username=record.username)
        return _update(
            invocation, record, [UserRecord.password_hash.set(passwords.hash_password(password))]
        )

    user = _guarded_update(invocation, user_id, change)
    tokens.end_sessions_of(user_id, keep=keep_session)
    return user


def deactivate(invocation: Invocation, user_id: str) -> User:
    def change(record: UserRecord) -> UserRecord:
        if not record.active:
            return record
        if "admin" in record.roles and not _other_active_admin_exists(user_id):
            raise Conflict(
                "This is the last active admin.", ProblemCode.USER_LAST_ADMIN, user_id=user_id
            )
        return _update(invocation, record, [UserRecord.active.set(False)])

    user = _guarded_update(invocation, user_id, change)
    # Authentication also checks `active`, so sessions are dead even before this sweep ends.
    tokens.end_sessions_of(user_id)
    return user


def reactivate(invocation: Invocation, user_id: str) -> User:
    def change(record: UserRecord) -> UserRecord:
        if record.active:
            return record
        return _update(invocation, record, [UserRecord.active.set(True)])

    return _guarded_update(invocation, user_id, change)
