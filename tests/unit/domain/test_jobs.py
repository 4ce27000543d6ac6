"""Jobs on Runners' queues: queued or held by the Runner's state, claimed from the queue,
reported to their outcome once, cancelled only before their bytes left, ended when their Runner
is removed. Print jobs announce their outcomes (`print.*` events) with the change."""

from __future__ import annotations

import base64
import os
from datetime import timedelta
from typing import Any

import pytest

from etikett import clock
from etikett.domain.agent import claims, runner_agent, runner_messages, runner_queue_access
from etikett.domain.agent.runner_messages import ClaimReceived, ClaimRequest, JobReport
from etikett.domain.printers import printers
from etikett.domain.printing import jobs, raw_jobs
from etikett.domain.runners import runners
from etikett.store import runner_queues
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import build
from unit.domain.callers import human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _job(runner: RunnerRecord, kind: str = "raw", data: bytes = b"^XA^XZ") -> jobs.Job:
    return jobs.submit(
        human("postRunnerJob", "operator"),
        runner.id,
        kind,
        {"printer": {"name": "p"}, "label_id": "lbl_x", "labels": 1, "copies": 1},
        data=data,
    )


def _claim(runner: RunnerRecord) -> list[runner_messages.ClaimedJob]:
    return claims.claim(runner, ClaimRequest(wait_seconds=0, max_jobs=10)).jobs


def _report(runner: RunnerRecord, job_id: str, **fields: Any) -> jobs.Job:
    return runner_agent.report(human("postRunnerJobReport"), runner, job_id, JobReport(**fields))


def _received(aws: Aws, runner: RunnerRecord, *, keeps_hidden: bool) -> ClaimReceived:
    """The Runner's next message, received at its queue as the Runner does (hidden 20 s)."""
    assert runner.queue_url is not None
    (message,) = aws.client("sqs").receive_message(QueueUrl=runner.queue_url, VisibilityTimeout=20)[
        "Messages"
    ]
    received = {"receipt": message["ReceiptHandle"], "delivery": 1, "body": message["Body"]}
    return ClaimReceived(messages=[received], keeps_hidden=keeps_hidden)  # type: ignore[list-item]


def test_a_job_for_an_online_runner_is_queued_with_its_audit_entry() -> None:
    runner = build.runner()
    job = _job(runner)
    assert (job.status, job.outcome, job.attempts) == ("queued", None, 0)
    assert trail(job.id)[0].details == {
        "kind": "raw",
        "runner_id": runner.id,
        "printer_id": None,
    }
    assert [j.id for j in jobs.list_for_runner(runner.id, 10, None).items] == [job.id]


def test_a_job_for_an_offline_runner_is_held_and_a_print_s_outcome_says_so() -> None:
    runner = build.runner(online=False)
    raw = _job(runner)
    assert (raw.status, raw.outcome, raw.outcome_reason) == ("held", None, "runner_offline")
    printed = _job(runner, "print")
    assert (printed.status, printed.outcome) == ("held", "held")


def test_a_pending_or_missing_runner_takes_no_jobs() -> None:
    pending = build.enrolled(build.group().id, needs_approval=True)
    _refused(
        ProblemCode.RUNNER_NOT_ACTIVE,
        lambda: jobs.submit(human("x"), pending.runner_id, "raw", {}, data=b"x"),
    )
    _refused(
        ProblemCode.RUNNER_NOT_FOUND,
        lambda: jobs.submit(human("x"), "run_missing", "raw", {}, data=b"x"),
    )


def test_a_claim_hands_the_job_and_its_bytes_to_the_runner_once() -> None:
    runner = build.runner()
    job = _job(runner, data=b"^XA^FDone^FS^XZ")
    (claimed,) = _claim(runner)
    assert (claimed.job_id, claimed.delivery) == (job.id, 1)
    assert base64.b64decode(claimed.data_base64 or "") == b"^XA^FDone^FS^XZ"
    running = jobs.get(job.id)
    assert (running.status, running.attempts) == ("running", 1)
    assert running.messages[-1].text == "Claimed by the Runner."
    assert _claim(runner) == []  # invisible while claimed


