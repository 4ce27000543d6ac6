"""Claims: a Runner long-polls its queue (or hands in what it received there itself) and gets
its jobs with their bytes; a job already finished or cancelled is dropped here, so a redelivery
never reaches a printer twice from this side. A Runner process that just started releases the
claims an earlier process of it may never have received."""

import base64
import contextlib
from datetime import datetime, timedelta
from typing import Any

from etikett import clock
from etikett.domain import activity
from etikett.domain.agent.admission import removed, seen, still_admitted
from etikett.domain.agent.runner_messages import Claimed, ClaimedJob, ClaimRequest, Released
from etikett.domain.printing import jobs
from etikett.settings import get_settings
from etikett.store import jobs as job_store
from etikett.store import runner_queues
from etikett.store import runners as runner_store
from etikett.store.conditions import ConditionName
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, NotFound, ProblemCode

INLINE_DATA_BYTES = 1_000_000  # larger job data is fetched from S3 (responses stop at 6 MB)


def claim(runner: RunnerRecord, request: ClaimRequest) -> Claimed:
    """Long-poll the Runner's queue. A job already finished or cancelled is dropped from the
    queue here, so a redelivery never reaches a printer twice from this side."""
    if not runner.queue_url:
        return Claimed(jobs=[])
    began = clock.now()
    if _seen_long_ago(runner, began):
        seen(runner, last_seen_at=began)
    try:
        received = runner_queues.receive(runner.queue_url, request.wait_seconds, request.max_jobs)
    except runner_queues.QueueGone:
        raise removed() from None  # removed while this poll waited: its queue went with it
    return claim_each(runner, began, received)


def claim_each(
    runner: RunnerRecord, began: datetime, received: list[runner_queues.Received]
) -> Claimed:
    """Claim received messages for the Runner process whose wait began at `began` (from the
    channel's long poll, or from the Runner's own poll: runner_queue_access)."""
    assert runner.queue_url is not None
    claimed: list[ClaimedJob] = []
    for item in received:
        try:
            job = _claim_as_queued(runner, began, item) or _claim_one(
                runner, began, item.job_id, item.receipt, item.delivery, item.data_base64
            )
        except _Outlived:
            # The process that asked is gone (a newer one started meanwhile): nobody would read
            # this answer, so the jobs go back to the queue for the new process at once. (Or
            # the certificate was revoked or the Runner removed since it was admitted: refused.)
            for each in received:
                runner_queues.release(runner.queue_url, each.receipt)
            still_admitted(runner)
            return Claimed(jobs=[])
        except Exception:
            # The Runner will hear of none of this poll's claims (e.g. DynamoDB throttled an
            # update beyond the retries): they go back to the queue now, not after the
            # visibility timeout. The Runner checks a job it gets again against its journal.
            for each in received:
                with contextlib.suppress(Exception):
                    runner_queues.release(runner.queue_url, each.receipt)
            raise
        if job is not None:
            claimed.append(job)
    return Claimed(jobs=claimed)


def _claim_as_queued(
    runner: RunnerRecord, began: datetime, item: runner_queues.Received
) -> ClaimedJob | None:
    """A first delivery whose message carries the job's kind and payload as queued: claimed in
    one conditional write, without reading the job first (a claim is on every print's path).
    None when the job is not as queued (held, cancelled, another Runner's, gone) or the
    message does not carry it: `_claim_one` reads the job and decides."""
    if item.delivery != 1 or item.kind is None or item.payload is None:
        return None
    now = clock.now()
    changes: dict[str, Any] = {
        "attempts": 1,
        "receipt": item.receipt,
        "receipt_at": now,
        "status": "running",
        "updated_at": now,
    }
    refusals = {
        ConditionName.RUNNER_OUTLIVED: _Outlived(),
        ConditionName.JOB_QUEUED: _NotAsQueued(),
    }
    try:
        with UnitOfWork(errors=refusals) as uow:
            _check_claimant(uow, runner, began)
            job_store.update(
                uow,
                item.job_id,
                changes,
                messages=[jobs.message("info", "Claimed by the Runner.")],
                status_in={"queued"},
                runner_id=runner.id,
                name=ConditionName.JOB_QUEUED,
            )
    except _NotAsQueued:
        return None
    activity.job_claimed(item.job_id, item.kind, runner.id, 1)
    return _handed_out(item.job_id, item.kind, item.payload, item.receipt, 1, item.data_base64)


class _NotAsQueued(Conflict):
    """The job is no longer as its message says (queued for this Runner)."""

    def __init__(self) -> None:
        super().__init__("The job is not queued.", ProblemCode.RESOURCE_CONFLICT)


