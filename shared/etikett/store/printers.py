"""Printers: adopted print targets, a claim item per name (names are unique regardless of
case), and the findings of discovery jobs, kept a week for adoption."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, condition_failed, get_item, item_of, record_of, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

_META = table_meta("printers_table")
KIND = "printer"


class PrinterRecord(NamedTuple):
    id: str  # prn_…
    name: str
    runner_id: str
    uri: str  # tcp://host:port
    language: str  # zpl | tspl | epl
    dpi: int
    model: str | None
    firmware: str | None
    status: str | None  # last reported: ready, paper_out, …
    status_at: dt.datetime | None
    finding_id: str | None
    created_at: dt.datetime


class PrinterName(NamedTuple):
    """Which printer a name belongs to (and its Runner, so a print by name reads both at once)."""

    printer_id: str
    runner_id: str | None


class FindingRecord(NamedTuple):
    """A printer a discovery job found."""

    id: str  # fnd_…
    runner_id: str
    job_id: str
    address: str  # host:port
    model: str | None
    firmware: str | None
    dpi: int | None
    status: str | None
    language: str
    found_at: dt.datetime


class _ByName(GlobalSecondaryIndex["_PrinterItem"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class _PrinterItem(Item):
    Meta = _META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    kind = UnicodeAttribute(default=KIND)
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()  # casefolded name
    runner_id = UnicodeAttribute()
    uri = UnicodeAttribute()
    language = UnicodeAttribute()
    dpi = NumberAttribute()
    model = UnicodeAttribute(null=True)
    firmware = UnicodeAttribute(null=True)
    status = UnicodeAttribute(null=True)
    status_at = UTCDateTimeAttribute(null=True)
    finding_id = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    # Counts assignments to deployments' aliases: a deletion checked against the deployments
    # holds only if no assignment came in meanwhile (absent on printers never assigned).
    assigned_rev = NumberAttribute(null=True)
    by_name = _ByName()


class _NameClaim(Item):
    Meta = _META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "name#<casefolded name>"
    printer_id = UnicodeAttribute()
    # A printer keeps its Runner for life (absent on claims written before it was added).
    runner_id = UnicodeAttribute(null=True)


class _FindingsOfRunner(GlobalSecondaryIndex["_FindingItem"]):
    """The table's by_name index, keyed for findings by Runner and time (kind, name_key)."""

    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)  # "finding#run_…"
    name_key = UnicodeAttribute(range_key=True)  # found_at, then the id


class _FindingItem(Item):
    Meta = _META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # "finding#fnd_…"
    kind = UnicodeAttribute(null=True)  # absent on findings stored before the index
    name_key = UnicodeAttribute(null=True)
    of_runner = _FindingsOfRunner()
    id = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    job_id = UnicodeAttribute()
    address = UnicodeAttribute()
    model = UnicodeAttribute(null=True)
    firmware = UnicodeAttribute(null=True)
    dpi = NumberAttribute(null=True)
    status = UnicodeAttribute(null=True)
    language = UnicodeAttribute(default="zpl")
    found_at = UTCDateTimeAttribute()
    expires = TTLAttribute(null=True)


def name_key(name: str) -> str:
    return f"name#{name.casefold()}"


def _finding_key(finding_id: str) -> str:
    return f"finding#{finding_id}"


def _findings_kind(runner_id: str) -> str:
    return f"finding#{runner_id}"


def printer_of(item: _PrinterItem) -> PrinterRecord:
    return record_of(PrinterRecord, item)


def name_of(claim: _NameClaim) -> PrinterName:
    return PrinterName(printer_id=claim.printer_id, runner_id=claim.runner_id)


# --- reading --------------------------------------------------------------------------------------


def get(printer_id: str) -> PrinterRecord | None:
    item = get_item(_PrinterItem, printer_id)
    return printer_of(item) if item is not None else None


def get_name(name: str) -> PrinterName | None:
    claim = get_item(_NameClaim, name_key(name))
    return name_of(claim) if claim is not None else None


def page(limit: int, cursor: str | None, runner_id: str | None) -> Page[PrinterRecord]:
    """Printers by name; `runner_id` filters when given."""
    condition = _PrinterItem.runner_id == runner_id if runner_id else None

    def query(**page: Any) -> Any:
        return _PrinterItem.by_name.query(KIND, filter_condition=condition, **page)

    return read_page(query, {"pk", "kind", "name_key"}, limit, cursor, printer_of)


