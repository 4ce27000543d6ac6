"""Users and their roles: create, read, list, grant and revoke roles, passwords, (de)activation."""

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Invocation, Role
from etikett.domain.audit import audit
from etikett.domain.users import passwords, policies, tokens
from etikett.ids import new_id
from etikett.store import users
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page
from etikett.store.unit_of_work import ConditionFailed, UnitOfWork
from etikett.store.users import UserRecord
from etikett_engine.errors import Conflict, NotFound, ProblemCode
from etikett_engine.model import Model

USERNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$"


class User(Model):
    id: str
    username: str
    display_name: str
    roles: list[Role]
    active: bool
    created_at: str
    updated_at: str


class NewUser(Model):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(
        pattern=USERNAME_PATTERN, description="Letters, digits, . _ @ -; unique regardless of case."
    )
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    roles: list[Role] = Field(default_factory=list)
    display_name: str | None = Field(default=None, max_length=200)


def view(record: UserRecord) -> User:
    return User(
        id=record.id,
        username=record.username,
        display_name=record.display_name,
        roles=sorted(record.roles),
        active=record.active,
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def new_record(request: NewUser) -> UserRecord:
    passwords.check_rules(request.password, username=request.username)
    now = clock.now()
    return UserRecord(
        id=new_id("usr"),
        username=request.username,
        display_name=request.display_name or request.username,
        roles=tuple(sorted(set(request.roles))),
        active=True,
        password_hash=passwords.hash_password(request.password),
        created_at=now,
        updated_at=now,
    )


def adding(invocation: Invocation, record: UserRecord) -> UnitOfWork:
    """The unit of work that adds a new user with its audit entry (the caller may add more)."""
    entry = audit.record(
        invocation, record.id, details={"username": record.username, "roles": list(record.roles)}
    )
    taken = Conflict(
        f"The username {record.username!r} is taken.",
        ProblemCode.USER_USERNAME_TAKEN,
        username=record.username,
    )
    uow = UnitOfWork(entry, errors={ConditionName.USERNAME_FREE: taken})
    users.add(uow, record)
    return uow


def create(invocation: Invocation, request: NewUser) -> User:
    policies.require_person(invocation, "create users")
    record = new_record(request)
    adding(invocation, record).commit()
    return view(record)


def load(user_id: str) -> UserRecord:
    record = users.get(user_id)
    if record is None:
        raise NotFound(f"No user {user_id}.", ProblemCode.USER_NOT_FOUND, user_id=user_id)
    return record


def get(user_id: str) -> User:
    return view(load(user_id))


def list_users(limit: int, cursor: str | None) -> Page[User]:
    found = users.page(limit, cursor)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def any_user_exists() -> bool:
    return users.any_exists()


Change = Callable[[UserRecord], UserRecord]


def _changed(
    invocation: Invocation,
    user_id: str,
    change: Change,
    details: Callable[[UserRecord], dict[str, Any] | None] = lambda _: None,
) -> User:
    """Read the user, apply `change` and save it with its audit entry; when another change to
    the same user raced it, read again and retry (a few times)."""
    for _ in range(3):
        before = load(user_id)
        after = change(before)
        if after == before:
            return view(before)
        after = after._replace(updated_at=clock.now())
        try:
            with UnitOfWork(audit.record(invocation, user_id, details=details(before))) as uow:
                users.update(uow, before, after)
                _keep_an_admin(uow, before, after)
        except ConditionFailed:
            continue
        return view(after)
    raise Conflict(
        "The user was changed concurrently; try again.",
        ProblemCode.RESOURCE_CONFLICT,
        user_id=user_id,
    )


def _is_active_admin(record: UserRecord) -> bool:
    return record.active and "admin" in record.roles


def _keep_an_admin(uow: UnitOfWork, before: UserRecord, after: UserRecord) -> None:
    """A change that ends `before` being an active admin needs another one, and that one must
    still be an active admin when the change commits (two admins demoting each other at once
    would otherwise both succeed); if not, the change is read and decided again."""
    if not _is_active_admin(before) or _is_active_admin(after):
        return
    other = users.another_active_admin(before.id)
    if other is None:
        raise Conflict(
            "This is the last active admin.", ProblemCode.USER_LAST_ADMIN, user_id=before.id
        )
    users.check_active_admin(uow, other)


def grant_role(invocation: Invocation, user_id: str, role: Role) -> User:
    policies.require_person(invocation, "grant roles")

    def change(record: UserRecord) -> UserRecord:
        return record._replace(roles=tuple(sorted({*record.roles, role})))

    return _changed(invocation, user_id, change, lambda _: {"role": role})


def revoke_role(invocation: Invocation, user_id: str, role: str) -> User:
    def change(record: UserRecord) -> UserRecord:
        if role not in record.roles:
            raise NotFound(
                f"The user does not hold the role {role!r}.",
                ProblemCode.USER_ROLE_NOT_HELD,
                user_id=user_id,
                role=role,
            )
        if role == "admin" and record.active and not users.other_active_admin_exists(user_id):
            raise Conflict(
                "This is the last active admin.", ProblemCode.USER_LAST_ADMIN, user_id=user_id
            )
        return record._replace(roles=tuple(sorted(set(record.roles) - {role})))

    return _changed(invocation, user_id, change, lambda _: {"role": role})


def set_password(
    invocation: Invocation, user_id: str, password: str, *, keep_session: str | None = None
) -> User:
    """A new password ends the user's sessions (but `keep_session`, the one changing it)."""
    policies.require_person(invocation, "set passwords")

    def change(record: UserRecord) -> UserRecord:
        passwords.check_rules(password, username=record.username)
        return record._replace(password_hash=passwords.hash_password(password))

    user = _changed(invocation, user_id, change)
    tokens.end_sessions_of(user_id, keep=keep_session)
    return user


def deactivate(invocation: Invocation, user_id: str) -> User:
    def change(record: UserRecord) -> UserRecord:
        if not record.active:
            return record
        if "admin" in record.roles and not users.other_active_admin_exists(user_id):
            raise Conflict(
                "This is the last active admin.", ProblemCode.USER_LAST_ADMIN, user_id=user_id
            )
        return record._replace(active=False)

    user = _changed(invocation, user_id, change)
    # Authentication also checks `active`, so sessions are dead even before this sweep ends.
    tokens.end_sessions_of(user_id)
    return user


def reactivate(invocation: Invocation, user_id: str) -> User:
    # A reactivated account signs in again with its password and roles: the same as creating it.
    policies.require_person(invocation, "reactivate users")
    return _changed(invocation, user_id, lambda record: record._replace(active=True))
