"""Printing: `POST /print` turns a released label version and data into labels at a printer,
exactly once, with every label recorded in the print archive.

The request is checked whole before anything happens (label reference, printer, every record's
variables); then counter values are taken atomically, the job and one archive entry per record
are written, and the labels are rendered — once per distinct record — and encoded in the
printer's language. Small requests render at once; large ones render in the print-render
function (an SQS consumer), so a request never waits for ten thousand rasters.
"""

from datetime import datetime
from typing import Any, NamedTuple, Self

from pydantic import ConfigDict, Field, model_validator

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.counters import counter_values
from etikett.domain.printers import printer_records
from etikett.domain.printing import jobs, print_idempotency, print_targets
from etikett.domain.printing.print_limits import MAX_RECORDS as MAX_RECORDS
from etikett.domain.printing.print_rendering import held_event, render_failed
from etikett.domain.printing.print_targets import Target
from etikett.domain.printing.print_work import PrintWork
from etikett.domain.runners import runner_wakes
from etikett.ids import new_id
from etikett.store import archive, print_work
from etikett.store.archive import ArchiveRecord
from etikett.store.jobs import JobRecord
from etikett.store.print_targets import TargetsAhead
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import (
    Conflict,
    EtikettError,
    InvalidRequest,
    PayloadTooLarge,
    ProblemCode,
)
from etikett_engine.model import Model

INLINE_RECORDS = 25  # up to this many records render within the request


