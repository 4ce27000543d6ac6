"""Printing: `POST /print` turns a released label version and data into labels at a printer,
exactly once, with every label recorded in the print archive.

The request is checked whole before anything happens (label reference, printer, every record's
variables); then counter values are taken atomically, the job and one archive entry per record
are written, and the labels are rendered — once per distinct record — and encoded in the
printer's language. Small requests render at once; large ones render in the print-render
function (an SQS consumer), so a request never waits for ten thousand rasters.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from etikett import clients, clock
from etikett.domain import counters, jobs, label_versions, labels, printers
from etikett.domain.actors import Invocation
from etikett.dsl.label import LabelDocument
from etikett.errors import (
    Conflict,
    EtikettError,
    InvalidRequest,
    LabelNotReleased,
    NotFound,
    PayloadTooLarge,
    ProblemCode,
)
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store.archive import ArchiveRecord
from etikett.store.base import found, reads
from etikett.store.jobs import JobRecord
from etikett.store.labels import META_SK, LabelRecord, VersionRecord, unpack, version_sk
from etikett.store.printers import PrinterNameClaim, PrinterRecord
from etikett.store.runners import RUNNER_SK, RunnerRecord

MAX_RECORDS = 10_000
INLINE_RECORDS = 25  # up to this many records render within the request
REFERENCE = re.compile(r"^(?P<label>lbl_[0-9A-HJKMNP-TV-Z]{26})(?:@(?P<version>[1-9][0-9]{0,8}))?$")


class PrintRequest(BaseModel):
    model_config = {"extra": "forbid"}
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
    def _one_source(self) -> PrintRequest:
        if self.variables is not None and self.data is not None:
            raise ValueError("give `variables` (one label) or `data` (a stream), not both")
        if self.data is not None and not self.data:
            raise ValueError("`data` needs at least one record")
        return self

    def records(self) -> list[dict[str, Any]]:
        if self.data is not None:
            return self.data
        return [self.variables or {}]


class PrintAccepted(BaseModel):
    job_id: str
    archive_entry_ids: list[str]
    status: str = Field(description="The job's status: rendering, queued or held.")


class ArchiveEntry(BaseModel):
    id: str
    job_id: str
    label_id: str
    label_version: int
    printer: str
    copies: int
    variables: dict[str, Any]
    serials: dict[str, Any]
    outcome: Literal["failed", "held", "sent", "confirmed"] | None = Field(
        description="The latest outcome of the job that carries this label (null: not yet)."
    )
    outcome_reason: str | None = None
    outcome_at: str | None = None
    actor: dict[str, str]
    created_at: str


def parse_reference(reference: str) -> tuple[str, int | None]:
    match = REFERENCE.match(reference)
    if match is None:
        raise InvalidRequest.field("body.label_id", "must be lbl_… or lbl_…@N")
    version = match.group("version")
    return match.group("label"), int(version) if version else None


@dataclass(frozen=True)
class Target:
    """What a print request names, read: the label version to print and the printer."""

    label_id: str
    version: int
    document: LabelDocument
    printer: PrinterRecord
    runner: RunnerRecord | None  # None if it could not be read with the printer


def resolve(reference: str, printer_name: str) -> Target:
    """The label version and the printer, in two round trips (each one consistent read of
    several items): the label (or the named version) with the printer's name claim, then the
    released version with the printer and its Runner."""
    label_id, named_version = parse_reference(reference)
    version_key = version_sk("label", named_version) if named_version else None
    with reads() as first:
        meta = first.get(LabelRecord, label_id, META_SK) if version_key is None else None
        named = first.get(VersionRecord, label_id, version_key) if version_key else None
        claim = first.get(PrinterNameClaim, PrinterNameClaim.key_for(printer_name))
    if meta is not None:
        released = labels.existing(label_id, found(meta)).released_version
        if not released:
            raise LabelNotReleased(
                f"{label_id} has no released version; approve one first or "
                "name an approved version.",
                label_id=label_id,
            )
        version = int(released)
    else:
        assert named_version is not None and named is not None
        version = named_version
        label_versions.existing_version(label_id, "label", version, found(named))
    name_claim = printers.named(printer_name, found(claim))
    printer_id = name_claim.printer_id
    with reads() as second:
        if named is None:
            named = second.get(VersionRecord, label_id, version_sk("label", version))
        printer = second.get(PrinterRecord, printer_id)
        runner = (
            second.get(RunnerRecord, name_claim.runner_id, RUNNER_SK)
            if name_claim.runner_id
            else None
        )
    record = label_versions.existing_version(label_id, "label", version, found(named))
    return Target(
        label_id=label_id,
        version=version,
        document=_approved(label_id, version, record),
        printer=printers.existing(printer_id, found(printer)),
        runner=found(runner) if runner is not None else None,
    )


def _approved(label_id: str, version: int, record: VersionRecord) -> LabelDocument:
    if record.status != "approved":
        raise LabelNotReleased(
            f"Version {version} of {label_id} is {record.status}; only approved versions print.",
            label_id=label_id,
            version=version,
            status=record.status,
        )
    return LabelDocument.model_validate(unpack(record.document))


def _validate_records(document: LabelDocument, records: list[dict[str, Any]]) -> None:
    """Every record's entered values, checked before a counter value is taken."""
    from etikett.render import VariablesInvalid, resolve_variables

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


