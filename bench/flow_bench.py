"""Flows: the engine in process, and postFlowDryRun through the local gateway.

1. The engine runs folder → set → filter → print (dry effects) on 10,000 records in this process,
   on one core (goal ≥ 20,000 records/s).
2. `POST /flows/{id}/dry-run` with 100 samples through `etikett dev` (goal p50 ≤ 150 ms).

    .venv/bin/python bench/flow_bench.py [--records 10000] [--repeat 5] [--requests 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

DOCUMENT: dict[str, Any] = {
    "nodes": [
        {"id": "inbox", "type": "trigger.folder", "path": "/srv/in", "wires": ["shape"]},
        {
            "id": "shape",
            "type": "logic.set",
            "values": {"qty": "int(record.qty)", "ship_to": "upper(record.name)"},
            "wires": ["some"],
        },
        {"id": "some", "type": "logic.filter", "condition": "record.qty > 0", "wires": ["ship"]},
        {
            "id": "ship",
            "type": "action.print",
            "label": "lbl_01J00000000000000000000000",
            "printer": "shipping",
            "copies": "record.qty",
            "variables": {"ship_to": "record.ship_to", "sscc": "record.sscc"},
        },
    ]
}


def _records(count: int) -> list[dict[str, Any]]:
    return [
        {"sscc": f"0034012345{i:010d}", "name": f"Kunde {i}", "qty": str(i % 4)}
        for i in range(count)
    ]


def engine(records: int, repeat: int) -> dict[str, float]:
    from etikett_engine.flows.effects import DryRun
    from etikett_engine.flows.engine import FlowProgram

    program = FlowProgram.compile(DOCUMENT)
    data = _records(records)
    program.run(data[:100], "inbox", DryRun(), trace_limit=0)  # warm: celpy's parser, compiles
    rates = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = program.run(data, "inbox", DryRun(), trace_limit=0)
        rates.append(records / (time.perf_counter() - started))
        assert result.outcome == "succeeded" and result.records == records
        assert len(result.side_effects) == records - records // 4
    return {"best": max(rates), "median": statistics.median(rates)}


def dry_run(requests: int) -> list[float]:
    import httpx

    from support.client import PASSWORD
    from support.server import DevServer

    with tempfile.TemporaryDirectory() as folder:
        server = DevServer(Path(folder) / "home")
        server.start()
        try:
            with httpx.Client(base_url=f"{server.url}/api/v1", trust_env=False) as http:
                token = http.post(
                    "/auth/setup", json={"username": "bench", "password": PASSWORD}
                ).json()["token"]
                headers = {"authorization": f"Bearer {token}"}
                document = {**DOCUMENT, "samples": _records(100)}
                created = http.post(
                    "/flows", json={"name": "bench", "document": document}, headers=headers
                )
                created.raise_for_status()
                url = f"/flows/{created.json()['id']}/dry-run"
                for _ in range(3):
                    http.post(url, json={}, headers=headers).raise_for_status()
                times = []
                for _ in range(requests):
                    started = time.perf_counter()
                    answer = http.post(url, json={}, headers=headers)
                    times.append((time.perf_counter() - started) * 1000)
                    answer.raise_for_status()
                    assert len(answer.json()["runs"]) == 100
                return times
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()

    rates = engine(args.records, args.repeat)
    times = sorted(dry_run(args.requests))
    p50 = statistics.median(times)
    p90 = times[int(len(times) * 0.9) - 1]
    rows = [
        (
            f"engine, {args.records} records (set, filter, dry print)",
            f"{rates['median']:,.0f} records/s (best {rates['best']:,.0f})",
            "≥ 20,000 records/s",
            "ok" if rates["median"] >= 20_000 else "FAIL",
        ),
        (
            "postFlowDryRun, 100 samples, gateway",
            f"p50 {p50:.0f} ms, p90 {p90:.0f} ms",
            "p50 ≤ 150 ms",
            "ok" if p50 <= 150 else "FAIL",
        ),
    ]
    width = [max(len(str(r[i])) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(str(cell).ljust(width[i]) for i, cell in enumerate(row)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
