"""An upload of offline prints (postRunnerOfflinePrints): each print answered on its own —
`already` if its job exists, `refused` if a check fails, else archived — with the archived
ones written a few prints to a transaction (a print of one record is four writes), falling
back to one print a transaction when one of them turns out to exist (a concurrent upload)."""

import logging

from etikett.domain.actors import Caller, Invocation
from etikett.domain.offline_sync.archiving import Archived, audit_refusal, build, commit, job_id_of
from etikett.domain.offline_sync.checks import Reads, Refusal, check
from etikett.domain.offline_sync.models import (
    OfflinePrintIn,
    OfflinePrintsAnswer,
    OfflinePrintsUpload,
    PrintSynced,
)
from etikett.store import jobs
from etikett.store.conditions import ConditionName
from etikett.store.jobs import JobRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import MAX_WRITES, ConditionFailed

log = logging.getLogger(__name__)

OPERATION = "postRunnerOfflinePrints"
Group = list[tuple[OfflinePrintIn, Archived]]


def sync(runner: RunnerRecord, upload: OfflinePrintsUpload) -> OfflinePrintsAnswer:
    invocation = Invocation(
        Caller(actor="service", subject=f"runner:{runner.name}", roles=frozenset({"operator"})),
        OPERATION,
    )
    reads = Reads(runner, {job_id_of(p.id) for p in upload.prints})
    answers: dict[str, PrintSynced] = {}
    accepted: Group = []
    for taken in upload.prints:
        try:
            earlier = _earlier(reads, taken, reads.jobs.get(job_id_of(taken.id)))
            if earlier is not None:
                answers[taken.id] = earlier
                continue
            flag, printer_name = check(reads, taken)
        except Refusal as refusal:
            answers[taken.id] = _refused(invocation, taken, refusal)
            continue
        accepted.append((taken, build(invocation, runner, taken, flag, printer_name)))
    groups = transactions(accepted)
    for group, committed in zip(groups, commit_all(groups), strict=True):
        if not committed:
            # One of them exists now (a concurrent upload), or the transaction met another:
            # one print a transaction, to find which.
            for taken, archived in group:
                answers[taken.id] = _alone(invocation, reads, taken, archived)
            continue
        for taken, archived in group:
            answers[taken.id] = _accepted(taken, archived)
    return OfflinePrintsAnswer(prints=[answers[p.id] for p in upload.prints])


def commit_all(groups: list[Group]) -> list[bool]:
    """Each group's transaction, one after another (two at a time measured no faster locally,
    bench/README.md): whether it committed (False: a condition failed, nothing of it was
    written)."""
    return [_committed(group) for group in groups]


def _committed(group: Group) -> bool:
    try:
        commit([archived for _, archived in group])
    except ConditionFailed:
        return False
    return True


def transactions(accepted: Group) -> list[Group]:
    """Consecutive prints whose writes fit one transaction; a print of many records alone."""
    groups: list[Group] = []
    writes = MAX_WRITES
    for item in accepted:
        size = item[1].writes
        if not size or writes + size > MAX_WRITES:
            groups.append([])
            writes = 0
        groups[-1].append(item)
        writes = MAX_WRITES if not size else writes + size
    return groups


def _alone(
    invocation: Invocation, reads: Reads, taken: OfflinePrintIn, archived: Archived
) -> PrintSynced:
    try:
        commit([archived])
    except ConditionFailed as failed:
        if failed.name != ConditionName.JOB_ABSENT:
            raise
        try:
            earlier = _earlier(reads, taken, jobs.get(archived.job.id))
        except Refusal as refusal:
            return _refused(invocation, taken, refusal)
        if earlier is None:  # gone again: cannot be, but never answer what did not happen
            return _refused(invocation, taken, Refusal("id_conflict", "Try again."))
        return earlier
    return _accepted(taken, archived)


def _accepted(taken: OfflinePrintIn, archived: Archived) -> PrintSynced:
    flag = archived.job.payload.get("flag")
    return PrintSynced(id=taken.id, result="accepted", job_id=archived.job.id, flag=flag)


def _earlier(reads: Reads, taken: OfflinePrintIn, record: JobRecord | None) -> PrintSynced | None:
    """The answer for a print archived before, whose job is `record` (None: it was not)."""
    if record is None:
        return None
    if record.runner_id != reads.runner.id or record.payload.get("print_id") != taken.id:
        raise Refusal("id_conflict", f"The job id {record.id} is another job's.")
    flag = record.payload.get("flag")
    return PrintSynced(id=taken.id, result="already", job_id=record.id, flag=flag)


def _refused(invocation: Invocation, taken: OfflinePrintIn, refusal: Refusal) -> PrintSynced:
    audit_refusal(invocation, taken, refusal)
    log.warning("offline print %s refused: %s", taken.id, refusal.reason)
    return PrintSynced(id=taken.id, result="refused", reason=refusal.reason, detail=refusal.detail)