def expressions_of(document: LabelDocument) -> list[str]:
    sources = [v.expression for v in document.variables if v.expression]
    sources += [o.expression for o in document.objects if getattr(o, "expression", None)]
    return sources


def submit(
    invocation: Invocation,
    request: PrintRequest,
    *,
    now: datetime | None = None,
) -> PrintAccepted:
    records = request.records()
    if len(records) > MAX_RECORDS:
        raise PayloadTooLarge(
            f"{len(records)} records; at most {MAX_RECORDS} per request.",
            ProblemCode.PRINT_TOO_MANY_RECORDS,
            records=len(records),
            limit=MAX_RECORDS,
        )
    target = resolve(request.label_id, request.printer)
    label_id, version, document, printer = (
        target.label_id,
        target.version,
        target.document,
        target.printer,
    )
    if int(printer.dpi) != document.dpi:
        raise Conflict(
            f"The label is designed at {document.dpi} dpi, the printer prints "
            f"{int(printer.dpi)} dpi; choose a printer of the label's density.",
            ProblemCode.PRINT_DENSITY_MISMATCH,
            label_dpi=document.dpi,
            printer_dpi=int(printer.dpi),
        )
    _validate_records(document, records)

    names = counters.referenced(expressions_of(document))
    taken = {name: counters.take(name, len(records)) for name in names}
    formats = counters.formats(names)
    serials = [
        {name: counters.formatted(formats[name], taken[name][i]) for name in names}
        for i in range(len(records))
    ]
    moment = now or clock.now()
    caller = invocation.caller
    assert caller is not None
    entries = [
        ArchiveRecord(
            id=new_id("arc"),
            job_id="",
            record_index=i,
            label_id=label_id,
            label_version=version,
            printer=printer.name,
            printer_id=printer.pk,
            copies=request.copies,
            variables=record,
            serials=serials[i],
            actor=caller.actor,
            subject=caller.subject,
            created_at=moment,
        )
        for i, record in enumerate(records)
    ]
    payload = {
        "label_id": label_id,
        "label_version": version,
        "printer": printers.target(printer),
        "labels": len(records),
        "copies": request.copies,
        "expected_labels": len(records) * request.copies,
    }
    audit_details = {
        "label_id": label_id,
        "label_version": version,
        "printer": printer.name,
        "labels": len(records),
        "copies": request.copies,
        "serials": {name: [values[0], values[-1]] for name, values in taken.items()},
    }
    work = {
        "document": document.model_dump(mode="json", exclude_none=True),
        "records": records,
        "serials": serials,
        "copies": request.copies,
        "language": printer.language,
        "now": clock.rfc3339(moment),
    }
    job_view: jobs.Job | JobRecord
    if len(records) <= INLINE_RECORDS:
        # Rendered before the job is written: the job, its audit entry and its archive entries
        # then land in one transaction, already queued (a print's shortest path).
        try:
            data = encode_records(work)
        except EtikettError as error:
            job = jobs.create(
                invocation,
                printer.runner_id,
                "print",
                payload,
                printer_id=printer.pk,
                audit_details=audit_details,
                extra_writes=_archive_writes(entries),
            )
            _render_failed(job, error)
            raise
        job_view = jobs.submit(
            invocation,
            printer.runner_id,
            "print",
            payload,
            printer_id=printer.pk,
            data=data,
            audit_details=audit_details,
            extra_writes=_archive_writes(entries, with_held_event=True),
            note="Rendered; queued for the Runner.",
            runner=target.runner,
        )
    else:
        job_view = jobs.create(
            invocation,
            printer.runner_id,
            "print",
            payload,
            printer_id=printer.pk,
            audit_details=audit_details,
        )
        with ArchiveRecord.batch_write() as batch:
            for entry in entries:
                entry.job_id = job_view.id
                batch.save(entry)
        _store_work(job_view.id, {"job_id": job_view.id, **work})
        _enqueue_render(job_view.id)
    return PrintAccepted(
        job_id=job_view.id, archive_entry_ids=[e.id for e in entries], status=job_view.status
    )


