"""A printer's record as other aggregates use it (printing, Runners, deployments): read by id
or name (printer.not_found), what a Runner needs to reach it, and the statuses its Runner
reports. No request or answer models, so a function that only looks printers up does not load
the printer API's."""

from __future__ import annotations

from typing import Any

from etikett import clock
from etikett.store import printers
from etikett.store.printers import PrinterName, PrinterRecord
from etikett_engine.errors import NotFound, ProblemCode


def load(printer_id: str) -> PrinterRecord:
    return existing(printer_id, printers.get(printer_id) if printer_id.startswith("prn_") else None)


def existing(printer_id: str, record: PrinterRecord | None) -> PrinterRecord:
    """`record` as read for `printer_id`; printer.not_found if there was none."""
    if record is None or not printer_id.startswith("prn_"):
        raise NotFound(
            f"No printer {printer_id}.", ProblemCode.PRINTER_NOT_FOUND, printer_id=printer_id
        )
    return record


def by_name(name: str) -> PrinterRecord:
    return load(named(name, printers.get_name(name)).printer_id)


def named(name: str, claim: PrinterName | None) -> PrinterName:
    """`claim` as read for `name`; printer.not_found if there was none."""
    if claim is None:
        raise NotFound(f"No printer named {name!r}.", ProblemCode.PRINTER_NOT_FOUND, name=name)
    return claim


def target(record: PrinterRecord) -> dict[str, Any]:
    """What a Runner needs to reach the printer."""
    return {
        "printer_id": record.id,
        "name": record.name,
        "uri": record.uri,
        "language": record.language,
        "dpi": record.dpi,
    }


def _text(value: Any) -> str | None:
    return str(value)[:200] if value is not None else None


def update_status(runner_id: str, statuses: list[dict[str, Any]]) -> None:
    """The printers' statuses as the Runner last read them (its own printers only)."""
    now = clock.now()
    for item in statuses[:100]:
        printer_id = str(item.get("printer_id", ""))
        if printer_id.startswith("prn_"):
            printers.report_status(
                runner_id, printer_id, _text(item.get("status")) or "unknown", now
            )
