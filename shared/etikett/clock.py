"""Time in one place: UTC, RFC 3339 with milliseconds, so the rest of the code never guesses; and
how long the running Lambda invocation has left (set by its entry, read where work must end in
time)."""

import time
from contextvars import ContextVar, Token
from datetime import UTC, datetime

# When the running invocation must be done, on the monotonic clock (None: no deadline is known).
_deadline: ContextVar[float | None] = ContextVar("deadline", default=None)


def start_invocation(remaining_ms: int | None) -> Token[float | None]:
    """The entry of a Lambda invocation says how long it has; `end_invocation` forgets it."""
    ends = None if remaining_ms is None else time.monotonic() + remaining_ms / 1000
    return _deadline.set(ends)


def end_invocation(token: Token[float | None]) -> None:
    _deadline.reset(token)


def remaining_ms() -> int | None:
    """Milliseconds the running invocation has left; None outside one."""
    ends = _deadline.get()
    return None if ends is None else max(0, int((ends - time.monotonic()) * 1000))


def now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_utc(moment: datetime) -> datetime:
    """`moment` in UTC; one without an offset is read as UTC (the service keeps every time so)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_rfc3339(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError("timestamp needs a time zone offset")
    return moment.astimezone(UTC)
