"""Cold-start import of each function as deployed: from `sam build`'s output, not the dev venv.

    .venv/bin/python bench/deployed_import.py [--build-dir DIR] [--repeat 7]

Runs `sam build` into a temporary folder (or measures an existing `--build-dir`), then imports
each function's `app.py` in fresh interpreters laid out as on Lambda: the function's folder and
its layers' `python/` folders on `sys.path`, nothing else of the venv (`python -S`: no
site-packages), bytecode from the layers only (`-B`: none written), `LAMBDA_TASK_ROOT` set and
tracing off. Prints min / median / max in ms per function against the 300 ms budget.

The interpreter is the venv's Python 3.11 (the functions' runtime), with its standard library.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
BUDGET_MS = 300.0
CHILD = """
import importlib.util, sys, time
function, *layers = sys.argv[1:]
sys.path[:0] = [function, *layers]
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", function + "/app.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert callable(module.handler)
print(f"{(time.perf_counter() - started) * 1000:.1f}")
"""


def build(into: Path) -> Path:
    env = {**os.environ, "HOME": str(into), "SAM_CLI_TELEMETRY": "0"}
    command = [
        str(Path(sys.executable).with_name("sam")),
        "build",
        "--build-dir",
        str(into / "build"),
        "--cache-dir",
        str(into / "cache"),
        "--region",
        "eu-central-1",
    ]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=env, timeout=900)
    return into / "build"


def functions(build_dir: Path) -> dict[str, list[Path]]:
    """Each function's folder and its layers' python folders, from the built template."""
    from etikett.local.template import _CfnLoader

    template = yaml.load((build_dir / "template.yaml").read_text(), Loader=_CfnLoader)
    shared = template.get("Globals", {}).get("Function", {}).get("Layers", [])
    found = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        layers = [*shared, *resource["Properties"].get("Layers", [])]
        folders = [build_dir / layer["Ref"] / "python" for layer in layers]
        found[name] = [build_dir / name, *folders]
    return dict(sorted(found.items()))


def import_ms(paths: list[Path]) -> float:
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_REGION": "eu-central-1",
        "LAMBDA_TASK_ROOT": str(paths[0]),
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    result = subprocess.run(
        [sys.executable, "-S", "-B", "-c", CHILD, *map(str, paths)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{paths[0].name}: {result.stderr[-2000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="etikett-deployed-") as folder:
        started = time.perf_counter()
        build_dir = arguments.build_dir or build(Path(folder))
        built = time.perf_counter() - started
        targets = functions(build_dir)
        for paths in targets.values():
            import_ms(paths)  # untimed: the first process warms the file cache
        figures: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(arguments.repeat):  # round-robin: a noisy moment hits every row alike
            for name, paths in targets.items():
                figures[name].append(import_ms(paths))
    source = "an existing build" if arguments.build_dir else f"sam build, {built:.0f} s"
    print(
        f"Handler import as deployed ({source}), fresh `python -S -B` per run, "
        f"n={arguments.repeat}, ms; load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'function':<28} {'min':>7} {'median':>7} {'max':>7}  budget < {BUDGET_MS:.0f}")
    for name, values in figures.items():
        median = statistics.median(values)
        verdict = "PASS" if median < BUDGET_MS else "FAIL"
        print(f"{name:<28} {min(values):7.1f} {median:7.1f} {max(values):7.1f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
