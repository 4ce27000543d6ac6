"""The engine's wheel (etikett-engine): what building it costs (`make -C engine wheel`, as the
layer builds and a local-mode installer's first request run it) and what a later installer
request pays to find the cached one (hashing engine/'s sources). Prints a table.

    .venv/bin/python bench/engine_wheel_bench.py [--builds 5] [--lookups 50]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from etikett.domain.runners import installers

ENGINE = Path(__file__).resolve().parents[1] / "engine"


def build_ms() -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run(
            ["make", "-s", "-C", str(ENGINE), "wheel", f"PYTHON={sys.executable}", f"OUT={out}"],
            check=True,
            capture_output=True,
        )
        took = (time.perf_counter() - start) * 1000
        (wheel,) = Path(out).glob("etikett_engine-*.whl")
        return took, wheel.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--builds", type=int, default=5)
    parser.add_argument("--lookups", type=int, default=50)
    arguments = parser.parse_args()
    builds = [build_ms() for _ in range(arguments.builds)]
    installers._built_engine_wheel(ENGINE)  # the cache filled, as after the first request
    lookups = []
    for _ in range(arguments.lookups):
        start = time.perf_counter()
        installers._built_engine_wheel(ENGINE)
        lookups.append((time.perf_counter() - start) * 1000)
    load = os.getloadavg()[0]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {load:.1f}")
    print("| what | median | min | max |")
    print("|---|---|---|---|")
    times = [ms for ms, _ in builds]
    print(
        f"| build the wheel ({arguments.builds}x, {builds[0][1] // 1024} KiB) | "
        f"{statistics.median(times):.0f} ms | {min(times):.0f} ms | {max(times):.0f} ms |"
    )
    print(
        f"| find the cached wheel ({arguments.lookups}x) | {statistics.median(lookups):.1f} ms | "
        f"{min(lookups):.1f} ms | {max(lookups):.1f} ms |"
    )


if __name__ == "__main__":
    main()
