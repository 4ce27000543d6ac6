"""Resource identifiers: a type prefix and a ULID, so ids sort by creation time."""

import datetime as dt

from ulid import ULID

ULID_PATTERN = "[0-9A-HJKMNP-TV-Z]{26}"  # 26 characters of Crockford's base 32, as minted


def id_pattern(prefix: str) -> str:
    """A regular expression (unanchored) of the ids `new_id(prefix)` makes."""
    return f"{prefix}_{ULID_PATTERN}"


def new_id(prefix: str, *, at: dt.datetime | None = None) -> str:
    """A new id; `at` makes its time the same millisecond as a time recorded with it."""
    return f"{prefix}_{ULID() if at is None else ULID.from_datetime(at)}"


def ulid_bound(at_ms: int, *, upper: bool = False) -> str:
    """The smallest (or largest) ULID of a millisecond: turns a time range into a key range."""
    randomness = b"\xff" * 10 if upper else bytes(10)
    # A ULID's time is 48 bits of milliseconds since 1970: a time before (or after) that range
    # bounds like its nearest end, since no id was minted there.
    at_ms = min(max(at_ms, 0), 2**48 - 1)
    return str(ULID.from_bytes(at_ms.to_bytes(6, "big") + randomness))
