"""Counters: named serial sequences for labels (`counters.<name>` in CEL). Values are taken
only when labels are printed, a whole job's block in one atomic DynamoDB update, so no value is
ever handed out twice — not under concurrency and not when a request is retried."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator
from pynamodb.exceptions import UpdateError

from etikett import clock
from etikett.domain import audit
from etikett.domain.actors import Invocation
from etikett.errors import Conflict, NotFound
from etikett.store.base import transaction
from etikett.store.counters import CounterRecord
from etikett.store.pages import Page, read_page

NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
WIDTH_FORMAT = re.compile(r"^0{1,20}$")
Reset = Literal["never", "daily", "monthly", "yearly"]
COUNTER_REFERENCE = re.compile(r"\bcounters\.([A-Za-z_][A-Za-z0-9_]*)")


class Counter(BaseModel):
    name: str
    start: int
    step: int
    current: int | None = Field(description="The last value taken; null before the first.")
    format: str | None
    reset: Reset
    active: bool
    issued: int = Field(description="Values taken since the counter was created.")
    created_at: str


class NewCounter(BaseModel):
    model_config = {"extra": "forbid"}
    name: str = Field(pattern=NAME)
    start: int = Field(default=1, ge=0, le=10**15)
    step: int = Field(default=1, ge=1, le=10**6)
    format: str | None = Field(
        default=None,
        max_length=500,
        description="Zeros give a zero-padded width (`000000` → 000042); otherwise a CEL "
        'expression over `value` (e.g. `"SN" + pad(value, 8)`). Without a format '
        "labels get the number.",
    )
    reset: Reset = Field(default="never", description="Start again at `start` each UTC period.")

    @field_validator("format")
    @classmethod
    def _valid_format(cls, value: str | None) -> str | None:
        if value is None or WIDTH_FORMAT.match(value):
            return value
        from etikett.cel import CelInvalid, check

        try:
            check(value, {"value": "integer"})
        except CelInvalid as error:
            raise ValueError(f"not a CEL expression over `value`: {error.detail}") from None
        return value


def view(record: CounterRecord) -> Counter:
    current = int(record.current)
    return Counter(
        name=record.name,
        start=int(record.start),
        step=int(record.step),
        current=None if int(record.issued) == 0 else current,
        format=record.format,
        reset=record.reset,
        active=record.active,  # type: ignore[arg-type]
        issued=int(record.issued),
        created_at=clock.rfc3339(record.created_at),
    )


def load(name: str) -> CounterRecord:
    try:
        return CounterRecord.get(name)
    except CounterRecord.DoesNotExist:
        raise NotFound(f"No counter {name!r}.", "counter.not_found", name=name) from None


def get(name: str) -> Counter:
    return view(load(name))


def list_counters(limit: int, cursor: str | None) -> Page[Counter]:
    def query(**page: object) -> object:
        return CounterRecord.by_name.query("counter", **page)

    return read_page(query, {"name", "kind"}, limit, cursor, view)


def create(invocation: Invocation, request: NewCounter) -> Counter:
    caller = invocation.caller
    record = CounterRecord(
        name=request.name,
        kind="counter",
        start=request.start,
        step=request.step,
        current=request.start - request.step,
        issued=0,
        format=request.format,
        reset=request.reset,
        period=period_of(request.reset, clock.now()),
        active=True,
        created_at=clock.now(),
        created_by=caller.subject if caller else "system",
    )
    try:
        with transaction() as tx:
            tx.save(record, condition=CounterRecord.name.does_not_exist())
            tx.save(audit.entry(invocation, request.name, details=request.model_dump()))
    except Exception as error:
        from etikett.store.base import cancellation_codes

        if "ConditionalCheckFailed" in cancellation_codes(error):
            raise Conflict(
                f"A counter named {request.name!r} exists.", "counter.exists", name=request.name
            ) from None
        raise
    return view(record)


def deactivate(invocation: Invocation, name: str) -> Counter:
    record = load(name)
    if not record.active:
        return view(record)
    with transaction() as tx:
        tx.update(
            record, actions=[CounterRecord.active.set(False)], condition=CounterRecord.name.exists()
        )
        tx.save(audit.entry(invocation, name, details={"issued": int(record.issued)}))
    return get(name)


def period_of(reset: str, now: datetime) -> str:
    return {
        "never": "",
        "daily": now.strftime("%Y-%m-%d"),
        "monthly": now.strftime("%Y-%m"),
        "yearly": now.strftime("%Y"),
    }.get(reset, "")


def referenced(sources: list[str]) -> list[str]:
    """Counter names a label's expressions read (`counters.<name>`)."""
    names: set[str] = set()
    for source in sources:
        names.update(COUNTER_REFERENCE.findall(source))
    return sorted(names)


def take(name: str, count: int) -> list[int]:
    """`count` consecutive values of the counter, taken atomically; refused when inactive."""
    for _ in range(5):
        record = load(name)
        if not record.active:
            raise Conflict(f"The counter {name!r} is deactivated.", "counter.inactive", name=name)
        now = clock.now()
        period = period_of(record.reset, now)
        step = int(record.step)
        try:
            if record.period == period:
                record.update(
                    actions=[
                        CounterRecord.current.add(step * count),
                        CounterRecord.issued.add(count),
                    ],
                    condition=(CounterRecord.active == True)  # noqa: E712
                    & (CounterRecord.period == period),
                )
            else:  # a new period: start again, if nobody else did meanwhile
                first = int(record.start)
                record.update(
                    actions=[
                        CounterRecord.current.set(first - step + step * count),
                        CounterRecord.issued.add(count),
                        CounterRecord.period.set(period),
                    ],
                    condition=(CounterRecord.active == True)  # noqa: E712
                    & (CounterRecord.period == record.period),
                )
        except UpdateError as error:
            if error.cause_response_code == "ConditionalCheckFailedException":
                continue  # deactivated or a new period began: look again
            raise
        last = int(record.current)  # update() reads the new item back (ReturnValues ALL_NEW)
        return [last - step * (count - 1 - i) for i in range(count)]
    raise Conflict(
        f"The counter {name!r} kept changing; try again.", "resource.conflict", name=name
    )


def peek(record: CounterRecord) -> int:
    """The next value, without taking it (what a preview shows)."""
    if record.period != period_of(record.reset, clock.now()):
        return int(record.start)
    return int(record.current) + int(record.step)


def formatted(record_format: str | None, value: int) -> Any:
    if record_format is None:
        return value
    if WIDTH_FORMAT.match(record_format):
        return str(value).zfill(len(record_format))
    from etikett.cel import evaluate

    return evaluate(record_format, {"value": value}, {"value": "integer"})


def formats(names: list[str]) -> dict[str, str | None]:
    return {name: load(name).format for name in names}
