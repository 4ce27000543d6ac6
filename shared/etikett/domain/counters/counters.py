"""Counters: named serial sequences for labels (`counters.<name>` in CEL). Values are taken
only when labels are printed, a whole job's block in one atomic DynamoDB update, so no value is
ever handed out twice — not under concurrency and not when a request is retried. Taking,
peeking at and formatting values is in `counter_values`; here the counters themselves."""

from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.counters.counter_values import WIDTH_FORMAT, load, period_of
from etikett.store import counters
from etikett.store.conditions import ConditionName
from etikett.store.counters import CounterRecord
from etikett.store.pages import Page
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, ProblemCode
from etikett_engine.model import Model

NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
Reset = Literal["never", "daily", "monthly", "yearly"]


class Counter(Model):
    name: str
    start: int
    step: int
    current: int | None = Field(description="The last value taken; null before the first.")
    format: str | None
    reset: Reset
    active: bool
    issued: int = Field(description="Values taken since the counter was created.")
    created_at: str


class NewCounter(Model):
    model_config = ConfigDict(extra="forbid")
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
        # Loaded here, not at the counters and mcp functions' cold start.
        from etikett_engine.cel import CelInvalid, check

        try:
            check(value, {"value": "integer"})
        except CelInvalid as error:
            raise ValueError(f"not a CEL expression over `value`: {error.detail}") from None
        return value


def view(record: CounterRecord) -> Counter:
    return Counter(
        name=record.name,
        start=record.start,
        step=record.step,
        current=None if record.issued == 0 else record.current,
        format=record.format,
        reset=record.reset,
        active=record.active,
        issued=record.issued,
        created_at=clock.rfc3339(record.created_at),
    )


def get(name: str) -> Counter:
    return view(load(name))


def list_counters(limit: int, cursor: str | None) -> Page[Counter]:
    found = counters.page(limit, cursor)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def create(invocation: Invocation, request: NewCounter) -> Counter:
    caller = invocation.caller
    now = clock.now()
    record = CounterRecord(
        name=request.name,
        start=request.start,
        step=request.step,
        current=request.start - request.step,
        issued=0,
        format=request.format,
        reset=request.reset,
        period=period_of(request.reset, now),
        active=True,
        created_at=now,
        created_by=caller.subject if caller else "system",
    )
    taken = Conflict(
        f"A counter named {request.name!r} exists.",
        ProblemCode.COUNTER_EXISTS,
        name=request.name,
    )
    entry = audit.record(invocation, request.name, details=request.model_dump())
    with UnitOfWork(entry, errors={ConditionName.COUNTER_ABSENT: taken}) as uow:
        counters.add(uow, record)
    return view(record)


def deactivate(invocation: Invocation, name: str) -> Counter:
    record = load(name)
    if not record.active:
        return view(record)
    with UnitOfWork(audit.record(invocation, name, details={"issued": record.issued})) as uow:
        counters.deactivate(uow, name)
    return get(name)
