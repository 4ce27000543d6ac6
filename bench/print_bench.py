"""The print path end to end, local mode: `POST /print` → render → Runner queue → a real
`etikett-runner` → the printer simulator's TCP port.

    .venv/bin/python bench/print_bench.py [--singles 40] [--stream 1000]

1. Latency of single-label prints: from sending `POST /print` to the simulator having received
   and decoded the label (p50, p90, p99), twice: each print once the previous one has ended (its
   job `confirmed`), and back to back (the next print as soon as the label is out, while the
   previous job's reports, events and webhooks still run — in local mode the reports in
   `etikett dev`'s process, the events and webhooks in its local workers' process; goal: p50 ≤ 60
   ms).
2. Throughput of a data stream: `--stream` records in one request, from the request to the last
   label at the simulator (goal: ≥ 600 labels/s).

Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

PASSWORD = "bench password 1"
GOAL_MS = 60.0  # p50, back to back
GOAL_RATE = 600  # labels/s of a 1,000-record stream (ARCHITECTURE.md's budget)
BACK_TO_BACK_LIMIT = 1.2  # p50 back to back ÷ p50 isolated
KEEP = 50  # printed labels the simulator keeps in memory


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class PrintRig:
    """`etikett dev`, a real enrolled `etikett-runner`, a printer simulator on loopback, and the
    two labels: the shipping-label Vorlage (4 x 6 in) and a small 50 x 25 mm label with a text
    and a Code 128 counter serial. `env`: more environment for `etikett dev`."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env

    def __enter__(self) -> PrintRig:
        import httpx
        from e2e.runners import RunnerProcess, eventually, start_enrolled
        from etikett_runner.printer_sim import PrinterSimulator

        from support.server import DevServer

        self.eventually = eventually
        work = Path(tempfile.mkdtemp(prefix="etikett-print-bench-"))
        self.server = DevServer(work / "home", env=self.env)
        self.server.start()
        self.runner = RunnerProcess(work / "runner", work / "runner.log")
        # It keeps the last labels only: thousands of rasters held would grow this process by
        # 80 KB a label, and its decoding (counted in the stream) would fault in fresh pages.
        self.simulator = PrinterSimulator(port=0, dpi=203, out_dir=None, keep=KEEP)
        self.simulator.start()
        try:
            self._prepare(httpx, start_enrolled)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _prepare(self, httpx: Any, start_enrolled: Any) -> None:
        api = httpx.Client(base_url=f"{self.server.url}/api/v1", timeout=60, trust_env=False)
        self.api = api
        token = api.post("/auth/setup", json={"username": "bench", "password": PASSWORD}).json()[
            "token"
        ]
        api.headers["Authorization"] = f"Bearer {token}"
        start_enrolled(self.runner, self.server, api, "bench", "--heartbeat-seconds", "2")
        runner_id = self.eventually(
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
                "uri": f"tcp://127.0.0.1:{self.simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        api.post("/counters", json={"name": "serial", "format": "00000000"})
        self.label = api.post(
            "/labels/from-vorlage", json={"vorlageId": "shipping-label", "name": "bench"}
        ).json()
        api.post(f"/labels/{self.label['id']}/status", json={"version": 1, "status": "approved"})
        from etikett.catalog.vorlagen import get_vorlage, sample_values

        vorlage = get_vorlage("shipping-label")
        assert vorlage is not None
        self.samples = sample_values(vorlage)
        self.small = api.post(
            "/labels/from-dimensions", json={"name": "small", "width_mm": 50, "height_mm": 25}
        ).json()
        api.patch(
            f"/labels/{self.small['id']}/document",
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
        api.post(f"/labels/{self.small['id']}/status", json={"version": 2, "status": "approved"})

    def __exit__(self, *_: object) -> None:
        if self.runner.process is not None and self.runner.running:
            self.runner.stop()
        self.simulator.stop()
        self.server.stop()

    def printed(self) -> int:
        """Labels the simulator has printed since it started."""
        return self.simulator.engine.printed_total

    def singles(
        self, count: int, wait_for_the_end: bool, warm: int = 3
    ) -> tuple[list[float], list[float]]:
        """Request → label at the simulator, and request → answer, in ms (`warm` untimed
        first)."""
        latencies, answers = [], []
        for index in range(count + warm):
            before = self.printed()
            started = time.perf_counter()
            response = self.api.post(
                "/print",
                json={"label_id": self.label["id"], "printer": "sim", "variables": self.samples},
            )
            assert response.status_code == 202, response.text
            answered = time.perf_counter()
            self.eventually(lambda before=before: self.printed() > before, 30, 0.001)
            if index >= warm:
                latencies.append((time.perf_counter() - started) * 1000)
                answers.append((answered - started) * 1000)
            if wait_for_the_end:  # the Runner's reports and their events are done with
                job = f"/jobs/{response.json()['job_id']}"
                self.eventually(
                    lambda job=job: self.api.get(job).json()["status"] == "confirmed", 30
                )
        return latencies, answers

    def stream(self, count: int) -> float:
        """Seconds from the request of `count` records to the last label at the simulator."""
        before = self.printed()
        started = time.perf_counter()
        response = self.api.post(
            "/print",
            json={
                "label_id": self.small["id"],
                "printer": "sim",
                "data": [{"name": f"Nr. {i}"} for i in range(count)],
            },
        )
        assert response.status_code == 202, response.text
        self.eventually(lambda: self.printed() - before >= count, 600, 0.01)
        return time.perf_counter() - started


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process and its running children (local mode's AWS process)
    have used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(child) for child in children(pid))


def local_aws_pid(service: int) -> int | None:
    """The local AWS process among `etikett dev`'s children (moto's server), if it runs apart."""
    for child in children(service):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError):
            continue
        if b"etikett.local.aws.process" in command:
            return child
    return None


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def measure(singles: int, stream: int) -> dict[str, Any]:
    with PrintRig() as rig:
        isolated = rig.singles(singles, wait_for_the_end=True)
        service = rig.server.process.pid
        runner = rig.runner.process.pid
        aws = local_aws_pid(service)
        cpu = cpu_seconds(service), cpu_seconds(runner), cpu_seconds(aws) if aws else 0.0
        back_to_back = rig.singles(singles, wait_for_the_end=False)
        # Until the last print's reports and events are done with (one heartbeat period at most).
        time.sleep(2.0)
        cpu_service = (cpu_seconds(service) - cpu[0]) / (singles + 3) * 1000
        cpu_runner = (cpu_seconds(runner) - cpu[1]) / (singles + 3) * 1000
        cpu_aws = ((cpu_seconds(aws) if aws else 0.0) - cpu[2]) / (singles + 3) * 1000
        elapsed = rig.stream(stream)
    return {
        "isolated": isolated,
        "back_to_back": back_to_back,
        "cpu_service_ms": cpu_service,
        "cpu_runner_ms": cpu_runner,
        "cpu_aws_ms": cpu_aws,
        "stream_s": elapsed,
        "stream_rate": stream / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--singles", type=int, default=40)
    parser.add_argument("--stream", type=int, default=1000)
    arguments = parser.parse_args()
    result = measure(arguments.singles, arguments.stream)
    print(
        f"POST /print of the shipping-label Vorlage (4 x 6 in @203) to the label at the "
        f"simulator, n={arguments.singles} each, ms"
    )
    for name, key in (
        ("each print after the previous one ended (confirmed)", "isolated"),
        ("back to back (the previous print's reports and events still in flight)", "back_to_back"),
    ):
        latencies, answers = result[key]
        p50 = statistics.median(latencies)
        verdict = f"   goal p50 <= {GOAL_MS:.0f}: {'PASS' if p50 <= GOAL_MS else 'FAIL'}"
        print(f"  {name}:")
        print(
            f"    p50 {p50:.1f}  p90 {percentile(latencies, 0.9):.1f}  "
            f"p99 {percentile(latencies, 0.99):.1f}  max {max(latencies):.1f}"
            + (verdict if key == "back_to_back" else "")
        )
        print(
            f"    of which the request until its answer: p50 {statistics.median(answers):.1f}  "
            f"p90 {percentile(answers, 0.9):.1f}"
        )
    ratio = statistics.median(result["back_to_back"][0]) / statistics.median(result["isolated"][0])
    print(
        f"  back to back ÷ isolated, p50: {ratio:.2f}   goal <= {BACK_TO_BACK_LIMIT:g}: "
        f"{'PASS' if ratio <= BACK_TO_BACK_LIMIT else 'FAIL'}"
    )
    print(
        f"  CPU per print back to back (incl. 2 s of idle heartbeats and polls after the last): "
        f"etikett dev with its local AWS and workers processes {result['cpu_service_ms']:.1f} ms "
        f"(local AWS alone {result['cpu_aws_ms']:.1f} ms), "
        f"the Runner {result['cpu_runner_ms']:.1f} ms"
    )
    rate = result["stream_rate"]
    print(
        f"{arguments.stream}-record stream (50 x 25 mm, text + Code 128 serial): "
        f"{result['stream_s']:.1f} s from the request to the last label at the simulator = "
        f"{rate:.0f} labels/s   goal >= {GOAL_RATE}: {'PASS' if rate >= GOAL_RATE else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
