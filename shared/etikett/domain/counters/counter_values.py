"""Counter values as printing, previews and preflight use them: a print job's block taken in one
atomic update (never handed out twice), the next value peeked at, values formatted. No request
or answer models, so a function that only prints does not load the counter API's."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from etikett import clock
from etikett.store import counters
from etikett.store.counters import CounterRecord
from etikett_engine.errors import Conflict, NotFound, ProblemCode

if TYPE_CHECKING:  # the label model (8 ms to import) is no concern of the Runner agent's claims
    from etikett_engine.dsl.label import LabelDocument

WIDTH_FORMAT = re.compile(r"^0{1,20}$")
COUNTER_REFERENCE = re.compile(r"\bcounters\.([A-Za-z_][A-Za-z0-9_]*)")


def load(name: str) -> CounterRecord:
    record = counters.get(name)
    if record is None:
        raise NotFound(f"No counter {name!r}.", ProblemCode.COUNTER_NOT_FOUND, name=name)
    return record


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
            raise Conflict(
                f"The counter {name!r} is deactivated.", ProblemCode.COUNTER_INACTIVE, name=name
            )
        taken = counters.take(record, count, period_of(record.reset, clock.now()))
        if taken is None:
            continue  # deactivated or a new period began: look again
        last, step = taken.current, taken.step
        return [last - step * (count - 1 - i) for i in range(count)]
    raise Conflict(
        f"The counter {name!r} kept changing; try again.", ProblemCode.RESOURCE_CONFLICT, name=name
    )


def peek(record: CounterRecord) -> int:
    """The next value, without taking it (what a preview shows)."""
    if record.period != period_of(record.reset, clock.now()):
        return record.start
    return record.current + record.step


def formatted(record_format: str | None, value: int) -> Any:
    if record_format is None:
        return value
    if WIDTH_FORMAT.match(record_format):
        return str(value).zfill(len(record_format))
    # Loaded here, not at the counters, labels, mcp and 2 more functions' cold start.
    from etikett_engine.cel import evaluate

    return evaluate(record_format, {"value": value}, {"value": "integer"})


def formats(names: list[str]) -> dict[str, str | None]:
    return {name: load(name).format for name in names}


def next_values(document: LabelDocument) -> dict[str, Any]:
    """The values the label's counters would give the next printed label (nothing is taken);
    a counter that does not exist yet shows as 1."""
    values: dict[str, Any] = {}
    for name in referenced(document.expressions()):
        record = counters.get(name)
        values[name] = 1 if record is None else formatted(record.format, peek(record))
    return values
