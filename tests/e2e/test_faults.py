"""Faults, end to end (`etikett dev`, a real `etikett-runner`, the printer simulator): SQS
delivering a claimed job again, the printer vanishing mid-job (network and power), the service
killed mid-print, and DynamoDB throttling. Each print carries labels with distinct serials (a
Code 128 of a counter); what was printed is read back from the simulator's labels and odometer,
never from the service's records. In every case: no label twice, no job lost, every job ends in
a stated outcome.

A Runner killed mid-job and mid-file are in test_runner.py and test_deployments.py.
`make fuzz` repeats this module (ETIKETT_FAULT_ROUNDS)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from etikett_runner.printer_sim import PrinterSimulator

from e2e.prints import FINAL, PrintSite, printed_serials, wait_final
from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.client import Api, unique
from support.load import final_jobs
from support.server import DevServer

ROUNDS = int(os.environ.get("ETIKETT_FAULT_ROUNDS", "1"))
# A print's labels must show on the printer's counter within 3 s (+2 s per label), so that a
# job whose labels were lost at the printer ends in seconds here, not in the default's minute.
CONFIRM = ["--confirm-seconds", "3"]


@pytest.fixture(scope="module")
def print_site(
    server: DevServer, admin: Api, simulator: PrinterSimulator, workdir: Path
) -> Iterator[PrintSite]:
    """As conftest's, with a Runner that gives up confirming sooner (CONFIRM)."""
    process = RunnerProcess(workdir / "runner", workdir / "runner.log")
    start_enrolled(process, server, admin, "Faults", *TUNING, *CONFIRM)
    try:
        runner_id = eventually(lambda: process.enrolled_as, 30)
        eventually(lambda: admin.get(f"/runners/{runner_id}").json()["status"] == "online", 30)
        created = admin.post(
            "/printers",
            json={
                "name": "Zebra Fehler",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        assert created.status_code == 201, created.text
        yield PrintSite("Zebra Fehler", runner_id, process)
    finally:
        process.stop()


def ended(api: Api, job_id: str, timeout: float = 60) -> dict[str, Any]:
    """The job once it has ended: a final status, or `sent` with the Runner's last word (the
    printer's counter never confirmed the labels; they may not have printed)."""

    def probe() -> dict[str, Any] | None:
        job = api.get(f"/jobs/{job_id}").json()
        done = job["status"] in FINAL or (job["status"] == "sent" and job.get("finished_at"))
        return job if done else None

    return eventually(probe, timeout, 0.2)


class Printed:
    """What the printer printed from now on, by its own count."""

    def __init__(self, simulator: PrinterSimulator) -> None:
        self.simulator = simulator
        self.labels, self.odometer = simulator.engine.printed_total, simulator.odometer

    def settle(self, expected: int, timeout: float = 60) -> list[str]:
        """Wait for `expected` more labels, then a second for any that would come twice; the
        serials of all labels printed since."""
        with contextlib.suppress(TimeoutError):  # then the count below tells
            self.simulator.wait_printed(self.labels + expected, timeout)
        time.sleep(1.0)
        count = self.simulator.engine.printed_total - self.labels
        assert self.simulator.odometer - self.odometer == count  # one copy per label here
        return printed_serials(self.simulator, count)


def print_records(operator: Api, label: dict[str, Any], printer: str, n: int, **extra: Any) -> str:
    """One job of `n` labels (one record each, each its own serial); its id."""
    accepted = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": printer,
            "data": [{"name": f"r{i}"} for i in range(n)],
            **extra,
        },
    )
    assert accepted.status_code == 202, accepted.text
    return str(accepted.json()["job_id"])


