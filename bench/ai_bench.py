"""AI overhead benchmark: what the service itself adds to each AI call, through the local gateway
(`etikett dev`), with a language model on loopback that answers at once. Prints a table.

    .venv/bin/python bench/ai_bench.py                  # 200 timed requests per series
    .venv/bin/python bench/ai_bench.py --requests 500

Series (round-robin, sequential, one keep-alive connection; 20 untimed warm-up rounds first):
`getWhoami` (the gateway's floor: authentication and one DynamoDB read), then
`aiLintErklaerung` (a flow finding; the model suggests one operation, which is checked),
`aiLogQA` (three matching entries), `postLabelCopilot` (a proposal validated and previewed) and
`postFlowCopilot` (a proposal validated and linted). Overhead = the client's latency minus the
time the model server spent answering (measured in the model server). Goal: p50 ≤ 30 ms.
Only loopback traffic.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.client import PASSWORD, Api  # noqa: E402
from support.model_server import ModelServer, Seen, tool_answer  # noqa: E402
from support.server import DevServer  # noqa: E402

WARMUP = 20
KEY = "sk-bench"
FRAME = {
    "op": "add",
    "path": "/objects/-",
    "value": {"id": "frame", "type": "box", "x_mm": 1, "y_mm": 1, "width_mm": 98, "height_mm": 48},
}
FLOW = {
    "nodes": [
        {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["f"]},
        {"id": "f", "type": "logic.filter", "condition": "record.n >", "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": '"n=" + string(record.n)'},
    ],
    "samples": [{"n": 2}],
}
FIX = {"op": "replace", "path": "/nodes/1/condition", "value": "record.n > 1"}


def answer_for(seen: Seen) -> Any:
    prompt = seen.text
    if "explain_finding" in prompt:
        return tool_answer(
            seen, "explain_finding", {"explanation": "Compare.", "operations": [FIX]}
        )
    if "answer_question" in prompt:
        return tool_answer(seen, "answer_question", {"answer": "Setup.", "cited_entry_ids": []})
    if "flow Copilot" in prompt:
        return tool_answer(seen, "propose_patch", {"operations": [FIX], "explanation": "Fixed."})
    return tool_answer(seen, "propose_patch", {"operations": [FRAME], "explanation": "A frame."})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    arguments = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="ai-bench-")) / "home"
    server = DevServer(home)
    server.start()
    try:
        with ModelServer(api_key=KEY, default=answer_for) as model:
            api = Api(server.url)
            setup = api.post("/auth/setup", json={"username": "bench", "password": PASSWORD})
            admin = api.as_token(setup.json()["token"])
            created = admin.post(
                "/credentials",
                json={
                    "ref": "bench",
                    "kind": "language-model",
                    "provider": "anthropic-messages",
                    "model": "m",
                    "endpoint": model.endpoint("anthropic-messages"),
                    "apiKey": KEY,
                    "default": True,
                },
            )
            assert created.status_code == 201, created.text
            label = admin.post(
                "/labels/from-vorlage",
                json={"vorlageId": "gs1-logistic-label", "name": "bench"},
            )
            assert label.status_code == 201, label.text
            label_id = label.json()["id"]
            flow = admin.post("/flows", json={"name": "bench", "document": FLOW}).json()
            finding = admin.post(f"/flows/{flow['id']}/lint", json={}).json()["findings"][0]
            series: dict[str, tuple[str, str, dict[str, Any] | None]] = {
                "getWhoami (floor)": ("GET", "/auth/whoami", None),
                "aiLintErklaerung": (
                    "POST",
                    "/ai/lint-erklaerung",
                    {"target": f"{flow['id']}@1", "finding": finding},
                ),
                "aiLogQA": (
                    "POST",
                    "/ai/log-qa",
                    {"question": "Who set up?", "filters": {"operation": "postAuthSetup"}},
                ),
                "postLabelCopilot": ("POST", f"/labels/{label_id}/copilot", {"instruction": "x"}),
                "postFlowCopilot": ("POST", f"/flows/{flow['id']}/copilot", {"instruction": "x"}),
            }
            figures: dict[str, list[float]] = {name: [] for name in series}
            for round_ in range(WARMUP + arguments.requests):
                for name, (method, path, body) in series.items():
                    before = len(model.durations)
                    started = time.perf_counter()
                    response = (
                        admin.request(method, path, json=body)
                        if body
                        else admin.request(method, path)
                    )
                    elapsed = time.perf_counter() - started
                    if response.status_code != 200:
                        print(
                            f"{name}: {response.status_code} {response.text[:300]}", file=sys.stderr
                        )
                        return 1
                    model_time = sum(model.durations[before:])
                    if round_ >= WARMUP:
                        figures[name].append((elapsed - model_time) * 1000)
    finally:
        server.stop()
    print(
        f"AI overhead through the local gateway, {datetime.now(UTC):%Y-%m-%d}, "
        f"{platform.processor() or platform.machine()}, {arguments.requests} requests per series"
    )
    print(f"{'series':<20} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for name, values in figures.items():
        print(
            f"{name:<20} {percentile(values, 50):8.1f} {percentile(values, 90):8.1f} "
            f"{percentile(values, 99):8.1f} {statistics.fmean(values):8.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
