"""Signing in and out: first-time setup, login with its throttle, logout, own password, whoami."""

import hmac
import ipaddress
import math
from datetime import timedelta
from typing import Literal

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Caller, Invocation
from etikett.domain.audit import audit
from etikett.domain.users import passwords, tokens, users
from etikett.settings import get_settings
from etikett.store import tokens as token_store
from etikett.store import users as user_store
from etikett.store.conditions import ConditionName
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, Forbidden, ProblemCode, Throttled, Unauthenticated
from etikett_engine.model import Model


class Credentials(Model):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


class SetupRequest(Credentials):
    """The first admin is a user like any other: the same username rule as createUser (without
    it a username the user model refuses failed inside setup, as a 500)."""

    username: str = Field(
        pattern=users.USERNAME_PATTERN, description="Letters, digits, . _ @ -; up to 64."
    )
    setup_secret: str | None = Field(
        default=None,
        max_length=1024,
        description="The stack's setup secret (template parameter SetupSecret); a deployed "
        "stack needs it, local mode none. `getAuthSetup` says which.",
    )


class SignedIn(tokens.Session):
    user: users.User


class SetupState(Model):
    setup_required: bool
    setup_secret_required: bool = Field(
        description="Whether setup asks for the stack's setup secret (`setup_secret`)."
    )


class WhoAmI(Model):
    actor: Literal["human", "service"]
    subject: str
    roles: list[str]
    user_id: str | None = None
    token_id: str | None = None


class PasswordChange(Model):
    model_config = ConfigDict(extra="forbid")

    current_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)
    new_password: str = Field(min_length=1, max_length=passwords.MAX_LENGTH)


CLAIM_TRIES = 25  # concurrent attempts on one counter: each round one of them is counted
FORGET_AFTER = timedelta(days=1)  # failures this long ago no longer count


def _free_failures() -> int:
    return get_settings().login_max_failures


def wait_after(failures: int) -> timedelta:
    """How long the next attempt waits after `failures` failed ones: nothing for the free ones,
    then `login_backoff_seconds`, doubling with every further failure up to the cap."""
    settings = get_settings()
    beyond = failures - settings.login_max_failures
    if beyond < 0:
        return timedelta(0)
    seconds = settings.login_backoff_seconds * 2 ** min(beyond, 32)
    return timedelta(seconds=min(seconds, settings.login_backoff_max_seconds))


def address_key(address: str | None) -> str:
    """Whose attempts count together: an IPv4 address, or an IPv6 /64 (one host may hold a
    whole /64, and rotating through it must not buy fresh tries)."""
    try:
        parsed = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def setup_state() -> SetupState:
    return SetupState(
        setup_required=not users.any_user_exists(),
        setup_secret_required=get_settings().setup_secret is not None,
    )


def _check_setup_secret(given: str | None) -> None:
    """On a deployed stack only who knows the stack's SetupSecret creates the first admin."""
    expected = get_settings().setup_secret
    if expected is None:
        return  # local mode
    if given is None or not hmac.compare_digest(
        given.encode("utf-8"), expected.get_secret_value().encode("utf-8")
    ):
        raise Forbidden(
            "First-time setup needs the stack's setup secret in `setup_secret` (the template "
            "parameter SetupSecret)."
            if not given
            else "The setup secret is wrong.",
            ProblemCode.AUTH_SETUP_SECRET_REQUIRED,
        )


def setup(invocation: Invocation, credentials: SetupRequest) -> SignedIn:
    """Create the first admin and sign them in; refused once any user exists."""
    if users.any_user_exists():
        raise Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE)
    _check_setup_secret(credentials.setup_secret)
    record = users.new_record(
        users.NewUser(username=credentials.username, password=credentials.password, roles=["admin"])
    )
    session, token = tokens.new_session(record)
    done = Conflict("Setup is done; sign in instead.", ProblemCode.AUTH_SETUP_DONE)
    uow = users.adding(invocation, record)
    user_store.mark_setup_done(uow, record.id)
    token_store.add(uow, session)
    for name in (ConditionName.USERNAME_FREE, ConditionName.SETUP_OPEN, ConditionName.TOKEN_ABSENT):
        uow.fail_as(name, done)
    uow.commit()
    return SignedIn(
        token=token,
        expires_at=clock.rfc3339(tokens.session_expiry(session)),
        user=users.view(record),
    )


def _throttled(retry_after: float) -> Throttled:
    return Throttled(
        "Too many failed logins for this username from this address; try again later.",
        retry_after=max(1, math.ceil(retry_after)),
        code=ProblemCode.AUTH_LOGIN_THROTTLED,
    )


def _claim_attempt(username: str, address: str) -> None:
    """Count this attempt before its password is checked, or refuse it (429) while the
    backoff lasts. Counting first, as one conditional write on what was read, is what makes
    concurrent attempts unable to slip past the count: each is counted exactly once, and an
    attempt whose count would start a wait is the last one checked until the wait is over."""
    for _ in range(CLAIM_TRIES):
        now = clock.now()
        seen = user_store.login_attempts(username, address)
        failures = 0
        if seen is not None and seen.expires > now:
            if seen.next_attempt_at is not None and seen.next_attempt_at > now:
                raise _throttled((seen.next_attempt_at - now).total_seconds())
            failures = seen.failures
        wait = wait_after(failures + 1)
        if user_store.claim_login_attempt(
            username,
            address,
            expected=seen.failures if seen is not None else None,
            failures=failures + 1,
            next_attempt_at=now + wait if wait else None,
            expires=now + FORGET_AFTER,
        ):
            return
    raise _throttled(1)  # this many attempts at once: certainly not a person typing


def login(
    invocation: Invocation, credentials: Credentials, client_address: str | None = None
) -> SignedIn:
    """Sign in. Attempts are throttled per (username, client address): after
    `login_max_failures` failures each further attempt waits twice as long as the one before,
    so guessing is slow, while the user from another address is never locked out by it."""
    username = credentials.username
    address = address_key(client_address)
    _claim_attempt(username, address)
    record = user_store.by_username(username)
    if record is None:
        passwords.burn_time(credentials.password)
    if record is None or not passwords.verify(record.password_hash, credentials.password):
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
    user_store.clear_login_attempts(username, address)
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