def aws(server: DevServer, service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=server.aws_endpoint(),
        region_name="eu-central-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


@pytest.fixture
def slow(simulator: PrinterSimulator) -> Iterator[PrinterSimulator]:
    """Half a second per label, so that faults can strike mid-job."""
    simulator.set_condition(slow_seconds=0.5)
    yield simulator
    simulator.set_condition(slow_seconds=0, unreachable=False, paused=False)
    if not simulator.running:
        simulator.start()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_sqs_delivering_a_claimed_job_again_prints_it_once(
    server: DevServer,
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    slow: PrinterSimulator,
    round_: int,
) -> None:
    """While the Runner prints, the job's claim becomes visible again on its queue (as when a
    visibility timeout runs out) and a duplicate message arrives (SQS delivers at least once)."""
    printed = Printed(slow)
    job_id = print_records(operator, label, print_site.printer, 4)
    eventually(lambda: "sent" in print_site.process.journal_states(job_id), 20, 0.01)
    sqs = aws(server, "sqs")
    (queue,) = [
        url
        for url in sqs.list_queues()["QueueUrls"]
        if url.endswith(f"-{print_site.runner_id.lower()}")
    ]
    item = aws(server, "dynamodb").get_item(
        TableName="etikett-local-JobsTable", Key={"id": {"S": job_id}}
    )["Item"]
    sqs.change_message_visibility(
        QueueUrl=queue, ReceiptHandle=item["receipt"]["S"], VisibilityTimeout=0
    )
    sqs.send_message(QueueUrl=queue, MessageBody=f'{{"job_id": "{job_id}"}}')
    job = wait_final(operator, job_id)
    assert job["status"] == "confirmed", job
    got = printed.settle(4)
    assert len(got) == len(set(got)) == 4 and "?" not in got, got
    texts = "\n".join(m["text"] for m in job["messages"])
    assert "Delivered again" in texts or "Claimed by the Runner." in texts


@pytest.mark.parametrize("round_", range(ROUNDS))
@pytest.mark.parametrize("how", ["network", "power"])
def test_the_printer_vanishing_mid_job_prints_no_label_twice(
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    slow: PrinterSimulator,
    how: str,
    round_: int,
) -> None:
    """After the first of six labels, the printer drops off the network (its buffer keeps
    printing) or loses power (its buffer is lost) for two seconds."""
    printed = Printed(slow)
    job_id = print_records(operator, label, print_site.printer, 6)
    slow.wait_printed(printed.labels + 1, 20)
    if how == "network":
        slow.set_condition(unreachable=True)
        time.sleep(2)
        slow.set_condition(unreachable=False)
    else:
        slow.stop()
        time.sleep(2)
        slow.start()
    job = ended(operator, job_id, 90)
    got = printed.settle(6 if job["status"] == "confirmed" else 0, 30)
    assert len(got) == len(set(got)) and "?" not in got, got  # no label twice
    if job["status"] == "confirmed":
        assert len(got) == 6, (got, job)
    else:  # stated: what reached paper is at most what was asked for, and the job says so
        assert len(got) < 6, (got, job)
        last = job["messages"][-1]
        assert job["status"] in ("sent", "failed") and last["level"] in ("warning", "error")
        assert "may not have printed" in last["text"] or job["outcome_reason"], job


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_the_service_killed_mid_print_loses_nothing(
    server: DevServer,
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    slow: PrinterSimulator,
    round_: int,
) -> None:
    """SIGKILL of `etikett dev` while the Runner prints a job of four labels; the job ends once
    the service is back, and the printer has every label once."""
    printed = Printed(slow)
    job_id = print_records(operator, label, print_site.printer, 4)
    eventually(lambda: operator.get(f"/jobs/{job_id}").json()["status"] == "sent", 20, 0.02)
    sent_seen = time.time()
    state = server.home / "aws-state.pickle"
    # What a crash of local mode can lose is the last second of moto's state
    # (on AWS, DynamoDB keeps it): kill once the snapshot holds the job as sent.
    eventually(lambda: state.stat().st_mtime > sent_seen, 60, 0.05)
    server.kill()
    try:
        slow.wait_printed(printed.labels + 4, 30)  # the Runner goes on without the service
    finally:
        server.start()
    job = wait_final(operator, job_id, 60)
    assert job["status"] == "confirmed", job
    got = printed.settle(4)
    assert len(got) == len(set(got)) == 4 and "?" not in got, got


def test_dynamodb_throttling_loses_no_print_and_prints_none_twice(
    server: DevServer,
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
) -> None:
    """moto's server throttles every fifth DynamoDB request (the SDK retries them), and while
    one print is sent, every write transaction (beyond the SDK's retries: 503 `service.busy`).
    A client that repeats a refused print with its idempotency key gets each print once."""
    faults = httpx.Client(base_url=f"{server.aws_endpoint()}/moto-api/etikett/faults")
    every_fifth = {"service": "dynamodb", "every": 5}
    all_writes = {"service": "dynamodb", "operations": ["TransactWriteItems"]}
    printed = Printed(simulator)
    prints, busy, jobs = 12, 0, []
    faults.post("", json={"rules": [every_fifth]}).raise_for_status()
    try:
        for n in range(prints):
            body = {
                "label_id": label["id"],
                "printer": print_site.printer,
                "variables": {"name": f"t{n}"},
                "idempotency_key": unique("order"),
            }
            if n == 3:
                faults.post("", json={"rules": [all_writes, every_fifth]}).raise_for_status()
                refused = operator.post("/print", json=body)
                faults.post("", json={"rules": [every_fifth]}).raise_for_status()
                assert refused.status_code == 503, refused.text
                assert refused.json()["code"] == "service.busy" and refused.headers["retry-after"]
            for _ in range(20):
                response = operator.post("/print", json=body)
                if response.status_code != 503:
                    break
                assert response.json()["code"] == "service.busy", response.text
                busy += 1
                time.sleep(float(response.headers["retry-after"]))
            assert response.status_code == 202, response.text
            jobs.append(response.json()["job_id"])
        fired = faults.get("").json()["rules"][0]["fired"]
        finals = final_jobs(lambda job: operator.get(f"/jobs/{job}").json(), jobs, 120)
    finally:
        faults.delete("")
    assert fired > 0, fired  # the SDK retried these; `busy` counts those it could not absorb
    statuses = [job["status"] for job in finals.values()]
    assert statuses == ["confirmed"] * prints, [
        j for j in finals.values() if j["status"] != "confirmed"
    ]
    assert len(set(jobs)) == prints
    got = printed.settle(prints)
    assert len(got) == len(set(got)) == prints and "?" not in got, (got, busy)


def test_a_fault_rule_is_refused_when_it_names_no_service(server: DevServer) -> None:
    faults = httpx.Client(base_url=f"{server.aws_endpoint()}/moto-api/etikett/faults")
    refused = faults.post("", json={"rules": [{"service": "s3"}]})
    assert refused.status_code == 400 and "service" in refused.json()["error"]
    assert faults.get("").json() == {"rules": []}
