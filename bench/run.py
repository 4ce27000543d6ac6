"""Etikett benchmarks: cold-start imports of the Lambda handlers, and whoami latency through the
local gateway. Prints its figures as tables; bench/README.md records them and explains each one.

    .venv/bin/python bench/run.py                      # everything (what `make bench` runs)
    .venv/bin/python bench/run.py --only coldstart --repeat 11 --time-budget 0
    .venv/bin/python bench/run.py --only whoami --requests 1000

Only loopback traffic: the local gateway and moto's server on 127.0.0.1, nothing else.
Exit status 0 when every measurement ran (a budget FAIL is a finding, not an error), 1 when a
measurement could not run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from etikett.local import template as templates

REPO = Path(__file__).resolve().parents[1]
CHILD = Path(__file__).resolve().with_name("coldstart_child.py")
MARKER = "BENCH-RESULT "

IMPORT_BUDGET_MS = 300.0  # handler import, per function
CHILD_TIMEOUT_S = 60.0
# The cold-start rounds stop early (after MIN_ROUNDS) once --time-budget is used up, so that the
# whole run stays near two minutes even when the machine is busy.
MIN_ROUNDS = 3
SERVER_START_TIMEOUT_S = 90.0
WARMUP_REQUESTS = 20
COLD_EVENT = REPO / "events" / "get-version.json"
COLD_GROUP = "misc"  # the function whose first request is timed (GET /api/v1/version)

# Installed in the dev venv (aws-sam-cli pulls them in) but not in the deployed dependency layer;
# botocore imports them when present.
VENV_ONLY = ("awscrt", "OpenSSL")


class BenchError(RuntimeError):
    """A measurement could not run (as opposed to a budget that was missed)."""


# ---------------------------------------------------------------- statistics and printing


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.1f}"
        return str(value)

    cells = [[cell(value) for value in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        # first column left-aligned (labels), the rest right-aligned (numbers)
        parts = [values[0].ljust(widths[0])]
        parts += [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(list(headers)), rule, *(line(r) for r in cells)])


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- cold start


@dataclass
class Job:
    label: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)  # what-if switches for the child
    results: list[dict[str, Any]] = field(default_factory=list)

    def values(self, key: str) -> list[float]:
        return [float(result[key]) for result in self.results]


class Children:
    """Runs coldstart_child.py in fresh interpreters with a clean, Lambda-like environment: no
    profile or endpoint of the developer's, dummy credentials, every `ETIKETT_*_TABLE` variable of
    the template's globals set to a name (nothing is called: the names only need to exist).

    Bytecode goes to a private cache (PYTHONPYCACHEPREFIX), filled by untimed first runs: every
    module, ours and third-party, then loads from .pyc whatever PYTHONDONTWRITEBYTECODE says, and
    nothing is written into the repository or the venv.
    """

    def __init__(self, pycache: Path, template: templates.Template) -> None:
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("AWS_", "LAMBDA_", "ETIKETT_", "POWERTOOLS_", "BENCH_"))
            and name != "PYTHONDONTWRITEBYTECODE"
        }
        tables = ["ETIKETT_USERS_TABLE", "ETIKETT_TOKENS_TABLE", "ETIKETT_AUDIT_TABLE"]
        tables += [
            name
            for name in template.global_environment
            if name.startswith("ETIKETT_") and name.endswith("_TABLE")
        ]
        env.update({name: f"bench-{name.lower().split('_')[1]}" for name in tables})
        env.update(
            AWS_REGION="eu-central-1",
            AWS_DEFAULT_REGION="eu-central-1",
            AWS_ACCESS_KEY_ID="bench",
            AWS_SECRET_ACCESS_KEY="bench",
            POWERTOOLS_TRACE_DISABLED="true",
            PYTHONPYCACHEPREFIX=str(pycache),
        )
        self.env = env

    def run(self, job: Job) -> dict[str, Any]:
        command = [sys.executable, str(CHILD), *job.args]
        try:
            done = subprocess.run(
                command,
                cwd=REPO,
                env={**self.env, **job.env},
                capture_output=True,
                text=True,
                timeout=CHILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise BenchError(f"{job.label}: no answer within {CHILD_TIMEOUT_S:.0f} s") from error
        for line in done.stdout.splitlines():
            if line.startswith(MARKER):
                result: dict[str, Any] = json.loads(line.removeprefix(MARKER))
                return result
        output = done.stdout[-2000:] + done.stderr[-4000:]
        raise BenchError(f"{job.label}: exit {done.returncode}, no result\n{output}")


def entry_file(function: templates.Function) -> tuple[Path, str]:
    module, _, attribute = function.handler.rpartition(".")
    return function.code_uri / (module.replace(".", "/") + ".py"), attribute


def compile_ms() -> float:
    """What compiling etikett's and the engine's sources (all but local/) costs a process that
    finds no .pyc."""
    sources = [
        path.read_text()
        for path in sorted((REPO / "shared" / "etikett").rglob("*.py"))
        if "local" not in path.relative_to(REPO / "shared" / "etikett").parts
    ]
    sources += [
        path.read_text() for path in sorted((REPO / "engine" / "etikett_engine").rglob("*.py"))
    ]
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        for source in sources:
            compile(source, "<etikett>", "exec")
        timings.append((time.perf_counter() - start) * 1000)
    return min(timings)


def stats_row(label: str, values: Sequence[float], reference: float) -> list[Any]:
    median = statistics.median(values)
    return [label, min(values), median, max(values), median / reference]


def coldstart(repeat: int, time_budget: float) -> None:
    template = templates.load(REPO / "template.yaml")
    handlers: dict[str, Job] = {}
    for logical_id, function in sorted(template.functions.items()):
        file, attribute = entry_file(function)
        if file.parent.parent != REPO / "functions" or file.name != "app.py":
            continue
        args = ["handler", str(file), attribute]
        if file.parent.name == COLD_GROUP:
            args += [str(COLD_EVENT), f"etikett-{logical_id}", str(function.memory)]
        handlers[logical_id] = Job(f"{logical_id} ({file.relative_to(REPO)})", args)
    if not handlers:
        raise BenchError("template.yaml lists no functions/<group>/app.py entries")
    # The reference function: misc (the $default route) holds every group's routes, so its import
    # is the largest; its first request is timed, and its import is taken apart below.
    name = next(
        (lid for lid, job in handlers.items() if Path(job.args[1]).parent.name == COLD_GROUP),
        max(handlers),
    )
    reference = handlers[name]

    with tempfile.TemporaryDirectory(prefix="etikett-bench-") as folder:
        children = Children(Path(folder) / "pycache", template)
        listing = Path(folder) / f"{name}-modules.json"
        # Untimed first runs: fill the bytecode cache, and list what the reference brings in.
        for logical_id, job in handlers.items():
            extra = {"BENCH_LIST_MODULES": str(listing)} if logical_id == name else {}
            children.run(Job(job.label, job.args, extra))
        outside = json.loads(listing.read_text())
        file, attribute = reference.args[1:3]
        # What-if rows: the same import with one thing changed, to size a cause.
        # On Lambda, LAMBDA_TASK_ROOT is set: the X-Ray SDK then uses its local sampler instead of
        # creating two botocore X-Ray clients at import (and touches /tmp/.aws-xray/initialized).
        on_lambda = {
            "LAMBDA_TASK_ROOT": str(Path(file).parent),
            "BENCH_BLOCK_MODULES": ",".join(VENV_ONLY),
        }
        what_ifs = [
            Job(f"{name} as on Lambda (see below)", reference.args, on_lambda),
            Job(
                f"{name} as on Lambda, garbage collector off",
                reference.args,
                {**on_lambda, "BENCH_GC_OFF": "1"},
            ),
            Job(
                f"{name} as on Lambda, layers without bytecode",
                reference.args,
                {**on_lambda, "BENCH_SOURCE_ONLY": "1"},
            ),
        ]
        for job in what_ifs:
            children.run(job)
        xray = ["modules", "after=pynamodb.models,aws_lambda_powertools", "aws_xray_sdk.core"]
        context = [
            Job("fastapi", ["modules", "fastapi"]),
            Job("pynamodb.models", ["modules", "pynamodb.models"]),
            Job("mangum", ["modules", "mangum"]),
            Job(
                f"pynamodb.models without {'/'.join(VENV_ONLY)}",
                ["modules", "pynamodb.models"],
                {"BENCH_BLOCK_MODULES": ",".join(VENV_ONLY)},
            ),
            Job("aws_lambda_powertools", ["modules", "aws_lambda_powertools"]),
            Job("aws_xray_sdk.core, after pynamodb (Tracer())", xray),
            Job(
                "aws_xray_sdk.core, after pynamodb, LAMBDA_TASK_ROOT set",
                xray,
                {"LAMBDA_TASK_ROOT": str(Path(file).parent)},
            ),
            Job(
                f"all {len(outside)} non-etikett modules {name} imports",
                ["modules", f"@{listing}"],
            ),
        ]
        anatomy = Job(name, ["anatomy", file, attribute, str(listing)])
        jobs = [*handlers.values(), *what_ifs, *context, anatomy]
        started = time.monotonic()
        for round_ in range(repeat):
            if round_ >= MIN_ROUNDS and 0 < time_budget < time.monotonic() - started:
                progress(f"time budget of {time_budget:.0f} s used up after {round_} rounds")
                break
            # Round-robin, so that a noisy minute hits every row alike and ratios stay comparable.
            progress(f"cold start round {round_ + 1}/{repeat} ({len(jobs)} fresh processes)")
            for job in jobs:
                job.results.append(children.run(job))
        elapsed = time.monotonic() - started
        rounds = len(anatomy.results)

    fastapi_median = statistics.median(context[0].values("import_ms"))
    print(
        f"\nCold start: import of the handler module in a fresh process, ms "
        f"(n={rounds} each; budget < {IMPORT_BUDGET_MS:.0f} ms per handler)"
    )
    rows: list[list[Any]] = []
    for job in [*handlers.values(), *what_ifs]:
        row = stats_row(job.label, job.values("import_ms"), fastapi_median)
        rows.append([*row, "PASS" if row[2] < IMPORT_BUDGET_MS else "FAIL"])
    print(table(["handler", "min", "median", "max", "÷ fastapi", "budget"], rows))
    print(
        f"(as on Lambda: LAMBDA_TASK_ROOT set and {'/'.join(VENV_ONLY)} hidden, which the dev venv "
        "has and the dependency layer has not)"
    )

    print("\nFor context: imports outside etikett, each row in fresh processes, ms")
    rows = [stats_row(job.label, job.values("import_ms"), fastapi_median) for job in context]
    rows.append(["compiling etikett's sources but local/ (no .pyc)", compile_ms(), "", "", ""])
    print(table(["import", "min", "median", "max", "÷ fastapi"], rows))

    print(f"\nAnatomy of the {name} import (one process per run, phases in order; medians, ms)")
    phases = [
        ("outside", "the non-etikett modules it imports"),
        ("etikett_core", "etikett.api.app, .entry, .groups"),
        ("routers", "routers: group modules, domain, store, route definitions"),
        ("create_app", "create_app()"),
        ("http_handler", "http_handler(): Powertools Logger/Tracer/Metrics, Mangum"),
        ("total", "total"),
    ]

    def gc_in(result: dict[str, Any], key: str) -> float:
        spent: dict[str, float] = result["gc"]
        if key == "total":
            return sum(spent.values())
        if key == "routers":
            return sum(v for k, v in spent.items() if k == "routers" or k.startswith("router:"))
        return spent.get(key, 0.0)

    total = statistics.median(anatomy.values("total"))
    rows = []
    for key, label in phases:
        median = statistics.median(anatomy.values(key))
        gc_median = statistics.median(gc_in(result, key) for result in anatomy.results)
        rows.append([label, median, gc_median, f"{100 * median / total:.0f}%"])
    groups = list(dict.fromkeys(g for result in anatomy.results for g in result["per_router"]))
    for group in groups:
        values = [float(result["per_router"].get(group, 0.0)) for result in anatomy.results]
        gc_values = [gc_in(result, f"router:{group}") for result in anatomy.results]
        row = [statistics.median(values), statistics.median(gc_values), ""]
        rows.insert(-3, [f"  of which routes_of({group!r})", *row])
    print(table(["phase", "median", "of which GC", "share"], rows))
    print(
        "(a group's router pays only for what earlier groups did not import already; "
        f"{statistics.median(anatomy.values('failed_imports')):.0f} listed modules would not "
        "import on their own)"
    )

    if len(reference.args) > 3:
        values = reference.values("invoke_ms")
        statuses = sorted({int(result["status"]) for result in reference.results})
        print(
            f"\nCold first request: {name} handler(event, context) with "
            f"{COLD_EVENT.relative_to(REPO)}, right after the import, in-process, ms "
            f"(status {', '.join(map(str, statuses))})"
        )
        second = reference.values("second_invoke_ms")
        rows = [
            ["GET /api/v1/version, first", min(values), statistics.median(values), max(values)],
            ["the same again (warm)", min(second), statistics.median(second), max(second)],
        ]
        print(table(["request", "min", "median", "max"], rows))
        if statuses != [200]:
            raise BenchError(f"the cold first request answered {statuses}, not 200")
    processes = sum(len(job.results) for job in jobs)
    print(f"\n({processes} timed fresh processes in {elapsed:.0f} s)")


# ---------------------------------------------------------------- whoami through the gateway


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DevServer:
    """`etikett dev` as a subprocess, as a developer runs it; stopped with SIGINT (Ctrl-C)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home.parent / "etikett-dev.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            name: value
            for name, value in os.environ.items()
            if name not in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")
        }
        env["PYTHONUNBUFFERED"] = "1"
        env["BROKER_PORT"] = str(free_port())  # not --port + 883, which another may hold
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "etikett.local.cli",
                    "dev",
                    "--port",
                    str(self.port),
                    "--home",
                    str(self.home),
                    "--template",
                    str(REPO / "template.yaml"),
                ],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        with httpx.Client(trust_env=False, timeout=2) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise BenchError(f"etikett dev exited:\n{self.output()}")
                try:
                    ready = client.get(f"{self.url}/api/v1/version").status_code == 200
                except httpx.TransportError:
                    ready = False
                if ready and "Press Ctrl-C to stop." in self.output():
                    return
                time.sleep(0.1)
        raise BenchError(f"etikett dev did not answer in {SERVER_START_TIMEOUT_S:.0f} s")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@dataclass