def _claim_one(
    runner: RunnerRecord,
    began: datetime,
    job_id: str,
    receipt: str,
    delivery: int,
    carried: str | None,
) -> ClaimedJob | None:
    """One received message as a claimed job; None when it is not to be handed out (unknown,
    another Runner's, or finished: then it leaves the queue). The claim is written only while
    the process whose poll began at `began` is the Runner's current one (else `_Outlived`)."""
    assert runner.queue_url is not None
    try:
        record = jobs.load(job_id)
    except NotFound:
        runner_queues.acknowledge(runner.queue_url, receipt)
        return None
    if record.runner_id != runner.id or jobs.is_final(record):
        runner_queues.acknowledge(runner.queue_url, receipt)
        return None
    now = clock.now()
    note = (
        "Claimed by the Runner."
        if delivery == 1
        else (f"Delivered again (delivery {delivery}); the Runner checks its journal.")
    )
    changes: dict[str, Any] = {
        "attempts": delivery,
        "receipt": receipt,
        "receipt_at": now,  # received just now: hidden for the queue's visibility timeout
        "updated_at": now,
    }
    if record.status in ("queued", "held") and record.outcome_reason == "runner_offline":
        # Back online. A print keeps its outcome (held, runner_offline) until the Runner
        # reports the next one: what was announced stays what the archive shows.
        changes["status"] = "running"
        if record.outcome is None:
            changes["outcome_reason"] = None
    elif record.status == "queued":
        changes["status"] = "running"
    with UnitOfWork(errors={ConditionName.RUNNER_OUTLIVED: _Outlived()}) as uow:
        _check_claimant(uow, runner, began)
        job_store.update(uow, record, changes, messages=[jobs.message("info", note)])
    activity.job_claimed(job_id, record.kind, runner.id, delivery)
    return _handed_out(job_id, record.kind, record.payload, receipt, delivery, carried)


def _check_claimant(uow: UnitOfWork, runner: RunnerRecord, began: datetime) -> None:
    """In `uow`: the claim is made for the Runner's current process (its poll began at
    `began`), and the Runner is still active with the certificate it was admitted by (which may
    have been admitted moments ago without a read: admission.identify)."""
    runner_store.check_process_since(
        uow,
        runner.id,
        began,
        serial=runner.certificate_serial,
        name=ConditionName.RUNNER_OUTLIVED,
    )


def _handed_out(
    job_id: str,
    kind: str,
    payload: dict[str, Any],
    receipt: str,
    delivery: int,
    carried: str | None,
) -> ClaimedJob:
    """The claimed job as the Runner gets it. The bytes: carried by the message, or in S3 (in
    the answer up to INLINE_DATA_BYTES, else as a URL for the Runner to fetch)."""
    key = payload.get("data_key")
    small = isinstance(key, str) and int(payload.get("data_bytes", 0)) <= (INLINE_DATA_BYTES)
    if carried is None and small and isinstance(key, str):
        carried = base64.b64encode(job_store.load_data(key)).decode()
    return ClaimedJob(
        job_id=job_id,
        kind=kind,
        receipt=receipt,
        delivery=delivery,
        payload={k: v for k, v in payload.items() if k != "data_key"},
        data_base64=carried,
        data_url=job_store.data_url(key) if isinstance(key, str) and not small else None,
    )


RELEASE_LOOKBACK = 200  # the Runner's newest jobs looked at


class _Outlived(Conflict):
    """A newer process of the Runner started while this long poll waited."""

    def __init__(self) -> None:
        super().__init__(
            "A newer process of this Runner started meanwhile.", ProblemCode.RESOURCE_CONFLICT
        )


SEEN_WITHIN = timedelta(seconds=5)


def _seen_long_ago(runner: RunnerRecord, now: datetime) -> bool:
    """Whether a long poll should record the Runner as seen: not when a request of it did so
    moments ago (back-to-back polls would write it each time; its status needs much less)."""
    offline_after = timedelta(seconds=get_settings().runner_offline_seconds)
    within = min(SEEN_WITHIN, offline_after / 4)
    return runner.last_seen_at is None or now - runner.last_seen_at >= within


def release(runner: RunnerRecord) -> Released:
    """A Runner process that just started: claims an earlier process of it made may never have
    reached it (it died during the long poll), and would stay invisible for the queue's
    visibility timeout. Every unfinished job's latest claim becomes claimable again now, and a
    long poll of the earlier process still waiting hands back what it receives later (see
    `claim`). The Runner checks each delivery against its journal: nothing is sent twice."""
    seen(runner, process_started_at=clock.now())
    if not runner.queue_url:
        return Released(job_ids=[])
    released = []
    for record in job_store.newest_of_runner(runner.id, RELEASE_LOOKBACK):
        if record.receipt and not jobs.is_final(record):
            runner_queues.release(runner.queue_url, record.receipt)
            released.append(record.id)
    return Released(job_ids=released)