def render_and_dispatch(job: JobRecord, work: dict[str, Any]) -> jobs.Job:
    """Render and encode a job's records, then queue it for its Runner."""
    try:
        data = encode_records(work)
    except EtikettError as error:
        _render_failed(job, error)
        raise
    return jobs.dispatch(job, data, on_held=_held_event)


def encode_records(work: dict[str, Any]) -> bytes:
    """Every distinct record rendered once and encoded in the printer's language, in order."""
    from etikett.render import encode_epl, encode_tspl, encode_zpl, render, resolve_variables

    document = LabelDocument.model_validate(work["document"])
    now = clock.parse_rfc3339(work["now"])
    copies = int(work["copies"])
    language = work["language"]
    encoded: dict[str, bytes] = {}
    chunks: list[bytes] = []
    for record, serials in zip(work["records"], work["serials"], strict=True):
        key = json.dumps([record, serials], sort_keys=True, default=str)
        if key not in encoded:
            values = resolve_variables(
                document, record, use_samples=False, now=now, counters=serials
            )
            image = render(document, values, now=now, counters=serials)
            if language == "tspl":
                encoded[key] = encode_tspl(image, copies=copies, dpi=document.dpi)
            elif language == "epl":
                encoded[key] = encode_epl(image, copies=copies, dpi=document.dpi)
            else:
                encoded[key] = encode_zpl(image, copies=copies)
        chunks.append(encoded[key])
    return b"".join(chunks)


def _render_failed(job: JobRecord, error: EtikettError) -> None:
    """The job fails; its `print.failed` event is written in the same transaction."""
    jobs.fail(job, "render_failed", f"Rendering failed: {error.detail}")


def _archive_writes(entries: list[ArchiveRecord], *, with_held_event: bool = False) -> Any:
    """The archive entries (and a queued job's `print.held` event) in the job's transaction."""

    def write(tx: Any, job: JobRecord) -> None:
        for entry in entries:
            entry.job_id = job.id
            tx.save(entry)
        if with_held_event and job.status == "held":
            _held_event(tx, job)

    return write


def _held_event(tx: Any, job: JobRecord) -> None:
    event = jobs.outcome_event(job, "held", "runner_offline")
    if event is not None:
        tx.save(event)


