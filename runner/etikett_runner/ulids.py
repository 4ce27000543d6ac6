"""Ids the Runner chooses itself (flow runs, offline prints): a prefix and a ULID, time-ordered,
so the service lists them newest first and a journal sorts them oldest first."""

from __future__ import annotations

import secrets
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(prefix: str) -> str:
    value = (time.time_ns() // 1_000_000) << 80 | secrets.randbits(80)
    text = "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
    return f"{prefix}_{text}"
