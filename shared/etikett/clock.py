"""Time in one place: UTC, RFC 3339 with milliseconds, so the rest of the code never guesses."""

from datetime import UTC, datetime


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