class Series:
    label: str
    samples_ms: list[float]
    wall_s: float

    def row(self, reference_p50: float | None) -> list[Any]:
        p50 = percentile(self.samples_ms, 50)
        return [
            self.label,
            p50,
            percentile(self.samples_ms, 90),
            percentile(self.samples_ms, 99),
            max(self.samples_ms),
            len(self.samples_ms) / self.wall_s,
            "" if reference_p50 is None else f"{p50 / reference_p50:.2f}",
        ]


def time_requests(
    label: str, send: Callable[[], httpx.Response], count: int, check: Callable[[Any], bool]
) -> Series:
    for _ in range(WARMUP_REQUESTS):
        send().raise_for_status()
    samples: list[float] = []
    started = time.perf_counter()
    for _ in range(count):
        begin = time.perf_counter()
        response = send()
        samples.append((time.perf_counter() - begin) * 1000)
        if response.status_code != 200 or not check(response.json()):
            raise BenchError(f"{label}: {response.status_code} {response.text[:500]}")
    return Series(label, samples, time.perf_counter() - started)


def whoami(requests: int) -> None:
    with tempfile.TemporaryDirectory(prefix="etikett-bench-") as folder:
        server = DevServer(Path(folder) / "home")
        progress(f"starting etikett dev on {server.url}")
        started = time.monotonic()
        try:
            server.start()
            startup_s = time.monotonic() - started
            series = measure_gateway(server.url, requests)
        except BaseException:
            log = server.output() if server.log.exists() else ""
            server.stop()
            if log:
                print(f"--- etikett dev output ---\n{log[-4000:]}", file=sys.stderr)
            raise
        code = server.stop()
    version = series[0]
    print(
        f"\nLocal gateway (etikett dev, moto's server in process): {requests} sequential requests "
        f"after {WARMUP_REQUESTS} warm-up, one keep-alive connection, ms"
    )
    reference = percentile(version.samples_ms, 50)
    print(
        table(
            ["request", "p50", "p90", "p99", "max", "req/s", "p50 ÷ version"],
            [s.row(None if s is version else reference) for s in series],
        )
    )
    print(f"\n(etikett dev ready in {startup_s:.1f} s; stopped with SIGINT, exit code {code})")


