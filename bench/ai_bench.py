"""AI overhead benchmark: what the service itself adds to each AI call, through the local gateway
(`etikett dev`), with a language model on loopback that answers at once. Prints a table.

    .venv/bin/python bench/ai_bench.py                  # 200 timed requests per series
    .venv/bin/python bench/ai_bench.py --requests 500
    .venv/bin/python bench/ai_bench.py --baseline /tmp/main-checkout   # before/after, one run

Series (round-robin, sequential, one keep-alive connection; 20 untimed warm-up rounds first):
`getWhoami` (the gateway's floor: authentication and one DynamoDB read), then
`aiLintErklaerung` (a flow finding; the model suggests one operation, which is checked),
`aiLogQA` (three matching entries), `postLabelCopilot` (a proposal validated and previewed),
`postFormCopilot` (a form proposal validated against its label), `postFlowCopilot` (a proposal
validated and linted) and `postCredentialTest` (one word asked of the model). Overhead = the
client's latency minus the time the model server spent answering (measured in the model server).
Goal: p50 ≤ 30 ms. Only loopback traffic.

`--baseline DIR`: a second checkout (say, main) runs its own `etikett dev` beside this one's, and
every request goes to both, in alternating order, so both see the same load on a shared machine:
the table then has a before and an after column per series.
"""

from __future__ import annotations

import argparse
import os
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
from support.model_server import ModelServer, Seen, text_answer, tool_answer  # noqa: E402
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
HELP = {"op": "add", "path": "/fields/0/help", "value": "From the order."}


def answer_for(seen: Seen) -> Any:
    prompt = seen.text
    if "tools" not in seen.json:  # the credential test asks for one word
        return text_answer(seen, "OK")
    if "explain_finding" in prompt:
        return tool_answer(
            seen, "explain_finding", {"explanation": "Compare.", "operations": [FIX]}
        )
    if "answer_question" in prompt:
        return tool_answer(seen, "answer_question", {"answer": "Setup.", "cited_entry_ids": []})
    if "flow Copilot" in prompt:
        return tool_answer(seen, "propose_patch", {"operations": [FIX], "explanation": "Fixed."})
    if "form Copilot" in prompt:
        return tool_answer(seen, "propose_patch", {"operations": [HELP], "explanation": "Help."})
    return tool_answer(seen, "propose_patch", {"operations": [FRAME], "explanation": "A frame."})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class Service:
    """One `etikett dev` (from `repo`) with an admin, a default model credential, a label from
    the GS1 logistic Vorlage and a flow with a lint finding; the requests of every series."""

    def __init__(self, repo: Path, model: ModelServer) -> None:
        home = Path(tempfile.mkdtemp(prefix="ai-bench-")) / "home"
        paths = [str(repo / "shared"), os.environ.get("PYTHONPATH", "")]
        self.server = DevServer(
            home, env={"PYTHONPATH": os.pathsep.join(p for p in paths if p)}, repo=repo
        )
        self.server.start()
        api = Api(self.server.url)
        setup = api.post("/auth/setup", json={"username": "bench", "password": PASSWORD})
        self.admin = api.as_token(setup.json()["token"])
        created = self.admin.post(
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
        label = self.admin.post(
            "/labels/from-vorlage",
            json={"vorlageId": "gs1-logistic-label", "name": "bench"},
        )
        assert label.status_code == 201, label.text
        label_id = label.json()["id"]
        flow = self.admin.post("/flows", json={"name": "bench", "document": FLOW}).json()
        finding = self.admin.post(f"/flows/{flow['id']}/lint", json={}).json()["findings"][0]
        self.series: dict[str, tuple[str, str, dict[str, Any] | None]] = {
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
            "postFormCopilot": ("POST", f"/labels/{label_id}/form/copilot", {"instruction": "x"}),
            "postFlowCopilot": ("POST", f"/flows/{flow['id']}/copilot", {"instruction": "x"}),
            "postCredentialTest": ("POST", "/credentials/bench/test", {}),
        }

    def call(self, name: str, model: ModelServer) -> float:
        """The service's own milliseconds for one request of the series."""
        method, path, body = self.series[name]
        before = len(model.durations)
        started = time.perf_counter()
        response = (
            self.admin.request(method, path, json=body)
            if body is not None
            else self.admin.request(method, path)
        )
        elapsed = time.perf_counter() - started
        if response.status_code != 200 or (
            name == "postCredentialTest" and not response.json()["ok"]
        ):
            raise RuntimeError(f"{name}: {response.status_code} {response.text[:300]}")
        return (elapsed - sum(model.durations[before:])) * 1000

    def stop(self) -> None:
        self.server.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="a second checkout to compare with")
    arguments = parser.parse_args()
    services: dict[str, Service] = {}
    with ModelServer(api_key=KEY, default=answer_for) as model:
        try:
            if arguments.baseline:
                services["before"] = Service(arguments.baseline.resolve(), model)
            services["after" if arguments.baseline else "this"] = Service(REPO, model)
            names = list(next(iter(services.values())).series)
            figures = {(label, name): [] for label in services for name in names}
            for round_ in range(WARMUP + arguments.requests):
                order = list(services.items())
                if round_ % 2:
                    order.reverse()  # neither server always goes first
                for name in names:
                    for label, service in order:
                        overhead = service.call(name, model)
                        if round_ >= WARMUP:
                            figures[(label, name)].append(overhead)
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 1
        finally:
            for service in services.values():
                service.stop()
    load = os.getloadavg()
    print(
        f"AI overhead through the local gateway, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
        f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, {arguments.requests} requests per series"
    )
    print(f"{'series':<20} {'':<7} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8}  goal")
    for name in names:
        for label in services:
            values = figures[(label, name)]
            p50 = percentile(values, 50)
            verdict = "" if name.startswith("getWhoami") else ("PASS" if p50 <= 30 else "FAIL")
            print(
                f"{name:<20} {label:<7} {p50:8.1f} {percentile(values, 90):8.1f} "
                f"{percentile(values, 99):8.1f} {statistics.fmean(values):8.1f}  {verdict}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
