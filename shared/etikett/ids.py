"""Resource identifiers: a type prefix and a ULID, so ids sort by creation time."""

from ulid import ULID


def new_id(prefix: str) -> str:
    return f"{prefix}_{ULID()}"


def ulid_bound(at_ms: int, *, upper: bool = False) -> str:
    """The smallest (or largest) ULID of a millisecond: turns a time range into a key range."""
    randomness = b"\xff" * 10 if upper else bytes(10)
    return str(ULID.from_bytes(at_ms.to_bytes(6, "big") + randomness))
