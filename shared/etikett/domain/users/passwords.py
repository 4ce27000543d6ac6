"""Password hashing (argon2id) and the password rules. Passwords are never stored or logged."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from etikett_engine.errors import InvalidRequest, ProblemCode

if TYPE_CHECKING:
    from argon2 import PasswordHasher

MIN_LENGTH = 8
MAX_LENGTH = 1024


@cache
def _hasher() -> PasswordHasher:
    # Loaded here, not at the auth, mcp and users functions' cold start.
    from argon2 import PasswordHasher

    return PasswordHasher()


def check_rules(password: str, *, username: str | None = None) -> None:
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        raise InvalidRequest(
            f"A password has {MIN_LENGTH} to {MAX_LENGTH} characters.",
            ProblemCode.AUTH_WEAK_PASSWORD,
            min_length=MIN_LENGTH,
            max_length=MAX_LENGTH,
        )
    if username is not None and password.casefold() == username.casefold():
        raise InvalidRequest(
            "The password must not be the username.", ProblemCode.AUTH_WEAK_PASSWORD
        )


def hash_password(password: str) -> str:
    return str(_hasher().hash(password))


def verify(password_hash: str, password: str) -> bool:
    # Loaded here, not at the auth, mcp and users functions' cold start.
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return bool(_hasher().verify(password_hash, password))
    except (VerificationError, InvalidHashError):
        return False


@cache
def _decoy_hash() -> str:
    return hash_password("etikett-decoy-password")


def burn_time(password: str) -> None:
    """Verify against a decoy so an unknown username costs as long as a wrong password."""
    verify(_decoy_hash(), password)
