"""The flow editor with a 100-node flow in Debian's chromium (1280 × 800), through `etikett dev`.

1. Open: from the editor page's first line to the flow drawn (X6 finished rendering), for a flow
   whose nodes have positions, and for one without (laid out by dagre on the way); a first round
   warms the functions up and is not counted.
2. Auto-layout: dagre and moving the 100 nodes (the toolbar's Auto-layout), in the page.
3. Zoom and pan: a wheel event each animation frame (Ctrl: zoom, else pan) for 120 frames; the
   frame intervals' p50 and p95 (16.7 ms is 60 frames a second).
4. Live lint: `POST /flows/{id}/lint` with the unsaved 100-node document and a scope, p50 through
   the local gateway (what the editor waits for after each change).

    .venv/bin/python bench/flow_editor_bench.py [--rounds 5]
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

BRANCHES = 8
CHAIN = 12  # nodes after each case of the switch: 2 + 8 × 12 + 2 = 100


def hundred_nodes(placed: bool) -> dict[str, Any]:
    """A folder trigger, a switch with eight cases, a chain of twelve nodes after each case and
    two logs: 100 nodes, 99 wires — a large site's flow."""
    nodes: list[dict[str, Any]] = [
        {"id": "inbox", "type": "trigger.folder", "path": "in", "wires": ["route"]},
        {
            "id": "route",
            "type": "logic.switch",
            "cases": [
                {"when": f"int(record.lane) == {b}", "wires": [f"b{b}n0"]} for b in range(BRANCHES)
            ],
            "otherwise": ["lost"],
        },
    ]
    kinds = [
        ("logic.set", {"values": {"qty": "int(record.qty)", "lane": "string(record.lane)"}}),
        ("logic.filter", {"condition": "record.qty > 0"}),
        ("action.log", {"message": "'lane ' + record.lane"}),
    ]
    for b in range(BRANCHES):
        for n in range(CHAIN):
            node_type, fields = kinds[n % len(kinds)]
            following = [f"b{b}n{n + 1}"] if n + 1 < CHAIN else []
            nodes.append({"id": f"b{b}n{n}", "type": node_type, **fields, "wires": following})
    nodes.append({"id": "lost", "type": "action.log", "message": "'no lane'", "wires": ["done"]})
    nodes.append({"id": "done", "type": "action.log", "message": "'done'"})
    if placed:
        for index, node in enumerate(nodes):
            node["ui"] = {"x": 40 + 230 * (index % 10), "y": 40 + 90 * (index // 10)}
    return {"nodes": nodes, "samples": [{"lane": "1", "qty": "2"}]}


FRAMES = """async ([ctrl, frames]) => {
  const canvas = document.querySelector('.fe-graph');
  const box = canvas.getBoundingClientRect();
  const times = [];
  await new Promise((done) => {
    let n = 0;
    const step = (now) => {
      times.push(now);
      canvas.dispatchEvent(new WheelEvent('wheel', {
        deltaY: n % 40 < 20 ? -30 : 30, ctrlKey: ctrl, bubbles: true, cancelable: true,
        clientX: box.x + box.width / 2, clientY: box.y + box.height / 2 }));
      if (++n < frames) requestAnimationFrame(step); else done();
    };
    requestAnimationFrame(step);
  });
  return times.slice(1).map((t, i) => t - times[i]);
}"""


def measured(page: Any, name: str, count: int = 1) -> float:
    """The duration of the page's `count`-th performance measure `name`, once there is one
    (polled from here: the page's CSP refuses the eval Playwright's wait_for_function uses)."""
    for _ in range(600):
        entries = page.evaluate(
            "(name) => performance.getEntriesByName(name).map((e) => e.duration)", name
        )
        if len(entries) >= count:
            return float(entries[count - 1])
        page.wait_for_timeout(50)
    raise TimeoutError(f"the page never measured {name}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure(rounds: int) -> dict[str, float]:
    from playwright.sync_api import expect

    from support.browser import console_session, running_browser, sign_in
    from support.client import PASSWORD, Api
    from support.server import DevServer

    with tempfile.TemporaryDirectory(prefix="etikett-bench-editor-") as folder:
        server = DevServer(Path(folder) / "home")
        server.start()
        try:
            anonymous = Api(server.url)
            setup = anonymous.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
            admin = anonymous.as_token(setup.json()["token"])
            admin.create_user(["designer", "operator"], username="bench")
            flows = {
                placed: admin.post(
                    "/flows",
                    json={"name": f"100 nodes {placed}", "document": hundred_nodes(placed)},
                ).json()["id"]
                for placed in (True, False)
            }
            figures: dict[str, list[float]] = {
                "open": [],
                "open_unplaced": [],
                "layout": [],
                "zoom_p50": [],
                "zoom_p95": [],
                "pan_p50": [],
                "pan_p95": [],
            }
            with (
                running_browser() as browser,
                console_session(browser, {"width": 1280, "height": 800}) as session,
            ):
                page = session.page
                sign_in(page, server.url, "bench", PASSWORD)
                for done in range(rounds + 1):  # the first round warms the functions up
                    if done == 1:
                        for values in figures.values():
                            values.clear()
                    for placed, key in ((True, "open"), (False, "open_unplaced")):
                        page.goto(f"{server.url}/console/flows/{flows[placed]}/edit")
                        expect(page.locator(".x6-node")).to_have_count(100)
                        figures[key].append(measured(page, "flow-editor:drawn"))
                    page.get_by_role("button", name="Auto-layout").click()
                    # the second layout of the page: the first laid the unplaced flow out
                    figures["layout"].append(measured(page, "flow-editor:layout", 2))
                    for ctrl, name in ((True, "zoom"), (False, "pan")):
                        intervals = page.evaluate(FRAMES, [ctrl, 121])
                        figures[f"{name}_p50"].append(statistics.median(intervals))
                        figures[f"{name}_p95"].append(percentile(intervals, 95))
            document = hundred_nodes(True)
            scope = {"record": ["lane", "qty"]}
            bench = admin.as_token(admin.login("bench"))
            lint: list[float] = []
            for _ in range(max(10, rounds * 4)):
                started = time.perf_counter()
                answer = bench.post(
                    f"/flows/{flows[True]}/lint", json={"document": document, "scope": scope}
                )
                lint.append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200, answer.text
        finally:
            server.stop()
    result = {key: statistics.median(values) for key, values in figures.items()}
    result["lint_p50"] = statistics.median(lint)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args(argv)
    figures = measure(arguments.rounds)
    print(f"flow editor, 100 nodes and 99 wires, {arguments.rounds} rounds (medians), ms:")
    for key, value in figures.items():
        print(f"  {key:14} {value:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
