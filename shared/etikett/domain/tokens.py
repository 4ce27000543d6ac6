"""Bearer tokens: minting, hashing, resolving a token to its caller, service tokens and sessions.

A token is a recognisable prefix plus 32 random bytes (URL-safe base64); only its SHA-256 is stored,
so a leaked table reveals no usable token and secret scanners can spot a leaked token by its prefix.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from etikett import clock
from etikett.domain import audit
from etikett.domain.actors import Caller, Invocation, Role
from etikett.errors import InvalidRequest, NotFound, ProblemCode, Unauthenticated
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store.base import transaction
from etikett.store.pages import Page, read_page
from etikett.store.tokens import SERVICE_OWNER, TokenRecord
from etikett.store.users import UserRecord

SERVICE_PREFIX = "etks_"
SESSION_PREFIX = "etku_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mint(prefix: str) -> tuple[str, str]:
    token = prefix + secrets.token_urlsafe(32)
    return token, hash_token(token)


class ApiToken(BaseModel):
    id: str
    subject: str
    role: Role
    expires_at: str | None
    created_at: str
    revoked_at: str | None = None


class IssuedApiToken(ApiToken):
    token: str = Field(description="The secret. Shown in this answer only; store it as a secret.")


class NewApiToken(BaseModel):
    model_config = {"extra": "forbid"}

    subject: str = Field(min_length=1, max_length=128, description="Name of the agent identity.")
    role: Role
    expires_at: datetime | None = Field(
        default=None, description="RFC 3339; when omitted the token never expires."
    )


def _token_view(record: TokenRecord) -> ApiToken:
    return ApiToken(
        id=record.id,
        subject=record.subject,
        role=record.role,  # type: ignore[arg-type]
        expires_at=clock.rfc3339(record.expires_at) if record.expires_at else None,
        created_at=clock.rfc3339(record.created_at),
        revoked_at=clock.rfc3339(record.revoked_at) if record.revoked_at else None,
    )


def authenticate(token: str) -> Caller:
    """Resolve a presented bearer token or session cookie to its caller, or refuse with 401."""
    if not token.startswith((SERVICE_PREFIX, SESSION_PREFIX)):
        raise Unauthenticated("The token is not an Etikett token.", ProblemCode.AUTH_INVALID_TOKEN)
    token_hash = hash_token(token)
    try:
        record = TokenRecord.get(token_hash)
    except TokenRecord.DoesNotExist:
        raise Unauthenticated(
            "The token is unknown or was revoked.", ProblemCode.AUTH_INVALID_TOKEN
        ) from None
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
    try:
        user = UserRecord.get(record.user_id)
    except UserRecord.DoesNotExist:
        raise Unauthenticated(
            "The session's user no longer exists.", ProblemCode.AUTH_INVALID_TOKEN
        ) from None
    if not user.active:
        raise Unauthenticated("The session's user is deactivated.", ProblemCode.AUTH_INVALID_TOKEN)
    return Caller(
        actor="human",
        subject=user.username,
        roles=frozenset(user.roles),
        user_id=user.pk,
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
        created_at=now,
        expires_at=request.expires_at,
        expires=None,
    )
    with transaction() as tx:
        tx.save(record, condition=TokenRecord.token_hash.does_not_exist())
        tx.save(
            audit.entry(
                invocation, record.id, details={"subject": request.subject, "role": request.role}
            )
        )
    return IssuedApiToken(token=token, **_token_view(record).model_dump())


def list_api_tokens(limit: int, cursor: str | None) -> Page[ApiToken]:
    def query(**page: object) -> object:
        return TokenRecord.by_owner.query(SERVICE_OWNER, scan_index_forward=False, **page)

    return read_page(query, {"token_hash", "owner", "id"}, limit, cursor, _token_view)


def revoke_api_token(invocation: Invocation, token_id: str) -> None:
    record = next(iter(TokenRecord.by_id.query(token_id, limit=1)), None)
    if record is None or record.kind != "service":
        raise NotFound(
            f"No service-account token {token_id}.", ProblemCode.TOKEN_NOT_FOUND, token_id=token_id
        )
    if record.revoked_at is not None:
        return  # revoking twice is harmless and changes nothing
    with transaction() as tx:
        tx.update(
            record,
            actions=[TokenRecord.revoked_at.set(clock.now())],
            condition=TokenRecord.token_hash.exists(),
        )
        tx.save(audit.entry(invocation, token_id))


# --- sessions -------------------------------------------------------------------------------


class Session(BaseModel):
    token: str = Field(description="Session token; also set as the HttpOnly cookie.")
    expires_at: str


def new_session(user: UserRecord) -> tuple[TokenRecord, str]:
    """A session record (for the caller's transaction) and its secret."""
    now = clock.now()
    expires_at = now + timedelta(seconds=get_settings().session_ttl_seconds)
    token, token_hash = mint(SESSION_PREFIX)
    record = TokenRecord(
        token_hash=token_hash,
        id=new_id("ses"),
        kind="session",
        owner=user.pk,
        subject=user.username,
        user_id=user.pk,
        created_at=now,
        expires_at=expires_at,
        expires=expires_at,
    )
    return record, token


def end_session(session_hash: str) -> None:
    TokenRecord(token_hash=session_hash).delete()


def end_sessions_of(user_id: str, *, keep: str | None = None) -> int:
    """End every session of a user (but `keep`); answers how many ended."""
    ended = 0
    for record in TokenRecord.by_owner.query(user_id):
        if record.token_hash != keep:
            record.delete()
            ended += 1
    return ended


def session_expiry(record: TokenRecord) -> datetime:
    assert record.expires_at is not None
    return record.expires_at
