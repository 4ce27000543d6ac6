"""The print-render function's work: a large print job's labels rendered from its stored work
and handed to the Runner's queue. Apart from `printing` (which also uses the two outcomes below
for jobs it renders itself), so that the function imports only what rendering a queued job needs.
"""

from __future__ import annotations

from etikett.domain.printing import jobs, render_processes
from etikett.domain.printing.print_work import PrintWork
from etikett.settings import get_settings
from etikett.store import events, print_work
from etikett.store.jobs import JobRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import EtikettError

__all__ = ["held_event", "render_failed", "render_queued"]


def held_event(uow: UnitOfWork, job: JobRecord) -> None:
    """A queued job's `print.held` event (its Runner is offline), in the job's transaction."""
    event = jobs.outcome_event(job, "held", "runner_offline")
    if event is not None:
        events.add(uow, event)


def render_failed(job: JobRecord, error: EtikettError) -> None:
    """The job fails; its `print.failed` event is written in the same transaction."""
    jobs.fail(job, "render_failed", f"Rendering failed: {error.detail}")


def render_queued(job_id: str) -> None:
    """The print-render function's work for one message; a job already past rendering (a
    redelivered message) is left alone, so its labels are never queued twice."""
    record = jobs.load(job_id)
    if record.status != "rendering":
        return
    work = PrintWork.model_validate_json(print_work.get(job_id))
    try:
        data = render_processes.encode(work, get_settings().print_render_processes, job_id)
    except EtikettError as error:
        render_failed(record, error)
        return  # the job is failed with its reason; retrying cannot help
    jobs.dispatch(record, data, on_held=held_event)
