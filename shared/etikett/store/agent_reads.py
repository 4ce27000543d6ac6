"""What a Runner's report needs first, in one round trip (one consistent read of both items):
the Runner its certificate names and the job it reports on."""

from __future__ import annotations

from etikett.store.base import found, reads
from etikett.store.jobs import JobRecord, _JobItem
from etikett.store.jobs import _record as job_of
from etikett.store.runners import RUNNER_SK, RunnerRecord, _RunnerItem
from etikett.store.runners import _runner as runner_of


def runner_with_job(runner_id: str, job_id: str) -> tuple[RunnerRecord | None, JobRecord | None]:
    """The Runner and the job (each None if absent); both ids must be well-formed keys."""
    with reads() as batch:
        runner = batch.get(_RunnerItem, runner_id, RUNNER_SK)
        job = batch.get(_JobItem, job_id)
    runner_item, job_item = found(runner), found(job)
    return (
        runner_of(runner_item) if runner_item is not None else None,
        job_of(job_item) if job_item is not None else None,
    )