def _store_work(job_id: str, work: dict[str, Any]) -> None:
    clients.client("s3").put_object(
        Bucket=get_settings().required("assets_bucket"),
        Key=f"prints/{job_id}/work.json",
        Body=json.dumps(work, default=str).encode(),
    )


def load_work(job_id: str) -> dict[str, Any]:
    return json.loads(jobs.load_data(f"prints/{job_id}/work.json"))


def _enqueue_render(job_id: str) -> None:
    clients.client("sqs").send_message(
        QueueUrl=get_settings().required("print_render_queue"),
        MessageBody=json.dumps({"job_id": job_id}),
    )


def render_queued(job_id: str) -> None:
    """The print-render function's work for one message; a job already past rendering (a
    redelivered message) is left alone, so its labels are never queued twice."""
    record = jobs.load(job_id)
    if record.status != "rendering":
        return
    try:
        render_and_dispatch(record, load_work(job_id))
    except EtikettError:
        return  # the job is failed with its reason; retrying cannot help


# --- the archive -----------------------------------------------------------------------------


def _outcome(job: JobRecord | None) -> tuple[str | None, str | None, datetime | None]:
    """An entry's outcome is its job's last recorded outcome (kept while the job is running, so
    never null again once it had one), with its reason and time."""
    if job is None:
        return "failed", "job_missing", None
    if job.outcome in jobs.PRINT_OUTCOMES:
        return job.outcome, job.outcome_reason, job.outcome_at or job.finished_at or job.updated_at
    if job.status == "cancelled":  # cancelled before cancelling recorded an outcome
        return "failed", "cancelled", job.finished_at or job.updated_at
    return None, None, None


def _entry_view(record: ArchiveRecord, job: JobRecord | None) -> ArchiveEntry:
    outcome, reason, outcome_at = _outcome(job)
    return ArchiveEntry(
        id=record.id,
        job_id=record.job_id,
        label_id=record.label_id,
        label_version=int(record.label_version),
        printer=record.printer,
        copies=int(record.copies),
        variables=record.variables,
        serials=record.serials,
        outcome=outcome,  # type: ignore[arg-type]
        outcome_reason=reason,
        outcome_at=clock.rfc3339(outcome_at) if outcome_at else None,
        actor={"actor": record.actor, "subject": record.subject},
        created_at=clock.rfc3339(record.created_at),
    )


def _with_jobs(records: list[ArchiveRecord]) -> list[ArchiveEntry]:
    job_ids = {r.job_id for r in records}
    found = {job.id: job for job in JobRecord.batch_get(list(job_ids))} if job_ids else {}
    return [_entry_view(r, found.get(r.job_id)) for r in records]


def get_entry(entry_id: str) -> ArchiveEntry:
    try:
        record = ArchiveRecord.get(entry_id)
    except ArchiveRecord.DoesNotExist:
        raise NotFound(
            f"No print-archive entry {entry_id}.", ProblemCode.ARCHIVE_NOT_FOUND, entry_id=entry_id
        ) from None
    return _with_jobs([record])[0]


def list_entries(
    limit: int, cursor: str | None, *, label_id: str | None = None, job_id: str | None = None
) -> Any:
    from etikett.store.pages import Page, read_page

    if job_id is not None:
        index, value, keys = ArchiveRecord.by_job, job_id, {"id", "job_id"}
    elif label_id is not None:
        index, value, keys = ArchiveRecord.by_label, label_id, {"id", "label_id"}
    else:
        index, value, keys = ArchiveRecord.by_time, "archive", {"id", "stream"}
    scan_forward = job_id is not None  # a job's labels in print order, everything else newest first

    def query(**page: object) -> object:
        return index.query(value, scan_index_forward=scan_forward, **page)

    page = read_page(query, keys, limit, cursor, lambda r: r)
    return Page(items=_with_jobs(page.items), next_cursor=page.next_cursor)
