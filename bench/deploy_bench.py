"""Deployed flows end to end, local mode: `etikett dev`, a real `etikett-runner` (default
tuning: it asks for its flows every 2 s) and the printer simulator.

    .venv/bin/python bench/deploy_bench.py [--rows 10000] [--approvals 10]

1. Folder to labels: a CSV of `--rows` rows is renamed into the Runner's watched folder (its
   arrival); measured until the simulator has received the last label (labels/s; goal >= 150).
   The flow: trigger.folder -> logic.set -> action.print of a 50 x 25 mm label (text and a
   Code 128 counter serial); the rows go as one data-stream job. The phases are printed from the
   run's and job's own timestamps: the Runner's run (read, engine, journal, print request), the
   service rendering and queueing, the Runner sending to the printer.
2. Approval to active: `--approvals` times, a new deployment of the flow to the Runner's group
   is approved; measured from sending the approval until getDeployment shows the Runner
   `active` (polled every 20 ms; p50 goal <= 3 s). Each approval waits a random 0-2 s first,
   so it falls at any moment of the Runner's cycle.

Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

PASSWORD = "bench password 1"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def main() -> int:
    import httpx
    from e2e.runners import RunnerProcess, eventually, start_enrolled
    from etikett_runner.printer_sim import PrinterSimulator

    from support.server import DevServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--approvals", type=int, default=10)
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="etikett-deploy-bench-"))
    server = DevServer(work / "home")
    server.start()
    runner = RunnerProcess(work / "runner", work / "runner.log")
    simulator = PrinterSimulator(port=0, dpi=203, out_dir=None, keep=50)
    simulator.start()
    inbox = work / "data" / "inbox"
    inbox.mkdir(parents=True)
    try:
        api = httpx.Client(base_url=f"{server.url}/api/v1", timeout=120, trust_env=False)
        token = api.post("/auth/setup", json={"username": "bench", "password": PASSWORD}).json()[
            "token"
        ]
        api.headers["Authorization"] = f"Bearer {token}"
        group = start_enrolled(runner, server, api, "bench", "--data-dir", str(work / "data"))
        runner_id = eventually(lambda: runner.enrolled_as, 30)
        eventually(lambda: api.get(f"/runners/{runner_id}").json()["status"] == "online", 30)
        printer = api.post(
            "/printers",
            json={
                "name": "sim",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        ).json()
        api.post("/counters", json={"name": "serial", "format": "00000000"})
        label = api.post(
            "/labels/from-dimensions", json={"name": "small", "width_mm": 50, "height_mm": 25}
        ).json()
        api.patch(
            f"/labels/{label['id']}/document",
            json={
                "operations": [
                    {
                        "op": "add",
                        "path": "/variables/-",
                        "value": {"name": "name", "type": "string"},
                    },
                    {
                        "op": "add",
                        "path": "/objects/-",
                        "value": {
                            "id": "t",
                            "type": "text",
                            "x_mm": 2,
                            "y_mm": 2,
                            "expression": "name",
                        },
                    },
                    {
                        "op": "add",
                        "path": "/objects/-",
                        "value": {
                            "id": "b",
                            "type": "barcode",
                            "symbology": "code128",
                            "x_mm": 2,
                            "y_mm": 8,
                            "height_mm": 10,
                            "expression": "counters.serial",
                        },
                    },
                ]
            },
        )
        api.post(f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"})
        flow = api.post(
            "/flows",
            json={
                "name": "inbox",
                "document": {
                    "nodes": [
                        {"id": "in", "type": "trigger.folder", "path": "inbox", "wires": ["s"]},
                        {
                            "id": "s",
                            "type": "logic.set",
                            "values": {"name": "'Nr. ' + record.nr"},
                            "wires": ["p"],
                        },
                        {
                            "id": "p",
                            "type": "action.print",
                            "label": label["id"],
                            "printer": "main",
                            "variables": {"name": "record.name"},
                        },
                    ]
                },
            },
        ).json()

        def deploy_and_approve() -> tuple[str, float]:
            created = api.post(
                "/deployments",
                json={
                    "flow_id": flow["id"],
                    "version": 1,
                    "stages": [{"group_ids": [group["id"]]}],
                    "printers": {"main": printer["id"]},
                },
            ).json()
            time.sleep(random.uniform(0, 2))  # any moment of the Runner's 2 s cycle
            started = time.perf_counter()
            approved = api.post(f"/deployments/{created['id']}/approval", json={"stage": 0})
            assert approved.status_code == 200, approved.text

            def active() -> bool:
                view = api.get(f"/deployments/{created['id']}").json()
                runners = view["stages"][0]["runners"]
                return any(r["runner_id"] == runner_id and r["status"] == "active" for r in runners)

            eventually(active, 60, 0.02)
            return created["id"], time.perf_counter() - started

        deploy_and_approve()  # the first: warm-up
        delays = [deploy_and_approve()[1] for _ in range(arguments.approvals)]

        rows = "".join(f"{i}\n" for i in range(arguments.rows))
        aside = work / "data" / "bench.csv"
        aside.write_text("nr\n" + rows)
        before = simulator.engine.printed_total
        arrived = time.time()
        started = time.perf_counter()
        aside.rename(inbox / "bench.csv")
        eventually(lambda: simulator.engine.printed_total - before >= arguments.rows, 1200, 0.02)
        elapsed = time.perf_counter() - started
        run = eventually(
            lambda: next(
                (
                    r
                    for r in api.get(f"/flows/{flow['id']}/runs").json()["items"]
                    if r["trigger"]["source"] == "bench.csv"
                ),
                None,
            ),
            60,
            0.2,
        )
        job = api.get(f"/jobs/{run['job_ids'][0]}").json()
        claimed = next((stamp(m["at"]) for m in job["messages"] if "Claimed" in m["text"]), None)
        last = simulator.printed[-1].received_at.timestamp()
    finally:
        if runner.process is not None and runner.running:
            runner.stop()
        simulator.stop()
        server.stop()

    rate = arguments.rows / elapsed
    print(
        f"{arguments.rows}-row CSV into a watched folder -> labels at the simulator "
        f"(50 x 25 mm, text + Code 128 serial, one data-stream job): {elapsed:.1f} s = "
        f"{rate:.0f} labels/s   goal >= 150: {'PASS' if rate >= 150 else 'FAIL'}"
    )
    print(
        f"  phases: file arrival -> run started on the Runner "
        f"{stamp(run['started_at']) - arrived:.1f} s; "
        f"-> job created (print request accepted) {stamp(job['created_at']) - arrived:.1f} s; "
        + (f"-> job claimed by the Runner {claimed - arrived:.1f} s; " if claimed else "")
        + f"-> last label at the printer {last - arrived:.1f} s"
    )
    p50 = statistics.median(delays)
    print(
        f"stage approval -> Runner active (n={len(delays)}, flows asked for every 2 s): "
        f"p50 {p50:.2f} s  p90 {percentile(delays, 0.9):.2f} s  max {max(delays):.2f} s   "
        f"goal p50 <= 3 s: {'PASS' if p50 <= 3 else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
