"""The print path end to end, local mode: `POST /print` → render → Runner queue → a real
`etikett-runner` → the printer simulator's TCP port.

    .venv/bin/python bench/print_bench.py [--singles 40] [--stream 1000]

1. Latency of single-label prints: from sending `POST /print` to the simulator having received
   and decoded the label (p50, p90, p99; budget p50 < 150 ms), twice: each print once the
   previous one has ended (its job `confirmed`: the budget's figure), and back to back (the next
   print as soon as the label is out, while the previous job's reports, events and webhooks
   still run — in local mode all in one Python process, so they share one interpreter lock).
2. Throughput of a data stream: `--stream` records in one request, from the request to the last
   label at the simulator (labels/s; budget ≥ 50).

Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    import httpx
    from e2e.runners import RunnerProcess, eventually, start_enrolled
    from etikett_runner.printer_sim import PrinterSimulator

    from support.server import DevServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--singles", type=int, default=40)
    parser.add_argument("--stream", type=int, default=1000)
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="etikett-print-bench-"))
    server = DevServer(work / "home")
    server.start()
    runner = RunnerProcess(work / "runner", work / "runner.log")
    simulator = PrinterSimulator(port=0, dpi=203, out_dir=None)
    simulator.start()
    try:
        api = httpx.Client(base_url=f"{server.url}/api/v1", timeout=60, trust_env=False)
        token = api.post("/auth/setup", json={"username": "bench", "password": PASSWORD}).json()[
            "token"
        ]
        api.headers["Authorization"] = f"Bearer {token}"
        start_enrolled(runner, server, api, "bench", "--heartbeat-seconds", "2")
        runner_id = eventually(
            lambda: [
                r["id"] for r in api.get("/runners").json()["items"] if r["status"] == "online"
            ],
            30,
        )[0]
        api.post(
            "/printers",
            json={
                "name": "sim",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        api.post("/counters", json={"name": "serial", "format": "00000000"})
        label = api.post(
            "/labels/from-vorlage", json={"vorlageId": "shipping-label", "name": "bench"}
        ).json()
        api.post(f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"})
        from etikett.catalog.vorlagen import get_vorlage, sample_values

        vorlage = get_vorlage("shipping-label")
        assert vorlage is not None
        samples = sample_values(vorlage)
        small = api.post(
            "/labels/from-dimensions", json={"name": "small", "width_mm": 50, "height_mm": 25}
        ).json()
        api.patch(
            f"/labels/{small['id']}/document",
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
        api.post(f"/labels/{small['id']}/status", json={"version": 2, "status": "approved"})

        def single_prints(wait_for_the_end: bool) -> tuple[list[float], list[float]]:
            """Request → label at the simulator, and request → answer, in ms."""
            latencies, answers = [], []
            for index in range(arguments.singles + 3):
                before = len(simulator.printed)
                started = time.perf_counter()
                response = api.post(
                    "/print", json={"label_id": label["id"], "printer": "sim", "variables": samples}
                )
                assert response.status_code == 202, response.text
                answered = time.perf_counter()
                eventually(lambda before=before: len(simulator.printed) > before, 30, 0.002)
                if index >= 3:
                    latencies.append((time.perf_counter() - started) * 1000)
                    answers.append((answered - started) * 1000)
                if wait_for_the_end:  # the Runner's reports and their events are done with
                    job = f"/jobs/{response.json()['job_id']}"
                    eventually(lambda job=job: api.get(job).json()["status"] == "confirmed", 30)
            return latencies, answers

        isolated = single_prints(wait_for_the_end=True)
        back_to_back = single_prints(wait_for_the_end=False)

        before = len(simulator.printed)
        started = time.perf_counter()
        response = api.post(
            "/print",
            json={
                "label_id": small["id"],
                "printer": "sim",
                "data": [{"name": f"Nr. {i}"} for i in range(arguments.stream)],
            },
        )
        assert response.status_code == 202, response.text
        eventually(lambda: len(simulator.printed) - before >= arguments.stream, 600, 0.05)
        elapsed = time.perf_counter() - started
    finally:
        if runner.process is not None and runner.running:
            runner.stop()
        simulator.stop()
        server.stop()

    rate = arguments.stream / elapsed
    print(
        f"POST /print of the shipping-label Vorlage (4 x 6 in @203) to the label at the "
        f"simulator, n={arguments.singles} each, ms"
    )
    for name, (latencies, answers) in (
        ("each print after the previous one ended (confirmed)", isolated),
        ("back to back (the previous print's reports and events still in flight)", back_to_back),
    ):
        p50 = statistics.median(latencies)
        verdict = (
            f"   budget p50 < 150: {'PASS' if p50 < 150 else 'FAIL'}"
            if latencies is isolated[0]
            else ""
        )
        print(f"  {name}:")
        print(
            f"    p50 {p50:.1f}  p90 {percentile(latencies, 0.9):.1f}  "
            f"p99 {percentile(latencies, 0.99):.1f}  max {max(latencies):.1f}{verdict}"
        )
        print(
            f"    of which the request until its answer: p50 {statistics.median(answers):.1f}  "
            f"p90 {percentile(answers, 0.9):.1f}"
        )
    print(
        f"{arguments.stream}-record stream (50 x 25 mm, text + Code 128 serial): "
        f"{elapsed:.1f} s from the request to the last label at the simulator = "
        f"{rate:.0f} labels/s   budget >= 50: {'PASS' if rate >= 50 else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