def test_a_first_claim_writes_the_job_without_reading_it_unless_it_changed_since(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The queue message carries the job's kind and payload as queued: a first claim is one
    conditional write. A job that is no longer queued for this Runner (cancelled meanwhile) is
    read and dropped from the queue, as before."""
    reads: list[str] = []
    real_load = jobs.load

    def load(job_id: str) -> Any:
        reads.append(job_id)
        return real_load(job_id)

    monkeypatch.setattr(jobs, "load", load)
    runner = build.runner()
    job = _job(runner, data=b"^XA^FDcarried^FS^XZ")
    (claimed,) = _claim(runner)
    assert reads == []
    assert (claimed.job_id, claimed.kind, claimed.delivery) == (job.id, "raw", 1)
    assert claimed.payload["label_id"] == "lbl_x" and "data_key" not in claimed.payload
    assert base64.b64decode(claimed.data_base64 or "") == b"^XA^FDcarried^FS^XZ"
    running = real_load(job.id)
    assert (running.status, running.attempts, running.receipt) == ("running", 1, claimed.receipt)
    assert running.messages[-1].text == "Claimed by the Runner."

    cancelled = _job(runner)
    jobs.cancel(human("cancelJob", "operator"), cancelled.id)
    reads.clear()
    assert _claim(runner) == []
    assert reads == [cancelled.id]  # not as queued any more: read, and left the queue
    assert real_load(cancelled.id).status == "cancelled"
    claims.release(runner)  # a new process: the running job comes back, read this time
    (again,) = _claim(runner)
    assert (again.job_id, again.delivery) == (job.id, 2)
    assert reads[-1] == job.id


def test_large_bytes_wait_in_s3_and_still_reach_the_runner(aws: Aws) -> None:
    runner = build.runner()
    data = os.urandom(runner_queues.MESSAGE_DATA_BYTES + 1)
    job = _job(runner, data=data)
    keys = aws.client("s3").list_objects_v2(
        Bucket=aws.ref("AssetsBucket"), Prefix=f"jobs/{job.id}/"
    )
    assert [o["Key"] for o in keys["Contents"]] == [f"jobs/{job.id}/data"]
    (claimed,) = _claim(runner)
    assert base64.b64decode(claimed.data_base64 or "") == data
    assert "data_key" not in claimed.payload and claimed.payload["data_bytes"] == len(data)


def test_a_restarted_runner_gets_its_unfinished_claims_back() -> None:
    runner = build.runner()
    job = _job(runner)
    assert [c.job_id for c in _claim(runner)] == [job.id]
    released = claims.release(runner)
    assert released.job_ids == [job.id]
    (again,) = _claim(runner)
    assert (again.job_id, again.delivery) == (job.id, 2)
    assert jobs.get(job.id).messages[-1].text.startswith("Delivered again (delivery 2)")


def test_a_long_poll_a_newer_process_outlived_hands_its_jobs_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A poll that began before the Runner's current process started answers nobody: it writes
    no claim and its jobs are claimable again at once, not after the visibility timeout."""
    runner = build.runner()
    job = _job(runner)
    claims.release(runner)  # the newer process starts
    began = clock.now() - timedelta(seconds=1)
    monkeypatch.setattr(clock, "now", lambda: began)
    assert _claim(runner) == []  # the older process's poll, which began before it
    unclaimed = jobs.get(job.id)
    assert (unclaimed.status, unclaimed.attempts) == ("queued", 0)
    monkeypatch.undo()
    (claimed,) = _claim(runner)
    assert (claimed.job_id, claimed.delivery) == (job.id, 2)
    assert jobs.get(job.id).status == "running"


def test_a_long_poll_records_the_runner_as_seen_unless_it_was_moments_ago() -> None:
    runner = build.runner()
    assert runner.last_seen_at is not None
    _claim(runner)
    unchanged = runner_store.get_runner(runner.id)
    assert unchanged is not None and unchanged.last_seen_at == runner.last_seen_at
    a_while_ago = runner._replace(last_seen_at=runner.last_seen_at - claims.SEEN_WITHIN)
    _claim(a_while_ago)
    seen = runner_store.get_runner(runner.id)
    assert seen is not None and seen.last_seen_at is not None
    assert seen.last_seen_at > runner.last_seen_at


def test_a_report_extends_the_claims_visibility_only_when_it_was_set_a_while_ago(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A claimed job stays hidden for the queue's timeout; a report moments after the claim (the
    `sent` right after a label left) needs no queue call, a report once a quarter of it has
    passed extends it, and a report naming another receipt (an earlier delivery) always does."""
    extended: list[str] = []
    real_extend = runner_queues.extend

    def extend(queue_url: str, receipt: str) -> None:
        extended.append(receipt)
        real_extend(queue_url, receipt)  # the real queue call, counted

    monkeypatch.setattr(runner_queues, "extend", extend)
    runner = build.runner()
    job = _job(runner)
    (claimed,) = _claim(runner)
    claimed_at = jobs.load(job.id).receipt_at
    assert claimed_at is not None
    _report(runner, job.id, receipt=claimed.receipt, status="sent")
    assert extended == []
    later = claimed_at + runner_agent.EXTEND_AFTER + timedelta(seconds=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    _report(runner, job.id, receipt=claimed.receipt)  # the Runner's keeper
    assert extended == [claimed.receipt]
    assert jobs.load(job.id).receipt_at == later
    _report(runner, job.id, receipt=claimed.receipt)  # moments after that extension
    assert extended == [claimed.receipt]
    _report(runner, job.id, receipt="an-earlier-delivery's")
    assert extended == [claimed.receipt, "an-earlier-delivery's"]
    assert jobs.load(job.id).receipt_at == later  # the latest claim's extension stays the mark
    _report(runner, job.id, receipt=claimed.receipt, status="confirmed", final=True)
    assert jobs.get(job.id).status == "confirmed"
    assert _claim(runner) == []  # acknowledged: gone from the queue


def test_a_claim_of_what_the_runner_received_hides_the_job_longer_only_if_asked(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Runner whose keeper reports within the 20 s it received a job hidden for needs no
    queue call at the claim; an older Runner's claim still hides the job for the timeout."""
    extended: list[str] = []
    real_extend = runner_queues.extend

    def extend(queue_url: str, receipt: str) -> None:
        extended.append(receipt)
        real_extend(queue_url, receipt)

    monkeypatch.setattr(runner_queues, "extend", extend)
    runner = build.runner()
    assert runner.queue_url is not None
    for keeps_hidden in (True, False):
        job = _job(runner)
        claim = _received(aws, runner, keeps_hidden=keeps_hidden)
        claimed = runner_queue_access.claim_received(runner, claim)
        assert [c.job_id for c in claimed.jobs] == [job.id]
        assert extended == ([] if keeps_hidden else [claim.messages[0].receipt])


def test_a_claim_checks_the_runner_s_certificate_in_its_own_write(aws: Aws) -> None:
    """A claim of what the Runner received takes the Runner as admitted lately (no read): its
    write checks that the Runner is still active with that certificate. A certificate replaced
    or a Runner removed since is refused, and nothing is handed out."""
    runner = build.runner()
    assert runner.queue_url is not None and runner.certificate_serial
    job = _job(runner)

    def received() -> runner_messages.ClaimReceived:
        return _received(aws, runner, keeps_hidden=True)

    stale = runner._replace(certificate_serial="an-earlier-certificate")
    _refused(
        ProblemCode.RUNNER_CERTIFICATE_REVOKED,
        lambda: runner_queue_access.claim_received(stale, received()),
    )
    assert jobs.get(job.id).status == "queued"  # handed back to the queue at once
    claim = received()
    runners.remove_runner(human("deleteRunner", "admin"), runner.id)
    _refused(ProblemCode.RUNNER_REMOVED, lambda: runner_queue_access.claim_received(runner, claim))


def test_a_final_report_ends_the_job_once_and_is_audited() -> None:
    runner = build.runner()
    job = _job(runner)
    (claimed,) = _claim(runner)
    done = _report(
        runner,
        job.id,
        receipt=claimed.receipt,
        status="succeeded",
        final=True,
        messages=[{"level": "info", "text": "2 labels"}],
    )
    assert done.status == "succeeded" and done.finished_at is not None
    assert done.messages[-1].text == "2 labels"
    assert operations(job.id) == ["postRunnerJob", "postRunnerJobReport"]
    again = _report(runner, job.id, receipt=claimed.receipt, status="succeeded", final=True)
    assert again.updated_at == done.updated_at  # a repeated final report changes nothing
    error = _refused(ProblemCode.JOB_FINISHED, lambda: _report(runner, job.id, status="failed"))
    assert error.params["status"] == "succeeded"
    assert operations(job.id) == ["postRunnerJob", "postRunnerJobReport"]
    assert _claim(runner) == []  # acknowledged: never delivered again


def test_a_runner_reports_only_its_own_jobs() -> None:
    runner, other = build.runner(), build.runner()
    job = _job(runner)
    _refused(ProblemCode.JOB_OTHER_RUNNER, lambda: _report(other, job.id, status="failed"))
    assert jobs.get(job.id).status == "queued"


def test_print_outcomes_are_announced_once_each(aws: Aws) -> None:
    runner = build.runner()
    job = _job(runner, "print")
    (claimed,) = _claim(runner)
    _report(runner, job.id, receipt=claimed.receipt, status="running")
    held = _report(runner, job.id, receipt=claimed.receipt, status="held", reason="paper_out")
    assert (held.outcome, held.outcome_reason) == ("held", "paper_out")
    assert held.messages[-1].text == "Held: paper_out."
    _report(runner, job.id, receipt=claimed.receipt, status="held", reason="paper_out")
    _report(runner, job.id, receipt=claimed.receipt, status="running")
    running = jobs.get(job.id)
    assert (running.status, running.outcome) == ("running", "held")  # the outcome stays
    _report(runner, job.id, receipt=claimed.receipt, status="confirmed", final=True)
    announced = [(e.kind, e.data["reason"]) for e in aws.events_about(job.id)]
    assert announced == [("print.held", "paper_out"), ("print.confirmed", None)]


def test_a_report_held_back_on_the_runner_is_recorded_first_with_its_own_time(
    aws: Aws,
) -> None:
    runner = build.runner()
    job = _job(runner, "print")
    (claimed,) = _claim(runner)
    sent_at = clock.now()  # held back before this report was made
    done = _report(
        runner,
        job.id,
        receipt=claimed.receipt,
        status="confirmed",
        final=True,
        messages=[{"level": "info", "text": "Printed 1 label(s)."}],
        earlier=[{"status": "sent", "at": sent_at, "messages": [{"text": "Sent to p."}]}],
    )
    assert (done.status, done.outcome) == ("confirmed", "confirmed")
    texts = [m.text for m in done.messages[-2:]]
    assert texts == ["Sent to p.", "Printed 1 label(s)."]
    announced = [(e.kind, e.at) for e in aws.events_about(job.id)]
    assert [kind for kind, _ in announced] == ["print.sent", "print.confirmed"]
    assert abs(announced[0][1] - sent_at) < timedelta(milliseconds=1)
    assert announced[0][1] < announced[1][1]
    assert operations(job.id) == ["postRunnerJob", "postRunnerJobReport"]  # one change, audited


def test_a_held_back_report_s_time_stays_within_the_job_s_life(aws: Aws) -> None:
    runner = build.runner()
    job = _job(runner, "print")
    (claimed,) = _claim(runner)
    long_ago = clock.now() - timedelta(days=400)
    _report(
        runner,
        job.id,
        receipt=claimed.receipt,
        status="sent",
        earlier=[{"status": "held", "reason": "paper_out", "at": long_ago}],
    )
    held, sent = aws.events_about(job.id)
    assert (held.kind, sent.kind) == ("print.held", "print.sent")
    assert held.at < sent.at and sent.at - held.at < timedelta(seconds=30)  # clamped to the job
    with pytest.raises(ValueError):
        JobReport(earlier=[{"status": "confirmed"}])  # only non-final reports wait
    with pytest.raises(ValueError):
        JobReport(earlier=[{"status": "sent", "at": "2026-11-28T10:00:00"}])  # no zone


def test_a_job_is_cancelled_only_before_its_bytes_left(aws: Aws) -> None:
    runner = build.runner()
    waiting = _job(runner, "print")
    cancelled = jobs.cancel(human("postJobCancel", "operator", subject="olga"), waiting.id)
    assert (cancelled.status, cancelled.outcome, cancelled.outcome_reason) == (
        "cancelled",
        "failed",
        "cancelled",
    )
    assert cancelled.messages[-1].text == "Cancelled by olga."
    assert [e.kind for e in aws.events_about(waiting.id)] == ["print.failed"]
    assert jobs.cancel(human("postJobCancel"), waiting.id).status == "cancelled"
    assert operations(waiting.id) == ["postRunnerJob", "postJobCancel"]
    assert trail(waiting.id)[-1].details == {"before": "queued"}

    claimed_job = _job(runner)
    assert [c.job_id for c in _claim(runner)] == [claimed_job.id]  # the cancelled one is dropped
    error = _refused(
        ProblemCode.JOB_NOT_CANCELLABLE, lambda: jobs.cancel(human("postJobCancel"), claimed_job.id)
    )
    assert error.params["status"] == "running"
    _refused(ProblemCode.JOB_NOT_FOUND, lambda: jobs.cancel(human("x"), "job_missing"))


def test_a_cancelled_job_s_late_report_changes_nothing() -> None:
    runner = build.runner()
    job = _job(runner)
    jobs.cancel(human("postJobCancel"), job.id)
    assert _report(runner, job.id, status="succeeded", final=True).status == "cancelled"


def test_removing_a_runner_ends_its_open_jobs() -> None:
    runner = build.runner()
    open_job, done_job = _job(runner, "print"), _job(runner)
    receipts = {claimed.job_id: claimed.receipt for claimed in _claim(runner)}
    _report(runner, done_job.id, receipt=receipts[done_job.id], status="succeeded", final=True)
    runners.remove_runner(human("deleteRunner", "admin"), runner.id)
    jobs.end_open_jobs_of(runner.id)
    ended = jobs.get(open_job.id)
    assert (ended.status, ended.outcome_reason) == ("failed", "runner_removed")
    assert jobs.get(done_job.id).status == "succeeded"
    jobs.end_open_jobs_of(runner.id)  # again: nothing changes
    assert jobs.get(open_job.id).updated_at == ended.updated_at


def test_a_runner_s_jobs_page_newest_first() -> None:
    runner = build.runner()
    made = [_job(runner).id for _ in range(5)]
    first = jobs.list_for_runner(runner.id, 2, None)
    second = jobs.list_for_runner(runner.id, 2, first.next_cursor)
    third = jobs.list_for_runner(runner.id, 2, second.next_cursor)
    assert [j.id for j in first.items + second.items + third.items] == made[::-1]
    assert third.next_cursor is None
    _refused(ProblemCode.RUNNER_NOT_FOUND, lambda: jobs.list_for_runner("run_missing", 2, None))


def test_a_printer_removed_leaves_its_jobs_readable() -> None:
    runner = build.runner()
    printer = build.printer(runner.id, f"weg-{runner.id[-6:]}")
    job = raw_jobs.submit_raw(
        human("postRunnerJob"),
        runner.id,
        raw_jobs.RawJobRequest(
            printer_id=printer.id, data_base64=base64.b64encode(b"^XA^XZ").decode()
        ),
    )
    printers.delete(human("deletePrinter"), printer.id)
    assert jobs.get(job.id).printer_id == printer.id