def of_runner(runner_id: str) -> list[PrinterRecord]:
    condition = _PrinterItem.runner_id == runner_id
    return [printer_of(i) for i in _PrinterItem.by_name.query(KIND, filter_condition=condition)]


def get_finding(finding_id: str) -> FindingRecord | None:
    item = get_item(_FindingItem, _finding_key(finding_id))
    return record_of(FindingRecord, item) if item is not None else None


# --- writing --------------------------------------------------------------------------------------


def add(uow: UnitOfWork, printer: PrinterRecord) -> None:
    """A new printer and its name claim; `printer.name_free` fails when the name is taken."""
    item = item_of(_PrinterItem, printer, kind=KIND, name_key=printer.name.casefold())
    uow.put(item, _PrinterItem.id.does_not_exist(), name=ConditionName.PRINTER_ABSENT)
    claim = _NameClaim(
        key=name_key(printer.name), printer_id=printer.id, runner_id=printer.runner_id
    )
    uow.put(claim, _NameClaim.key.does_not_exist(), name=ConditionName.PRINTER_NAME_FREE)


def delete(uow: UnitOfWork, printer: PrinterRecord, assigned_rev: int | None = None) -> None:
    """With `assigned_rev` (from `assigned_rev()`), `printer.unassigned` fails when the printer
    was assigned to a deployment since."""
    condition = None
    if assigned_rev is not None:
        condition = (
            _PrinterItem.assigned_rev.does_not_exist()
            if assigned_rev == 0
            else _PrinterItem.assigned_rev == assigned_rev
        )
    uow.delete(_PrinterItem(printer.id), condition, name=ConditionName.PRINTER_UNASSIGNED)
    uow.delete(_NameClaim(name_key(printer.name)))


def assigned_rev(printer_id: str) -> int:
    """How often the printer was assigned to deployments' aliases (0: never)."""
    item = get_item(_PrinterItem, printer_id)
    return int(item.assigned_rev or 0) if item is not None else 0


def note_assigned(uow: UnitOfWork, printer_id: str) -> None:
    """The printer is assigned to a deployment's alias in this change; `printer.exists` fails
    when it was deleted meanwhile."""
    uow.update(
        _PrinterItem(printer_id),
        [_PrinterItem.assigned_rev.add(1)],
        _PrinterItem.id.exists(),
        name=ConditionName.PRINTER_EXISTS,
    )


def report_status(runner_id: str, printer_id: str, status: str, at: dt.datetime) -> bool:
    """A Runner's report of its printer's status; False unless that printer is the Runner's. Any
    other failure of the write (throttling, a refused value) is raised, never taken for that."""
    try:
        _PrinterItem(printer_id).update(
            actions=[_PrinterItem.status.set(status), _PrinterItem.status_at.set(at)],
            condition=_PrinterItem.runner_id == runner_id,
        )
    except UpdateError as error:
        if condition_failed(error):
            return False
        raise
    return True


def add_findings(findings: list[FindingRecord], expires: dt.datetime) -> None:
    with _FindingItem.batch_write() as batch:
        for finding in findings:
            batch.save(
                item_of(
                    _FindingItem,
                    finding,
                    key=_finding_key(finding.id),
                    expires=expires,
                    kind=_findings_kind(finding.runner_id),
                    name_key=f"{finding.found_at.isoformat()}#{finding.id}",
                )
            )


def page_findings(
    runner_id: str, limit: int, cursor: str | None, now: dt.datetime
) -> Page[FindingRecord]:
    """A Runner's findings, newest first, without the expired ones (moto keeps them past their
    TTL, and DynamoDB deletes them only eventually)."""

    def query(**page: Any) -> Any:
        return _FindingItem.of_runner.query(
            _findings_kind(runner_id),
            scan_index_forward=False,
            filter_condition=_FindingItem.expires > now,
            **page,
        )

    return read_page(
        query,
        {"pk", "kind", "name_key"},
        limit,
        cursor,
        lambda item: record_of(FindingRecord, item),
    )
