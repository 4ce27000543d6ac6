"""Signing in and out: first-time setup, login with its throttle, logout, own password, whoami."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, Field
from pynamodb.exceptions import PutError, UpdateError

from etikett import clock
from etikett.domain import audit, passwords, tokens, users
from etikett.domain.actors import Caller, Invocation
from etikett.errors import Conflict, Forbidden, ProblemCode, Throttled, Unauthenticated
from etikett.settings import get_settings
from etikett.store.base import transaction
from etikett.store.users import LoginFailures, SetupMarker, UsernameClaim, UserRecord


class Credentials(BaseModel):
    model_config = {"extra": "forbid"}

    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


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


def setup(invocation: Invocation, credentials: Credentials) -> SignedIn:
    """Create the first admin and sign them in; refused once any user exists."""
    if users.any_user_exists():
        raise Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE)
    record = users.new_record(
        users.NewUser(username=credentials.username, password=credentials.password, roles=["admin"])
    )
    session, token = tokens.new_session(record)
    try:
        users.save_new(
            invocation, record, SetupMarker(pk=SetupMarker.KEY, user_id=record.pk), session
        )
    except Conflict:
        raise Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE) from None
    return SignedIn(
        token=token,
        expires_at=clock.rfc3339(tokens.session_expiry(session)),
        user=users.view(record),
    )


def _throttle_check(username: str) -> None:
    try:
        failures = LoginFailures.get(LoginFailures.key_for(username))
    except LoginFailures.DoesNotExist:
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
    now = clock.now()
    key = LoginFailures.key_for(username)
    try:
        LoginFailures(pk=key).update(
            actions=[LoginFailures.failures.add(1)],
            condition=LoginFailures.window_ends > now,
        )
    except UpdateError:
        # No open window: start one. A lost race here only costs the attacker one extra try.
        ends = now + _window()
        with contextlib.suppress(PutError):
            LoginFailures(pk=key, failures=1, window_ends=ends, expires=ends).save()


def login(invocation: Invocation, credentials: Credentials) -> SignedIn:
    username = credentials.username
    _throttle_check(username)
    record: UserRecord | None = None
    try:
        claim = UsernameClaim.get(UsernameClaim.key_for(username))
        record = UserRecord.get(claim.user_id)
    except (UsernameClaim.DoesNotExist, UserRecord.DoesNotExist):
        passwords.burn_time(credentials.password)
    if record is None or not passwords.verify(record.password_hash, credentials.password):
        _count_failure(username)
        audit.record_refusal(
            invocation,
            ProblemCode.AUTH_INVALID_CREDENTIALS,
            subject=username,
            target_id=record.pk if record else None,
        )
        raise Unauthenticated(
            "Username or password is wrong.", ProblemCode.AUTH_INVALID_CREDENTIALS
        )
    if not record.active:
        audit.record_refusal(
            invocation, ProblemCode.AUTH_USER_INACTIVE, subject=username, target_id=record.pk
        )
        raise Forbidden(
            "The user is deactivated.", ProblemCode.AUTH_USER_INACTIVE, user_id=record.pk
        )
    LoginFailures(pk=LoginFailures.key_for(username)).delete()
    session, token = tokens.new_session(record)
    with transaction() as tx:
        tx.save(session, condition=type(session).token_hash.does_not_exist())
        tx.save(audit.entry(invocation, record.pk, subject=record.username))
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
    audit.entry(invocation, caller.user_id).save()


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
