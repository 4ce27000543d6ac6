"""Preview of the GS1 logistics Vorlage at 203 dpi: in process and through the local gateway.

    .venv/bin/python bench/preview_bench.py [--repeat 100]

In process: resolve the Vorlage's sample values, render, pack the 1-bit PNG (budget: median
< 30 ms). Through the gateway: `POST /api/v1/labels/{id}/preview` of a label created from the
Vorlage, over HTTP to `etikett dev` (budget: median < 60 ms). Loopback only; bounded in time.
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

VORLAGE = "gs1-logistic-label"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def in_process(repeat: int) -> list[float]:
    from etikett.catalog.vorlagen import get_vorlage, sample_values
    from etikett_engine.dsl.label import LabelDocument
    from etikett_engine.render import render, resolve_variables, to_png

    vorlage = get_vorlage(VORLAGE)
    assert vorlage is not None
    document = LabelDocument.model_validate(vorlage.document)
    samples = sample_values(vorlage)
    timings = []
    for index in range(repeat + 5):
        started = time.perf_counter()
        values = resolve_variables(document, samples, use_samples=True)
        to_png(render(document, values))
        if index >= 5:
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def through_gateway(repeat: int) -> list[float]:
    import httpx

    from support.server import DevServer

    server = DevServer(Path(tempfile.mkdtemp(prefix="etikett-bench-")) / "home")
    server.start()
    try:
        client = httpx.Client(base_url=f"{server.url}/api/v1", timeout=30, trust_env=False)
        token = client.post(
            "/auth/setup", json={"username": "bench", "password": "bench password 1"}
        ).json()["token"]
        client.headers["Authorization"] = f"Bearer {token}"
        label = client.post(
            "/labels/from-vorlage", json={"vorlageId": VORLAGE, "name": "bench"}
        ).json()
        timings = []
        for index in range(repeat + 10):
            started = time.perf_counter()
            response = client.post(f"/labels/{label['id']}/preview", params={"stufe": "etikett"})
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, response.text
            if index >= 10:
                timings.append(elapsed)
        return timings
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=100)
    arguments = parser.parse_args()
    rows = [
        ("in process (render + PNG)", in_process(arguments.repeat), 30.0),
        ("through the local gateway (HTTP)", through_gateway(arguments.repeat), 60.0),
    ]
    print(f"Preview of the {VORLAGE} Vorlage at 203 dpi, n={arguments.repeat}, ms")
    print(f"{'path':36} {'p50':>7} {'p90':>7} {'p99':>7} {'budget':>8}")
    for name, timings, budget in rows:
        p50 = statistics.median(timings)
        print(
            f"{name:36} {p50:7.1f} {percentile(timings, 0.9):7.1f} "
            f"{percentile(timings, 0.99):7.1f} {'PASS' if p50 < budget else 'FAIL':>4} "
            f"<{budget:.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
