"""Check characters that label programs add to barcode data themselves (Code 39's modulo 43), so an
imported code carries the same characters the original program printed."""

from __future__ import annotations

CODE39 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%"


def code39_check(data: str) -> str | None:
    """The modulo-43 check character of Code 39 data, None when a character is not Code 39's."""
    try:
        return CODE39[sum(CODE39.index(c) for c in data) % 43]
    except ValueError:
        return None
