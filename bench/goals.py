"""`make bench`: every goal of the Speed issue, measured in one run, as one table.

    .venv/bin/python bench/goals.py                 # about eight to ten minutes on two cores
    .venv/bin/python bench/goals.py --quick         # fewer rounds, for a try

- MCP ÷ REST ≤ 1.15: p50 of `tools/call getLabelDocument` ÷ p50 of the same REST GET, and the
  same for listLabels and postLabelPreview, in shuffled turns through `etikett dev` (mcp_bench.py),
  the median of the rounds' ratios; and ours over the bare-SDK floor ≤ 1 ms: (MCP - REST) - (the
  SDK's no-op tool - a plain Starlette route, mcp_floor.py behind the same gateway), per round,
  the median of the rounds, the worst of the three operations.
- Z64 ≥ 5× zebrafy: zebrafy's CPU time ÷ ours on the same 4 × 6 in raster, interleaved; the
  decoded rows must be equal (render_bench.py).
- preview ≤ 1 ms warm: render + PNG of the 4 × 6 in @203 label with text, GS1-128 and
  DataMatrix, in process, by the CPU time it uses (the wall clock beside it) (render_bench.py).
- print p50 ≤ 60 ms back to back: `POST /print` → label decoded at the simulator via a real
  Runner, each print as soon as the previous label is out (print_bench.py); and that p50 ≤ 1.2×
  the p50 of isolated prints (each sent once the previous job is confirmed), both series in
  alternating blocks of five prints in the same minutes, 120 prints each: the guard that says
  when after-print work moves onto the next print's path (with 40 a side, runs of the same code
  read 1.10 to 1.25 on a quiet machine: as wide as the move the guard is there to see).
- stream ≥ 600 labels/s: 1,000 records in one request → last label at the simulator; the median of
  three streams after a first of 200 records.
- AWS calls per print ≤ 8: every botocore call of `etikett dev` from `POST /print` to the
  Runner's final report and the events that follow, less the idle rate, as on AWS: local mode's
  own stream reads are shown apart (aws_calls.py).
- offline p50 ≤ 30 ms: a one-record file dropped in a watched folder → the 4 × 6 in label (three
  barcodes) at the simulator, printed by the Runner's flow host with the service away
  (offline.py).
- offline sync ≥ 500 entries/s: a Runner's journal of 2,000 labels printed offline, as prints
  of one record and of ten, uploaded by its own uploader to `etikett dev` until the journal is
  empty (offline_sync_bench.py).
- designer p50 ≤ 80 ms: from the end of a drag to the new raster painted, in Chromium against
  `etikett dev`, a 4 × 6 in label at 203 dpi with 20 objects (designer_bench.py).
- cold start ≤ 1.15× floor: each function's handler import ÷ its modules outside etikett alone,
  the median of five rounds (at least three: no round starts after 90 s; cold_start.py).
- flow editor, 100 nodes in chromium: the editor open and the flow drawn ≤ 1.5 s, auto-layout
  ≤ 250 ms, zoom and pan at ≥ 30 frames a second (frame interval p50 ≤ 33.4 ms; 60 frames a
  second is 16.7), live lint of the unsaved document p50 ≤ 150 ms (flow_editor_bench.py).

Ratios are taken within this run; for the absolute goals (preview, print, stream) the ratio is the
measured value against the goal, oriented so that ≤ 1 passes. The table ends with the machine and
its load average at the start and the end. Exit status 0 when every measurement ran (a FAIL is a
finding, not an error), 1 when one could not run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path[:0] = [str(BENCH), str(REPO / "tests")]


@dataclass
class Goal:
    name: str
    measured: str
    ratio: float  # ≤ 1 passes for every row but the ratio goals, which carry their own limit
    limit: float
    higher_is_better: bool = False

    @property
    def passed(self) -> bool:
        return self.ratio >= self.limit if self.higher_is_better else self.ratio <= self.limit


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def mcp_goal(requests: int, rounds: int) -> list[Goal]:
    import mcp_bench

    with (
        tempfile.TemporaryDirectory(prefix="etikett-goals-mcp-") as folder,
        mcp_bench.servers(Path(folder)) as (url, floor_url),
    ):
        series = mcp_bench.measure(url, floor_url, requests, rounds)
    plain, sdk = series[mcp_bench.FLOOR_PLAIN], series[mcp_bench.FLOOR_SDK]
    goals = []
    rest = series[mcp_bench.REST_DOCUMENT]
    legacy = series[mcp_bench.MCP_DOCUMENT_2025]
    for name, mcp, base in mcp_bench.OPERATIONS:
        goals.append(
            Goal(
                f"MCP ÷ REST, p50, {name}",
                f"{series[mcp].p50():.1f} vs {series[base].p50():.1f} ms",
                mcp_bench.ratio(series[mcp], series[base]),
                1.15,
            )
        )
    goals.append(
        Goal(
            "MCP ÷ REST, p50, getLabelDocument (2025-11-25)",
            f"{legacy.p50():.1f} vs {rest.p50():.1f} ms",
            mcp_bench.ratio(legacy, rest),
            1.15,
        )
    )
    # Ours over the bare SDK's own cost (stateless, JSON answers, a no-op tool, the same gateway):
    # the worst of the three operations decides.
    over = {
        name: mcp_bench.over_floor(series[mcp], series[base], sdk, plain)
        for name, mcp, base in mcp_bench.OPERATIONS
    }
    floor = mcp_bench.statistics.median(
        s - p for s, p in zip(sdk.round_p50s(), plain.round_p50s(), strict=True)
    )
    goals.append(
        Goal(
            "MCP over the bare-SDK floor, p50 ms (worst op)",
            f"floor {floor:.2f}; document {over['getLabelDocument']:.2f}, list "
            f"{over['listLabels']:.2f}, preview {over['postLabelPreview']:.2f}",
            max(over.values()),
            1.0,
        )
    )
    return goals


def render_goals(repeat: int) -> list[Goal]:
    import render_bench

    zpl = render_bench.bench_zpl(repeat)
    preview = render_bench.bench_preview(repeat)
    same = "decoded rows equal" if zpl["same_data"] else "DECODED ROWS DIFFER"
    return [
        Goal(
            "Z64: zebrafy ÷ ours, same raster",
            f"{zpl['zebrafy']:.2f} vs {zpl['ours']:.2f} ms, {same}",
            zpl["ratio"] if zpl["same_data"] else 0.0,
            5.0,
            higher_is_better=True,
        ),
        Goal(
            "preview 4x6 in @203 (GS1-128, DataMatrix) warm, CPU",
            f"{preview['warm_cpu']:.2f} ms (wall {preview['warm']:.2f})",
            preview["warm_cpu"] / PREVIEW_MS,
            1.0,
        ),
    ]


# The budgets of ARCHITECTURE.md ("Performance budgets").
PREVIEW_MS = 1.0


def aws_calls_goal(prints: int) -> list[Goal]:
    import aws_calls

    result = aws_calls.measure(prints, idle=6.0)
    total = float(result["total"])  # type: ignore[arg-type]
    local_only = float(result["local_only"])  # type: ignore[arg-type]
    shown = f"{total:.1f} as on AWS ({total + local_only:.1f} with local stream reads)"
    return [Goal("AWS calls per print", shown, total / aws_calls.GOAL, 1.0)]


PRINT_BLOCK = 5  # prints a block of each series


def print_goals(singles: int, stream: int) -> list[Goal]:
    import print_bench

    isolated: list[float] = []
    back_to_back: list[float] = []
    with print_bench.PrintRig() as rig:
        rig.singles(0, wait_for_the_end=True)  # warm: the first prints of the label
        # Alternating blocks of five, so that the machine's minutes (on a shared machine, the
        # isolated p50 of the same code moved from 38 to 49 ms between two runs a minute
        # apart) weigh on both series alike. Each block starts with one untimed print: the
        # first isolated one would follow a print still in flight, and the first back-to-back
        # one a confirmed print.
        for _ in range(max(1, singles // PRINT_BLOCK)):
            isolated += rig.singles(PRINT_BLOCK, wait_for_the_end=True, warm=1)[0]
            back_to_back += rig.singles(PRINT_BLOCK, wait_for_the_end=False, warm=1)[0]
        rig.stream(200)  # warm: the small label's first stream (its fonts, its barcode)
        # The median of three, so that one noisy stream does not decide (issue 31).
        elapsed = statistics.median(rig.stream(stream) for _ in range(3))
    p50 = statistics.median(back_to_back)
    alone = statistics.median(isolated)
    rate = stream / elapsed
    return [
        Goal("print p50, back to back", f"{p50:.1f} ms", p50 / 60.0, 1.0),
        # The guard: what a print leaves behind (its reports, events, webhooks) must not slow
        # the next one by more than a fifth. When this moves, something landed on the path.
        Goal(
            "print p50 back to back ÷ isolated",
            f"{p50:.1f} vs {alone:.1f} ms",
            p50 / alone,
            print_bench.BACK_TO_BACK_LIMIT,
        ),
        Goal(
            f"{stream}-record stream",
            f"{rate:.0f} labels/s (median of 3)",
            rate / print_bench.GOAL_RATE,
            1.0,
            higher_is_better=True,
        ),
    ]


def offline_goals(files: int) -> list[Goal]:
    import offline

    timings = offline.measure(files)
    p50 = statistics.median(timings)
    p95 = statistics.quantiles(timings, n=20)[18]
    return [
        Goal(
            "offline: file dropped → label at the simulator, p50 (4x6, 3 barcodes)",
            f"{p50:.1f} ms (p95 {p95:.1f})",
            p50 / offline.GOAL_P50_MS,
            1.0,
        )
    ]


def fleet_goals(runners: int, seconds: float) -> list[Goal]:
    """The short fleet (issue 29; `make fleet` is the long one): idle Runners waiting for wakes,
    then printing across the fleet."""
    import fleet

    args = fleet.options().parse_args(
        [
            f"--runners={runners}",
            f"--idle={seconds}",
            f"--busy={seconds / 2}",
            "--rate=10",
            "--reference=15",
            "--reference-busy=10",
            "--baseline=8",
            "--ramp=5",
            "--wait=wake",
            "--awake=60",  # shorter than a Runner's 120 s (more than the service's 30 s margin)
        ]
    )
    import asyncio

    result = asyncio.run(fleet.fleet(args))
    fleet.report(result)
    # Like for like: prints to Runners that poll; a Runner's first print after idling (woken, and
    # the service's first print to that printer) is shown in the fleet's own table.
    hold, alone = result["polled_hold_p50"], result["reference_hold_p50"]
    return [
        Goal(
            "idle Runner: AWS requests a minute",
            f"{result['aws_per_runner_minute']:.2f}",
            result["aws_per_runner_minute"] / fleet.GOAL_REQUESTS_PER_MINUTE,
            1.0,
        ),
        Goal(
            f"print p50 under a {runners}-Runner fleet ÷ one Runner (both polling)",
            f"{hold:.1f} vs {alone:.1f} ms",
            hold / alone,
            fleet.GOAL_LOAD_RATIO,
        ),
        Goal("fleet errors", str(len(result["errors"])), float(len(result["errors"])), 0.0),
    ]


def offline_sync_goals(labels: int) -> list[Goal]:
    """The sync of offline prints (issue 27): archive entries a second from a Runner's journal
    to local mode, for prints of one record and of ten (offline_sync_bench.py)."""
    import offline_sync_bench

    rates = offline_sync_bench.measure(labels, [1, 10])
    return [
        Goal(
            f"offline sync, {labels} labels as prints of {size} record(s)",
            f"{rate:.0f} entries/s",
            rate / offline_sync_bench.GOAL_RATE,
            1.0,
            higher_is_better=True,
        )
        for size, rate in rates.items()
    ]


def designer_goal(drags: int) -> list[Goal]:
    import designer_bench

    result = designer_bench.measure(drags)
    return [
        Goal(
            "designer: end of drag → raster painted, p50 (Chromium)",
            f"{result['paint_p50']:.1f} ms, p95 {result['paint_p95']:.1f} "
            f"(request {result['request_p50']:.1f})",
            result["paint_p50"] / designer_bench.GOAL_MS,
            1.0,
        )
    ]


def cold_start_goals(repeat: int) -> list[Goal]:
    import cold_start

    rows = cold_start.measure(repeat, time_budget=90)
    return [
        Goal(
            f"cold start {row.function}",
            f"{row.ours():.0f} vs floor {row.base():.0f} ms",
            row.ratio(),
            cold_start.GOAL,
        )
        for row in rows
    ]


def flow_editor_goals(rounds: int) -> list[Goal]:
    import flow_editor_bench

    figures = flow_editor_bench.measure(rounds)
    return [
        Goal(
            "flow editor: open 100 nodes", f"{figures['open']:.0f} ms", figures["open"] / 1500, 1.0
        ),
        Goal(
            "flow editor: auto-layout 100 nodes",
            f"{figures['layout']:.0f} ms",
            figures["layout"] / 250,
            1.0,
        ),
        Goal(
            "flow editor: zoom frame p50 (100 nodes)",
            f"{figures['zoom_p50']:.1f} ms (p95 {figures['zoom_p95']:.1f})",
            figures["zoom_p50"] / 33.4,
            1.0,
        ),
        Goal(
            "flow editor: pan frame p50 (100 nodes)",
            f"{figures['pan_p50']:.1f} ms (p95 {figures['pan_p95']:.1f})",
            figures["pan_p50"] / 33.4,
            1.0,
        ),
        Goal(
            "flow editor: live lint p50 (100 nodes)",
            f"{figures['lint_p50']:.0f} ms",
            figures["lint_p50"] / 150,
            1.0,
        ),
    ]


def table(goals: list[Goal]) -> str:
    rows = [
        [
            goal.name,
            goal.measured,
            f"{goal.ratio:.2f}",
            f"{'≥' if goal.higher_is_better else '≤'} {goal.limit:g}",
            "PASS" if goal.passed else "FAIL",
        ]
        for goal in goals
    ]
    headers = ["goal", "measured", "ratio", "limit", ""]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.machine()


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a try, not a record)")
    arguments = parser.parse_args(argv)
    quick = arguments.quick
    started, load_before = time.monotonic(), load()
    goals: list[Goal] = []
    steps = [
        ("render: Z64 against zebrafy, preview", lambda: render_goals(50 if quick else 200)),
        (
            "MCP against REST through etikett dev",
            lambda: mcp_goal(20 if quick else 40, 3 if quick else 5),
        ),
        ("print path: Runner and simulator", lambda: print_goals(15 if quick else 120, 1000)),
        ("AWS calls per print", lambda: aws_calls_goal(10 if quick else 20)),
        ("offline: Runner without the service", lambda: offline_goals(15 if quick else 40)),
        ("offline sync: journal → archive", lambda: offline_sync_goals(500 if quick else 2000)),
        ("designer: drag → painted in Chromium", lambda: designer_goal(15 if quick else 40)),
        ("cold start of every function", lambda: cold_start_goals(2 if quick else 5)),
        ("flow editor: 100 nodes in chromium", lambda: flow_editor_goals(2 if quick else 5)),
        ("fleet: Runners waiting for wakes", lambda: fleet_goals(50, 30 if quick else 60)),
    ]
    try:
        for label, step in steps:
            progress(label)
            goals += step()
    except Exception as error:  # a measurement that could not run
        print(f"benchmark failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(
        f"\nEtikett speed goals, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{time.monotonic() - started:.0f} s; {cpu()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load_before} at the start, {load()} at the end"
    )
    print(table(goals))
    failed = [goal.name for goal in goals if not goal.passed]
    print(f"{len(goals) - len(failed)} of {len(goals)} goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
