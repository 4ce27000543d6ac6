"""Job latency through the local stack: from `POST /api/v1/runners/{id}/jobs` to the printer.

Starts `etikett dev` (its own home in a temporary folder), enrolls a real `etikett-runner`
process, starts one printer simulator and adopts it, then sends jobs one after another (a
rendered 4x6 in label, Z64) and measures for each, from the moment the POST was sent:

  claimed    the service recorded the Runner's claim ("Claimed by the Runner.", server clock)
  at printer the simulator had received the whole label (its `received_at`)
  confirmed  the job was final `confirmed` (`finished_at`, server clock)
and the Runner's own share in between (claimed → at printer, at printer → confirmed).

All clocks are this machine's. Loopback only. Prints a table (p50, p90, min, max in ms).

    .venv/bin/python bench/runner_bench.py                # 30 jobs after 3 warm-up jobs
    .venv/bin/python bench/runner_bench.py --jobs 100
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the test suite's DevServer starts `etikett dev`

from etikett_runner.printer_sim import PrinterSimulator  # noqa: E402

from etikett.catalog.vorlagen import get_vorlage, sample_values  # noqa: E402
from etikett_engine.render import encode_zpl, render, resolve_variables  # noqa: E402
from support.client import PASSWORD, Api  # noqa: E402
from support.server import DevServer  # noqa: E402

RUNNER = Path(sys.executable).with_name("etikett-runner")


def parse_time(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def wait(probe: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        time.sleep(0.01)


def label_bytes() -> bytes:
    vorlage = get_vorlage("gs1-logistic-label")
    assert vorlage is not None
    document = vorlage.label()
    values = resolve_variables(document, sample_values(vorlage), use_samples=True)
    return encode_zpl(render(document, values))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def run(jobs: int, warmup: int) -> dict[str, list[float]]:
    work = Path(tempfile.mkdtemp(prefix="runner-bench-"))
    server = DevServer(work / "home")
    server.start()
    runner: subprocess.Popen[bytes] | None = None
    printer = PrinterSimulator(port=0, dpi=203).start()
    try:
        anonymous = Api(server.url)
        setup = anonymous.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
        admin = anonymous.as_token(setup.json()["token"])
        group = admin.post("/runner-groups", json={"name": "Bench"}).json()
        token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ETIKETT_")}
        with (work / "runner.log").open("wb") as log:
            runner = subprocess.Popen(
                [str(RUNNER), "--server", server.url, "--agent-url", server.agent_url,
                 "--enrollment-token", token["token"], "--state-dir", str(work / "runner"),
                 "--loopback-printers"],  # the printer simulator
                stdout=log, stderr=subprocess.STDOUT, env=env,
            )  # fmt: skip
        runner_id = wait(
            lambda: next(
                (r["id"] for r in admin.get("/runners").json()["items"] if r["status"] == "online"),
                None,
            ),
            60,
            "the Runner online",
        )
        printer_id = admin.post(
            "/printers",
            json={
                "name": "Bench printer",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{printer.port}",
                "language": "zpl",
                "dpi": 203,
            },
        ).json()["id"]
        data = base64.b64encode(label_bytes()).decode()
        figures: dict[str, list[float]] = {"claimed": [], "at printer": [], "confirmed": []}
        for number in range(warmup + jobs):
            printed = printer.engine.printed_total
            started = time.time()
            response = admin.post(
                f"/runners/{runner_id}/jobs",
                json={"printer_id": printer_id, "data_base64": data, "expected_labels": 1},
            )
            assert response.status_code == 202, response.text
            job_id = response.json()["id"]
            view = wait(
                lambda job_id=job_id: (
                    (v := admin.get(f"/jobs/{job_id}").json())["finished_at"] and v
                ),
                60,
                f"job {job_id} final",
            )
            assert view["status"] == "confirmed", view
            wait(lambda p=printed: printer.engine.printed_total > p, 10, "the label printed")
            if number < warmup:
                continue
            claimed = next(m["at"] for m in view["messages"] if m["text"].startswith("Claimed"))
            figures["claimed"].append(parse_time(claimed) - started)
            figures["at printer"].append(printer.printed[-1].received_at.timestamp() - started)
            figures["confirmed"].append(parse_time(view["finished_at"]) - started)
        # The Runner's own share: from the recorded claim to the printer, and on to confirmed.
        figures["claimed → at printer"] = [
            b - a for a, b in zip(figures["claimed"], figures["at printer"], strict=True)
        ]
        figures["at printer → confirmed"] = [
            b - a for a, b in zip(figures["at printer"], figures["confirmed"], strict=True)
        ]
        return figures
    finally:
        if runner is not None:
            runner.terminate()
            runner.wait(30)
        printer.stop()
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=30, help="timed jobs (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed jobs first (default 3)")
    args = parser.parse_args()
    figures = run(args.jobs, args.warmup)
    print(f"Job latency from POST /runners/{{id}}/jobs, {args.jobs} jobs, one at a time (ms)")
    print(f"{'':<24}{'p50':>8}{'p90':>8}{'min':>8}{'max':>8}{'mean':>8}")
    for name, values in figures.items():
        ms = [v * 1000 for v in values]
        print(
            f"{name:<24}{percentile(ms, 0.5):>8.0f}{percentile(ms, 0.9):>8.0f}"
            f"{min(ms):>8.0f}{max(ms):>8.0f}{statistics.fmean(ms):>8.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
