"""Signing in and out: first-time setup, login with its throttle, logout, own password, whoami."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, Field

from etikett import clock
from etikett.domain import audit, passwords, tokens, users
from etikett.domain.actors import Caller, Invocation
from etikett.errors import Conflict, Forbidden, ProblemCode, Throttled, Unauthenticated
from etikett.settings import get_settings
from etikett.store import tokens as token_store
from etikett.store import users as user_store
from etikett.store.unit_of_work import UnitOfWork


class Credentials(BaseModel):
    model_config = {"extra": "forbid"}

    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


class FirstAdmin(Credentials):
    """The first admin is a user like any other: the same username rule as createUser (without
    it a username the user model refuses failed inside setup, as a 500)."""

    username: str = Field(
        pattern=users.USERNAME_PATTERN, description="Letters, digits, . _ @ -; up to 64."
    )


class SignedIn(tokens.Session):
    user: users.User


class SetupState(BaseModel):
    setup_required: bool


class WhoAmI(BaseModel):
    actor: Literal["human", "service"]
    subject: str
    roles: list[str]
    user_id: str | None = None
    token_id: str | None = None


class PasswordChange(BaseModel):
    model_config = {"extra": "forbid"}

    current_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    new_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


def _max_failures() -> int:
    return get_settings().login_max_failures


def _window() -> timedelta:
    return timedelta(seconds=get_settings().login_window_seconds)


def setup_state() -> SetupState:
    return SetupState(setup_required=not users.any_user_exists())


def setup(invocation: Invocation, credentials: FirstAdmin) -> SignedIn:
    """Create the first admin and sign them in; refused once any user exists."""
    if users.any_user_exists():
        raise Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE)
    record = users.new_record(
        users.NewUser(username=credentials.username, password=credentials.password, roles=["admin"])
    )
    session, token = tokens.new_session(record)
    done = Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE)
    uow = users.adding(invocation, record)
    user_store.mark_setup_done(uow, record.id)
    token_store.add(uow, session)
    for name in ("username.free", "setup.open", "token.absent"):
        uow.fail_as(name, done)
    uow.commit()
    return SignedIn(
        token=token,
        expires_at=clock.rfc3339(tokens.session_expiry(session)),
        user=users.view(record),
    )


def _throttle_check(username: str) -> None:
    failures = user_store.login_failures(username)
    if failures is None:
        return
    now = clock.now()
    if failures.failures >= _max_failures() and failures.window_ends > now:
        retry_after = max(1, int((failures.window_ends - now).total_seconds() + 0.999))
        raise Throttled(
            "Too many failed logins for this username; try again later.",
            retry_after=retry_after,
            code=ProblemCode.AUTH_LOGIN_THROTTLED,
        )


def _count_failure(username: str) -> None:
    user_store.count_login_failure(username, clock.now(), _window())


def login(invocation: Invocation, credentials: Credentials) -> SignedIn:
    username = credentials.username
    _throttle_check(username)
    record = user_store.by_username(username)
    if record is None:
        passwords.burn_time(credentials.password)
    if record is None or not passwords.verify(record.password_hash, credentials.password):
        _count_failure(username)
        audit.record_refusal(
            invocation,
            ProblemCode.AUTH_INVALID_CREDENTIALS,
            subject=username,
            target_id=record.id if record else None,
        )
        raise Unauthenticated(
            "Username or password is wrong.", ProblemCode.AUTH_INVALID_CREDENTIALS
        )
    if not record.active:
        audit.record_refusal(
            invocation, ProblemCode.AUTH_USER_INACTIVE, subject=username, target_id=record.id
        )
        raise Forbidden(
            "The user is deactivated.", ProblemCode.AUTH_USER_INACTIVE, user_id=record.id
        )
    user_store.clear_login_failures(username)
    session, token = tokens.new_session(record)
    with UnitOfWork(audit.record(invocation, record.id, subject=record.username)) as uow:
        token_store.add(uow, session)
    return SignedIn(
        token=token,
        expires_at=clock.rfc3339(tokens.session_expiry(session)),
        user=users.view(record),
    )


def logout(invocation: Invocation) -> None:
    caller = invocation.caller
    assert caller is not None
    if caller.session_hash is None:
        raise Conflict(
            "Logout ends a session; revoke a service-account token with deleteApiToken.",
            ProblemCode.AUTH_NOT_A_SESSION,
        )
    tokens.end_session(caller.session_hash)
    UnitOfWork(audit.record(invocation, caller.user_id)).commit()


def whoami(caller: Caller) -> WhoAmI:
    return WhoAmI(
        actor=caller.actor,
        subject=caller.subject,
        roles=sorted(caller.roles),
        user_id=caller.user_id,
        token_id=caller.token_id,
    )


def change_own_password(invocation: Invocation, change: PasswordChange) -> None:
    caller = invocation.caller
    assert caller is not None and caller.user_id is not None
    record = users.load(caller.user_id)
    if not passwords.verify(record.password_hash, change.current_password):
        raise Forbidden("The current password is wrong.", ProblemCode.AUTH_WRONG_PASSWORD)
    users.set_password(
        invocation, caller.user_id, change.new_password, keep_session=caller.session_hash
    )
