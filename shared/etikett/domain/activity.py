"""The service's background events as one log line each (a job claimed, a job's outcome, a flow
run recorded): what a person watching `etikett dev` wants to see happen, and CloudWatch on AWS."""

import logging

log = logging.getLogger("etikett.activity")


def job_claimed(job_id: str, kind: str, runner_id: str, delivery: int) -> None:
    again = f", delivery {delivery}" if delivery > 1 else ""
    log.info(
        "job %s (%s) claimed by Runner %s%s",
        job_id,
        kind,
        runner_id,
        again,
        extra={"event": "job.claimed", "job_id": job_id, "runner_id": runner_id},
    )


def job_outcome(job_id: str, status: str, reason: str | None, runner_id: str) -> None:
    why = f" ({reason})" if reason else ""
    log.info(
        "job %s %s%s",
        job_id,
        status,
        why,
        extra={"event": "job.status", "job_id": job_id, "runner_id": runner_id}
        | {"outcome": status, "reason": reason},
    )


def flow_run(run_id: str, flow_id: str, outcome: str, records: int, runner_id: str | None) -> None:
    log.info(
        "flow run %s of %s: %s, %d record(s)%s",
        run_id,
        flow_id,
        outcome,
        records,
        f" on Runner {runner_id}" if runner_id else "",
        extra={"event": "flow.run", "run_id": run_id, "flow_id": flow_id}
        | {"outcome": outcome, "runner_id": runner_id},
    )


def progress(what: str, done: int, total: int) -> None:
    """A long operation's progress: `job job_…: rendering 2000 of 10000`."""
    log.info(
        "%s %d of %d",
        what,
        done,
        total,
        extra={"event": "progress"} | {"outcome": f"{done}/{total}"},
    )
