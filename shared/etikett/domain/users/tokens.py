"""Bearer tokens: minting, hashing, resolving a token to its caller, service tokens and sessions.

A token is a recognisable prefix plus 32 random bytes (URL-safe base64); only its SHA-256 is stored,
so a leaked table reveals no usable token and secret scanners can spot a leaked token by its prefix.
"""

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Caller, Invocation, Role
from etikett.domain.audit import audit
from etikett.ids import id_pattern, new_id
from etikett.settings import get_settings
from etikett.store import sessions, tokens, users
from etikett.store.base import ReadAlong
from etikett.store.pages import Page
from etikett.store.tokens import SERVICE_OWNER, TokenRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett.store.users import UserRecord
from etikett_engine.errors import InvalidRequest, NotFound, ProblemCode, Unauthenticated
from etikett_engine.model import Model

SERVICE_PREFIX = "etks_"
SESSION_PREFIX = "etku_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mint(prefix: str) -> tuple[str, str]:
    token = prefix + secrets.token_urlsafe(32)
    return token, hash_token(token)


# A session token names its user before its secret (`etku_usr_….<secret>`), so that the session
# and the user's current roles are read together. The secret alone makes it unguessable; the name
# is only a key to read by (and must agree with the stored session's user).
_SESSION_USER = re.compile(rf"^etku_(?P<user>{id_pattern('usr')})\.")


def mint_session(user_id: str) -> tuple[str, str]:
    token = f"{SESSION_PREFIX}{user_id}.{secrets.token_urlsafe(32)}"
    return token, hash_token(token)


def session_user_id(token: str) -> str | None:
    """The user a session token names (None for other tokens and sessions minted before)."""
    match = _SESSION_USER.match(token)
    return match.group("user") if match else None


class ApiToken(Model):
    id: str
    subject: str
    role: Role
    expires_at: str | None
    created_at: str
    revoked_at: str | None = None


class IssuedApiToken(ApiToken):
    token: str = Field(description="The secret. Shown in this answer only; store it as a secret.")


class NewApiToken(Model):
    model_config = ConfigDict(extra="forbid")

    subject: str = Field(min_length=1, max_length=128, description="Name of the agent identity.")
    role: Role
    expires_at: datetime | None = Field(
        default=None, description="RFC 3339; when omitted the token never expires."
    )


def _token_view(record: TokenRecord) -> ApiToken:
    return ApiToken(
        id=record.id,
        subject=record.subject,
        role=record.role,
        expires_at=clock.rfc3339(record.expires_at) if record.expires_at else None,
        created_at=clock.rfc3339(record.created_at),
        revoked_at=clock.rfc3339(record.revoked_at) if record.revoked_at else None,
    )


def authenticate(token: str, *, along: ReadAlong | None = None) -> Caller:
    """Resolve a presented bearer token or session cookie to its caller, or refuse with 401.
    `along`: items the request will read next, read in the same round trip as the token."""
    if not token.startswith((SERVICE_PREFIX, SESSION_PREFIX)):
        raise Unauthenticated("The token is not an Etikett token.", ProblemCode.AUTH_INVALID_TOKEN)
    token_hash = hash_token(token)
    named_user = session_user_id(token)
    user: UserRecord | None = None
    if named_user is not None or along is not None:
        record, user = sessions.with_user(token_hash, named_user, along=along)
    else:
        record = tokens.get(token_hash)
    if record is None:
        raise Unauthenticated(
            "The token is unknown or was revoked.", ProblemCode.AUTH_INVALID_TOKEN
        )
    now = clock.now()
    if record.revoked_at is not None:
        raise Unauthenticated("The token was revoked.", ProblemCode.AUTH_INVALID_TOKEN)
    if record.expires_at is not None and record.expires_at <= now:
        raise Unauthenticated(
            "The token has expired.",
            ProblemCode.AUTH_TOKEN_EXPIRED,
            expired_at=clock.rfc3339(record.expires_at),
        )
    if record.kind == "service":
        return Caller(
            actor="service",
            subject=record.subject,
            roles=frozenset([record.role or ""]),
            token_id=record.id,
        )
    # A session takes the user's roles as they are now, so a revoked role takes effect at once.
    if user is None or user.id != record.user_id:  # a session minted before tokens named users
        user = users.get(record.user_id) if record.user_id else None
    if user is None:
        raise Unauthenticated(
            "The session's user no longer exists.", ProblemCode.AUTH_INVALID_TOKEN
        )
    if not user.active:
        raise Unauthenticated("The session's user is deactivated.", ProblemCode.AUTH_INVALID_TOKEN)
    return Caller(
        actor="human",
        subject=user.username,
        roles=frozenset(user.roles),
        user_id=user.id,
        session_hash=token_hash,
    )


# --- service-account tokens ---------------------------------------------------------------


def issue_api_token(invocation: Invocation, request: NewApiToken) -> IssuedApiToken:
    now = clock.now()
    if request.expires_at is not None:
        if request.expires_at.tzinfo is None:
            raise InvalidRequest.field("body.expires_at", "needs a time zone offset")
        if request.expires_at <= now:
            raise InvalidRequest.field("body.expires_at", "lies in the past")
    token, token_hash = mint(SERVICE_PREFIX)
    record = TokenRecord(
        token_hash=token_hash,
        id=new_id("tok"),
        kind="service",
        owner=SERVICE_OWNER,
        subject=request.subject,
        role=request.role,
        user_id=None,
        created_at=now,
        expires_at=request.expires_at,
    )
    details = {"subject": request.subject, "role": request.role}
    with UnitOfWork(audit.record(invocation, record.id, details=details)) as uow:
        tokens.add(uow, record)
    return IssuedApiToken(token=token, **_token_view(record).model_dump())


def list_api_tokens(limit: int, cursor: str | None) -> Page[ApiToken]:
    found = tokens.page_service_tokens(limit, cursor)
    return Page(
        items=[_token_view(record) for record in found.items], next_cursor=found.next_cursor
    )


def revoke_api_token(invocation: Invocation, token_id: str) -> None:
    record = tokens.by_id(token_id)
    if record is None or record.kind != "service":
        raise NotFound(
            f"No service-account token {token_id}.", ProblemCode.TOKEN_NOT_FOUND, token_id=token_id
        )
    if record.revoked_at is not None:
        return  # revoking twice is harmless and changes nothing
    with UnitOfWork(audit.record(invocation, token_id)) as uow:
        tokens.revoke(uow, record, clock.now())


# --- sessions -------------------------------------------------------------------------------


class Session(Model):
    token: str = Field(description="Session token; also set as the HttpOnly cookie.")
    expires_at: str


def new_session(user: UserRecord) -> tuple[TokenRecord, str]:
    """A session record (for the caller's transaction) and its secret."""
    now = clock.now()
    expires_at = now + timedelta(seconds=get_settings().session_ttl_seconds)
    token, token_hash = mint_session(user.id)
    record = TokenRecord(
        token_hash=token_hash,
        id=new_id("ses"),
        kind="session",
        owner=user.id,
        subject=user.username,
        role=None,
        user_id=user.id,
        created_at=now,
        expires_at=expires_at,
    )
    return record, token


def end_session(session_hash: str) -> None:
    tokens.delete(session_hash)


def end_sessions_of(user_id: str, *, keep: str | None = None) -> int:
    """End every session of a user (but `keep`); answers how many ended."""
    return tokens.delete_sessions_of(user_id, keep=keep)


def session_expiry(record: TokenRecord) -> datetime:
    assert record.expires_at is not None
    return record.expires_at
