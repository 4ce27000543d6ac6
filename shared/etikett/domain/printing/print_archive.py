"""The print archive: one entry per printed label record; each entry's outcome is the last
outcome of the job that carried it."""

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from etikett import clock
from etikett.domain.printing import jobs
from etikett.store import archive
from etikett.store import jobs as job_store
from etikett.store.archive import ArchiveRecord
from etikett.store.jobs import JobRecord
from etikett.store.pages import Page
from etikett_engine.errors import NotFound, ProblemCode
from etikett_engine.model import Model


class ArchiveEntry(Model):
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
    printed_offline: bool = Field(
        default=False,
        description="Printed by a Runner while the service was unreachable, archived when it "
        "synced (docs/concepts/offline-sites.md); `created_at` is then its print time too.",
    )
    printed_at: str | None = Field(
        default=None, description="When a Runner printed it offline (its clock); else null."
    )
    flag: str | None = Field(
        default=None,
        description="What the sync of an offline print found wrong but archived anyway: "
        "`deployment_not_approved` (its deployment no longer ran in the Runner's group when "
        "it synced) or `offline_not_allowed` (its offline policy did not allow printing "
        "offline).",
    )


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
        label_version=record.label_version,
        printer=record.printer,
        copies=record.copies,
        variables=record.variables,
        serials=record.serials,
        outcome=outcome,
        outcome_reason=reason,
        outcome_at=clock.rfc3339(outcome_at) if outcome_at else None,
        actor={"actor": record.actor, "subject": record.subject},
        created_at=clock.rfc3339(record.created_at),
        printed_offline=record.printed_offline,
        printed_at=clock.rfc3339(record.printed_at) if record.printed_at else None,
        flag=record.flag,
    )


def _with_jobs(records: list[ArchiveRecord]) -> list[ArchiveEntry]:
    found = job_store.get_many({r.job_id for r in records})
    return [_entry_view(r, found.get(r.job_id)) for r in records]


def get_entry(entry_id: str) -> ArchiveEntry:
    record = archive.get(entry_id)
    if record is None:
        raise NotFound(
            f"No print-archive entry {entry_id}.", ProblemCode.ARCHIVE_NOT_FOUND, entry_id=entry_id
        )
    return _with_jobs([record])[0]


def list_entries(
    limit: int, cursor: str | None, *, label_id: str | None = None, job_id: str | None = None
) -> Page[ArchiveEntry]:
    """A job's labels in print order; a label's, or everything, newest first."""
    found = archive.page(limit, cursor, label_id=label_id, job_id=job_id)
    return Page(items=_with_jobs(found.items), next_cursor=found.next_cursor)