class PrintRequest(Model):
    model_config = ConfigDict(extra="forbid")
    label_id: str = Field(
        description="`lbl_…` prints the released version, `lbl_…@N` version N "
        "(which must be approved).",
        examples=["lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5@3"],
    )
    printer: str = Field(min_length=1, max_length=100, description="An adopted printer's name.")
    copies: int = Field(default=1, ge=1, le=10_000, description="Copies of each label.")
    variables: dict[str, Any] | None = Field(default=None, description="One label's values.")
    data: list[dict[str, Any]] | None = Field(
        default=None, description=f"A stream of records, one label each (up to {MAX_RECORDS})."
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The same key and body answer the first answer again and print nothing "
        "more; the same key with another body is refused (409).",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if self.variables is not None and self.data is not None:
            raise ValueError("give `variables` (one label) or `data` (a stream), not both")
        if self.data is not None and not self.data:
            raise ValueError("`data` needs at least one record")
        return self

    def records(self) -> list[dict[str, Any]]:
        if self.data is not None:
            return self.data
        return [self.variables or {}]


class PrintAccepted(Model):
    job_id: str
    archive_entry_ids: list[str]
    status: str = Field(
        description="The job's status: rendering, queued or held; a replay with the same "
        "idempotency_key answers the job's status now (e.g. confirmed)."
    )


def _validate_records(document: LabelDocument, records: list[dict[str, Any]]) -> None:
    """Every record's entered values, checked before a counter value is taken."""
    # Loaded here, not at the mcp and printing functions' cold start.
    from etikett_engine.render import VariablesInvalid, resolve_variables

    entered_only = document.model_copy(
        update={"variables": [v for v in document.variables if v.expression is None]}
    )
    errors: list[dict[str, Any]] = []
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            errors.append({"record": index, "variable": None, "message": "is not an object"})
            continue
        computed = {v.name for v in document.variables if v.expression is not None}
        try:
            resolve_variables(
                entered_only,
                {k: v for k, v in record.items() if k not in computed},
                use_samples=False,
            )
        except VariablesInvalid as error:
            errors += [{"record": index, **item} for item in error.params["errors"]]
        errors += [
            {
                "record": index,
                "variable": name,
                "message": "is computed by its expression and cannot be provided",
            }
            for name in record
            if name in computed
        ]
        if len(errors) >= 100:
            break
    if errors:
        summary = "; ".join(
            f"record {e['record']}: {e['variable']} {e['message']}" for e in errors[:5]
        )
        raise InvalidRequest(
            f"Invalid print data: {summary}.",
            ProblemCode.PRINT_VARIABLES_INVALID,
            errors=errors[:100],
        )


# --- one print request ------------------------------------------------------------------------


def print_request(
    invocation: Invocation, request: PrintRequest, *, ahead: TargetsAhead | None = None
) -> dict[str, Any]:
    """`POST /print` (and a Runner's flow print): the request printed once. With an
    `idempotency_key`, a retry answers the first answer and prints nothing more. `ahead`: its
    targets as an earlier print found them, read with the caller's token
    (`print_targets.read_ahead`)."""
    if request.idempotency_key is None:
        return submit(invocation, request, ahead=ahead).model_dump()
    return print_idempotency.once(
        invocation,
        request.idempotency_key,
        request.model_dump(mode="json", exclude={"idempotency_key"}),
        lambda: submit(invocation, request, ahead=ahead).model_dump(),
    )


# --- submitting, step by step ----------------------------------------------------------------


def submit(
    invocation: Invocation,
    request: PrintRequest,
    *,
    now: datetime | None = None,
    ahead: TargetsAhead | None = None,
) -> PrintAccepted:
    """Check the whole request, take counter values, write the job with its archive entries
    and audit entry, and render: at once for a few records, in the print-render function for
    more."""
    records = _records_of(request)
    target = print_targets.resolve(request.label_id, request.printer, ahead)
    _check_density(target)
    _validate_records(target.document, records)
    # A Runner asleep is woken now: on its way to its queue while the job is made.
    with runner_wakes.waking(target.runner):
        return _submit_checked(invocation, request, target, records, now)


def _submit_checked(
    invocation: Invocation,
    request: PrintRequest,
    target: Target,
    records: list[dict[str, Any]],
    now: datetime | None,
) -> PrintAccepted:
    serials, ranges = _take_serials(target.document, len(records))
    moment = _to_milliseconds(now or clock.now())
    entries = _archive_entries(invocation, target, request.copies, records, serials, moment)
    job = _PrintJob(
        payload={
            "label_id": target.label_id,
            "label_version": target.version,
            "printer": printer_records.target(target.printer),
            "labels": len(records),
            "copies": request.copies,
            "expected_labels": len(records) * request.copies,
        },
        audit_details={
            "label_id": target.label_id,
            "label_version": target.version,
            "printer": target.printer.name,
            "labels": len(records),
            "copies": request.copies,
            "serials": ranges,
        },
        work=PrintWork(
            document=target.document,
            records=records,
            serials=serials,
            copies=request.copies,
            language=target.printer.language,
            now=moment,
        ),
        entries=entries,
    )
    if len(records) <= INLINE_RECORDS:
        job_id, status = _print_now(invocation, target, job)
    else:
        job_id, status = _print_later(invocation, target, job)
    return PrintAccepted(job_id=job_id, archive_entry_ids=[e.id for e in entries], status=status)


class _PrintJob(NamedTuple):
    """What a print request becomes: the job's payload and audit details, its work, and one
    archive entry per record."""

    payload: dict[str, Any]
    audit_details: dict[str, Any]
    work: PrintWork
    entries: list[ArchiveRecord]


def _records_of(request: PrintRequest) -> list[dict[str, Any]]:
    records = request.records()
    if len(records) > MAX_RECORDS:
        raise PayloadTooLarge(
            f"{len(records)} records; at most {MAX_RECORDS} per request.",
            ProblemCode.PRINT_TOO_MANY_RECORDS,
            records=len(records),
            limit=MAX_RECORDS,
        )
    return records


def _check_density(target: Target) -> None:
    label_dpi, printer_dpi = target.document.dpi, target.printer.dpi
    if printer_dpi != label_dpi:
        raise Conflict(
            f"The label is designed at {label_dpi} dpi, the printer prints {printer_dpi} dpi; "
            "choose a printer of the label's density.",
            ProblemCode.PRINT_DENSITY_MISMATCH,
            label_dpi=label_dpi,
            printer_dpi=printer_dpi,
        )


def _take_serials(
    document: LabelDocument, count: int
) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """The counter values of `count` labels (taken now, atomically) as each label shows them,
    and the first and last value of each counter (for the audit entry)."""
    names = counter_values.referenced(document.expressions())
    taken = {name: counter_values.take(name, count) for name in names}
    formats = counter_values.formats(names)
    serials = [
        {name: counter_values.formatted(formats[name], taken[name][i]) for name in names}
        for i in range(count)
    ]
    return serials, {name: [values[0], values[-1]] for name, values in taken.items()}


def _to_milliseconds(moment: datetime) -> datetime:
    """Expressions see `now` as the archive records it: to the millisecond."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _archive_entries(
    invocation: Invocation,
    target: Target,
    copies: int,
    records: list[dict[str, Any]],
    serials: list[dict[str, Any]],
    moment: datetime,
) -> list[ArchiveRecord]:
    caller = invocation.caller
    assert caller is not None
    return [
        ArchiveRecord(
            id=new_id("arc"),
            job_id="",  # set once the job has its id
            record_index=i,
            label_id=target.label_id,
            label_version=target.version,
            printer=target.printer.name,
            printer_id=target.printer.id,
            copies=copies,
            variables=record,
            serials=serials[i],
            actor=caller.actor,
            subject=caller.subject,
            created_at=moment,
        )
        for i, record in enumerate(records)
    ]


def _print_now(invocation: Invocation, target: Target, job: _PrintJob) -> tuple[str, str]:
    """Rendered before the job is written: the job, its audit entry and its archive entries
    then land in one transaction, already queued (a print's shortest path)."""
    printer = target.printer
    try:
        data = job.work.encode()
    except EtikettError as error:
        failed = _rendering(invocation, target, job, _archive_writes(job.entries))
        render_failed(failed, error)
        raise
    queued = jobs.submit(
        invocation,
        printer.runner_id,
        "print",
        job.payload,
        printer_id=printer.id,
        data=data,
        audit_details=job.audit_details,
        extra_writes=_archive_writes(job.entries, with_held_event=True),
        note="Rendered; queued for the Runner.",
        runner=target.runner,
    )
    return queued.id, queued.status


def _print_later(invocation: Invocation, target: Target, job: _PrintJob) -> tuple[str, str]:
    """The job waits in `rendering` while the print-render function renders its work."""
    record = _rendering(invocation, target, job)
    archive.add_all([entry._replace(job_id=record.id) for entry in job.entries])
    print_work.put(record.id, job.work.model_dump_json().encode())
    print_work.enqueue(record.id)
    return record.id, record.status


def _rendering(
    invocation: Invocation,
    target: Target,
    job: _PrintJob,
    extra_writes: jobs.ExtraWrites | None = None,
) -> JobRecord:
    """The print job written as `rendering` (its labels not yet encoded), with its audit entry
    and `extra_writes` in the same transaction."""
    return jobs.create(
        invocation,
        target.printer.runner_id,
        "print",
        job.payload,
        printer_id=target.printer.id,
        audit_details=job.audit_details,
        extra_writes=extra_writes,
    )


def _archive_writes(
    entries: list[ArchiveRecord], *, with_held_event: bool = False
) -> jobs.ExtraWrites:
    """The archive entries (and a queued job's `print.held` event) in the job's transaction."""

    def write(uow: UnitOfWork, job: JobRecord) -> None:
        archive.add(uow, [entry._replace(job_id=job.id) for entry in entries])
        if with_held_event and job.status == "held":
            held_event(uow, job)

    return write
