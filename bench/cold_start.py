"""Cold start against its floor: each function's handler import, and the import of the third-party
(and standard-library) modules that import brings in, alone, in the same run.

    .venv/bin/python bench/cold_start.py                  # every function, 5 rounds
    .venv/bin/python bench/cold_start.py --repeat 3 --only McpFunction,MiscFunction

The functions are laid out as the shared layer ships them: a copy of `shared/etikett` (without
`local/`) with the OpenAPI description the layer's build writes (`etikett.api.openapi.write`), first
on `PYTHONPATH`. Each measurement is a fresh interpreter (`bench/coldstart_child.py`) with the
environment of `bench/run.py`'s cold-start rows and, as on Lambda, `LAMBDA_TASK_ROOT` set and the
dev venv's `awscrt`/`OpenSSL` hidden (the dependency layer has neither). Bytecode comes from a
private cache that untimed first runs fill, for our modules and the others alike.

- **ours**: the handler module's import (`spec_from_file_location` + `exec_module`), as the Lambda
  runtime does it: everything its entry does at import, the tool catalog of the MCP function
  included.
- **floor**: the modules outside etikett that this import loaded (listed by the first run), imported
  in the same order in a fresh process under the same cold-start settings (`etikett.coldstart`
  first: garbage collector paused, pydantic builds deferred; `done()` last), and nothing of ours.
- **ratio**: the median over the rounds of ours ÷ floor of the same round, by the CPU time each
  import used (`time.process_time`): on a shared machine the wall clock adds however long the
  process waited for a core, which says nothing about the import (on Lambda, where the function
  has its core, the two agree). The wall-clock figures are printed beside it. Goal: ≤ 1.15 for
  every function.

The two rows of a function run one after the other in each round, and the rounds go round-robin
over the functions, so a busy moment of a shared machine hits both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import VENV_ONLY, BenchError, Children, Job, entry_file, progress, table

from etikett.local import template as templates

REPO = Path(__file__).resolve().parents[1]
GOAL = 1.15


@dataclass
class Row:
    function: str
    handler: Job
    floor: Job
    modules: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def ours(self, key: str = "import_cpu_ms") -> float:
        return statistics.median(self.handler.values(key))

    def base(self, key: str = "import_cpu_ms") -> float:
        return statistics.median(self.floor.values(key))

    def ratio(self, key: str = "import_cpu_ms") -> float:
        """The median of each round's ours ÷ floor: the two ran one after the other, so a busy
        moment of the machine hits both."""
        pairs = zip(self.handler.values(key), self.floor.values(key), strict=True)
        return statistics.median(ours / floor for ours, floor in pairs)


def shared_layer(into: Path) -> Path:
    """The shared layer's `python/` folder as `shared/Makefile` builds it (bytecode aside; the
    engine copied, not installed from its wheel: the same files)."""
    target = into / "python"
    shutil.copytree(
        REPO / "shared" / "etikett",
        target / "etikett",
        ignore=shutil.ignore_patterns("__pycache__", "local", "*.built.json"),
    )
    shutil.copytree(  # the engine, as its wheel installs it (the dist-info aside)
        REPO / "engine" / "etikett_engine",
        target / "etikett_engine",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    # From the layer's folder, so that `-m` imports the copy being built, not the source.
    subprocess.run(
        [sys.executable, "-m", "etikett.api.openapi", str(target / "etikett" / "api")],
        cwd=target,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(target)},
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def measure(repeat: int, only: set[str] | None = None, time_budget: float = 0) -> list[Row]:
    template = templates.load(REPO / "template.yaml")
    with tempfile.TemporaryDirectory(prefix="etikett-cold-start-") as folder:
        work = Path(folder)
        progress("laying out the shared layer (with its OpenAPI description)")
        layer = shared_layer(work / "shared-layer")
        children = Children(work / "pycache", template)
        children.env["PYTHONPATH"] = str(layer)
        rows: list[Row] = []
        for logical_id, function in sorted(template.functions.items()):
            file, attribute = entry_file(function)
            if file.parent.parent != REPO / "functions" or file.name != "app.py":
                continue
            if only and logical_id not in only:
                continue
            env = {
                "LAMBDA_TASK_ROOT": str(file.parent),
                "BENCH_BLOCK_MODULES": ",".join(VENV_ONLY),
            }
            listing = work / f"{logical_id}.json"
            handler = Job(logical_id, ["handler", str(file), attribute], env)
            floor = Job(f"{logical_id} floor", ["floor", str(listing)], env)
            rows.append(Row(logical_id, handler, floor))
        if not rows:
            raise BenchError("no function matched")
        progress(f"first runs: bytecode and module lists of {len(rows)} functions")
        for row in rows:
            listing = row.floor.args[1]
            children.run(
                Job(
                    row.function,
                    row.handler.args,
                    {**row.handler.env, "BENCH_LIST_MODULES": listing},
                )
            )
            row.modules = len(json.loads(Path(listing).read_text()))
            children.run(row.floor)
        started = time.monotonic()
        for round_ in range(repeat):
            if round_ >= 3 and 0 < time_budget < time.monotonic() - started:
                progress(f"time budget of {time_budget:.0f} s used up after {round_} rounds")
                break
            progress(f"cold start round {round_ + 1}/{repeat} ({2 * len(rows)} fresh processes)")
            for row in rows:
                # Each pair in the other order every other round, so that whatever favours the
                # first (or the second) process of a pair weighs on both sides alike.
                pair = (row.handler, row.floor) if round_ % 2 == 0 else (row.floor, row.handler)
                for job in pair:
                    job.results.append(children.run(job))
    return rows


def report(rows: list[Row]) -> str:
    wall = "import_ms"
    lines = [
        table(
            [
                "function",
                "modules",
                "floor",
                "ours",
                "ours - floor",
                "ratio",
                f"≤ {GOAL}",
                "wall: floor",
                "ours",
                "ratio",
            ],
            [
                [
                    row.function,
                    row.modules,
                    row.base(),
                    row.ours(),
                    row.ours() - row.base(),
                    f"{row.ratio():.3f}",
                    "PASS" if row.ratio() <= GOAL else "FAIL",
                    row.base(wall),
                    row.ours(wall),
                    f"{row.ratio(wall):.3f}",
                ]
                for row in rows
            ],
        )
    ]
    n = min(len(row.handler.results) for row in rows)
    lines.append(
        f"(floor, ours: medians of {n} fresh processes each, CPU ms of the import; ratio: median "
        "of the rounds' ours ÷ floor; floor: the modules outside etikett the handler's import "
        "loads, alone, same cold-start settings; wall: the same by the wall clock)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="rounds (fresh processes per row)")
    parser.add_argument("--only", help="comma-separated logical ids (default: every function)")
    parser.add_argument(
        "--time-budget", type=float, default=0, help="no new round after S seconds (min 3 rounds)"
    )
    arguments = parser.parse_args(argv)
    only = set(arguments.only.split(",")) if arguments.only else None
    print(
        f"Cold start against its floor, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    try:
        rows = measure(arguments.repeat, only, arguments.time_budget)
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
