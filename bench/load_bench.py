"""Load through the local gateway: concurrent clients printing and previewing, local mode
(`etikett dev`, a real `etikett-runner`, the printer simulator), all on loopback.

    .venv/bin/python bench/load_bench.py [--clients 20] [--seconds 60]

Each client has its own connection and token (operators: people's sessions and service tokens)
and alternates `POST /print` (one label of a released 50 × 25 mm label: a text and a Code 128
of a counter) and `POST /labels/{id}/preview` of the same label. Afterwards every print job must
end `confirmed`, and the printer simulator must have printed exactly one label per accepted
print: its own count, not the service's records. Prints the requests, errors, throughput and
p50/p90/p99/max per kind; exit status 1 on any error, lost or doubled label.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def main() -> int:
    from e2e.prints import released_label
    from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
    from etikett_runner.printer_sim import PrinterSimulator

    from support.client import PASSWORD, Api
    from support.load import final_jobs, run_load
    from support.server import DevServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="etikett-load-bench-"))
    server = DevServer(work / "home")
    server.start()
    runner = RunnerProcess(work / "runner", work / "runner.log")
    simulator = PrinterSimulator(port=0, dpi=203, out_dir=None, keep=0)
    simulator.start()
    try:
        anonymous = Api(server.url)
        setup = anonymous.post("/auth/setup", json={"username": "bench", "password": PASSWORD})
        admin = anonymous.as_token(setup.json()["token"])
        start_enrolled(runner, server, admin, "load", *TUNING)
        runner_id = eventually(
            lambda: [
                r["id"] for r in admin.get("/runners").json()["items"] if r["status"] == "online"
            ],
            30,
        )[0]
        created = admin.post(
            "/printers",
            json={
                "name": "sim",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        assert created.status_code == 201, created.text
        assert admin.post("/counters", json={"name": "load_serial"}).status_code == 201
        label = released_label(admin, "load_serial")
        tokens = [
            admin.user_session(["operator"])[1].token or "" if i % 2 else
            admin.service_token("operator")["token"]
            for i in range(arguments.clients)
        ]  # fmt: skip
        before, odometer = simulator.engine.printed_total, simulator.odometer
        outcome = run_load(
            server.url,
            tokens,
            label["id"],
            "sim",
            clients=arguments.clients,
            seconds=arguments.seconds,
        )
        drained = time.monotonic()
        jobs = final_jobs(lambda job: admin.get(f"/jobs/{job}").json(), outcome.job_ids)
        confirmed = sum(job.get("status") == "confirmed" for job in jobs.values())
        with contextlib.suppress(TimeoutError):  # then the counts below tell
            simulator.wait_printed(before + len(outcome.job_ids), timeout=60)
        time.sleep(1.0)  # a label printed twice would arrive now
        drained = time.monotonic() - drained
        printed = simulator.engine.printed_total - before
        odometer = simulator.odometer - odometer
    finally:
        if runner.running:
            runner.stop()
        simulator.stop()
        server.stop()

    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"load_bench {now}, {platform.node()}, {arguments.clients} clients for "
        f"{arguments.seconds:.0f} s through the local gateway"
    )
    print(
        f"  requests {outcome.requests} in {outcome.seconds:.1f} s "
        f"({outcome.requests / outcome.seconds:.1f}/s), errors {sum(outcome.errors.values())}"
    )
    for kind in ("print", "preview"):
        count = len(outcome.latencies[kind])
        print(
            f"  {kind:8} n={count:5}  p50 {outcome.percentile(kind, 0.5) * 1000:7.0f} ms  "
            f"p90 {outcome.percentile(kind, 0.9) * 1000:7.0f} ms  "
            f"p99 {outcome.percentile(kind, 0.99) * 1000:7.0f} ms  "
            f"max {max(outcome.latencies[kind], default=0) * 1000:7.0f} ms"
        )
    print(
        f"  prints accepted {len(outcome.job_ids)}, jobs confirmed {confirmed}, labels at the "
        f"simulator {printed} (odometer +{odometer}); checked {drained:.0f} s after the load "
        "(each job polled)"
    )
    for error, count in outcome.errors.most_common(10):
        print(f"  error x{count}: {error}")
    ok = (
        not outcome.errors
        and confirmed == len(outcome.job_ids)
        and printed == odometer == len(outcome.job_ids)
    )
    print("  verdict:", "PASS (0 errors, 0 lost, 0 twice)" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