def measure_gateway(url: str, requests: int) -> list[Series]:
    with httpx.Client(base_url=url, trust_env=False, timeout=10) as client:
        answer = client.post(
            "/api/v1/auth/setup", json={"username": "bench", "password": "bench password 1"}
        )
        if answer.status_code not in (200, 201):
            raise BenchError(f"setup: {answer.status_code} {answer.text[:500]}")
        session = answer.json()["token"]
        answer = client.post(
            "/api/v1/auth/tokens",
            json={"subject": "bench", "role": "designer"},
            headers={"authorization": f"Bearer {session}"},
        )
        if answer.status_code not in (200, 201):
            raise BenchError(f"create token: {answer.status_code} {answer.text[:500]}")
        service = answer.json()["token"]

        def whoami_as(token: str) -> Callable[[], httpx.Response]:
            headers = {"authorization": f"Bearer {token}"}
            return lambda: client.get("/api/v1/auth/whoami", headers=headers)

        progress(f"timing 3 series of {requests} requests")
        return [
            time_requests(
                "GET /api/v1/version (no auth, no DynamoDB)",
                lambda: client.get("/api/v1/version"),
                requests,
                lambda body: isinstance(body, dict),
            ),
            time_requests(
                "GET /api/v1/auth/whoami, session etku_",
                whoami_as(session),
                requests,
                lambda body: body.get("actor") == "human",
            ),
            time_requests(
                "GET /api/v1/auth/whoami, service etks_",
                whoami_as(service),
                requests,
                lambda body: body.get("actor") == "service",
            ),
        ]


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", choices=["coldstart", "whoami"], help="run one benchmark")
    parser.add_argument(
        "--repeat", type=int, default=7, help="fresh processes per cold-start row (default 7)"
    )
    parser.add_argument(
        "--requests", type=int, default=300, help="timed requests per series (default 300)"
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=70,
        help="seconds for the cold-start rounds; once used up, no new round starts after the "
        f"first {MIN_ROUNDS} (default 70; 0: no limit)",
    )
    arguments = parser.parse_args(argv)
    if arguments.repeat < 1 or arguments.requests < 1:
        parser.error("--repeat and --requests must be at least 1")

    started = time.monotonic()
    print(
        f"Etikett benchmarks, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
        f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}; load average "
        + " ".join(f"{load:.1f}" for load in os.getloadavg())
    )
    try:
        if arguments.only in (None, "coldstart"):
            coldstart(arguments.repeat, arguments.time_budget)
        if arguments.only in (None, "whoami"):
            whoami(arguments.requests)
    except BenchError as error:
        print(f"\nbenchmark failed: {error}", file=sys.stderr)
        return 1
    print(
        f"\nTotal {time.monotonic() - started:.0f} s; load average now "
        + " ".join(f"{load:.1f}" for load in os.getloadavg())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
