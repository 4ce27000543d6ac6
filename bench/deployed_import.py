"""Cold-start import of each function as deployed: from `sam build`'s output, not the dev venv.

    .venv/bin/python bench/deployed_import.py [--build-dir DIR] [--repeat 7] [--first-requests]

Runs `sam build` into a temporary folder (or measures an existing `--build-dir`), then imports
each function's `app.py` in fresh interpreters laid out as on Lambda: the function's folder and
its layers' `python/` folders on `sys.path`, nothing else of the venv (`python -S`: no
site-packages), bytecode from the layers only (`-B`: none written), `LAMBDA_TASK_ROOT` set and
tracing off. Prints min / median / max in ms per function against the 300 ms budget.

The interpreter is the venv's Python 3.11 (the functions' runtime), with its standard library.

`--first-requests` also answers what the import leaves to the first requests: each process, right
after its import, passes its function's first requests (`FIRST_REQUESTS`, API Gateway v2 events
built as the local gateway builds them, with an admin's service token) to the handler, against
the DynamoDB of an `etikett dev` started for the run, and times each. A cold start is the import
plus the first request; work moved from one to the other is not saved.
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
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "shared"))
BUDGET_MS = 300.0
CHILD = """
import importlib.util, os, sys, time
function, *layers = sys.argv[1:]
sys.path[:0] = [function, *layers]
started, cpu = time.perf_counter(), time.process_time()
spec = importlib.util.spec_from_file_location("app", function + "/app.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert callable(module.handler)
figures = [(time.perf_counter() - started) * 1000]
cpu_figures = [(time.process_time() - cpu) * 1000]
if os.environ.get("BENCH_EVENTS"):
    import json
    class Context:
        function_name = memory_limit_in_mb = "bench"
        invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:bench"
        aws_request_id = "bench"
        def get_remaining_time_in_millis(self):
            return 29_000
    for event in json.loads(os.environ["BENCH_EVENTS"]):
        started, cpu = time.perf_counter(), time.process_time()
        answer = module.handler(event, Context())
        figures.append((time.perf_counter() - started) * 1000)
        cpu_figures.append((time.process_time() - cpu) * 1000)
        if answer["statusCode"] != 200 or '"isError":true' in answer.get("body", ""):
            sys.exit(f"{event['rawPath']}: {answer['statusCode']} {answer.get('body', '')[:300]}")
print(" ".join(f"{figure:.1f}" for figure in figures))
print(" ".join(f"{figure:.1f}" for figure in cpu_figures))
"""
# Each function's first requests (method, path, JSON body): a list, a read or a tool call that
# goes through authentication and DynamoDB, as most requests do.
FIRST_REQUESTS: dict[str, list[tuple[str, str, dict[str, Any] | None]]] = {
    "AuthFunction": [("GET", "/api/v1/auth/whoami", None)],
    "UsersFunction": [("GET", "/api/v1/users", None)],
    "AuditFunction": [("GET", "/api/v1/audit-log", None)],
    "MiscFunction": [("GET", "/api/v1/openapi.json", None)],
    "LabelsFunction": [("GET", "/api/v1/labels", None)],
    "RunnersFunction": [("GET", "/api/v1/runner-groups", None)],
    "PrintersFunction": [("GET", "/api/v1/printers", None)],
    "PrintingFunction": [("GET", "/api/v1/print-archive", None)],
    "CountersFunction": [("GET", "/api/v1/counters", None)],
    "WebhooksFunction": [("GET", "/api/v1/webhooks", None)],
    "CredentialsFunction": [("GET", "/api/v1/credentials", None)],
    "McpFunction": [
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        (
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "getWhoami", "arguments": {}},
            },
        ),
        (
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "listLabels", "arguments": {}},
            },
        ),
    ],
}


def build(into: Path) -> Path:
    env = {
        **os.environ,
        "HOME": str(into),
        "SAM_CLI_TELEMETRY": "0",
        # As `make build`: the layers build with the project's Python and its dependencies.
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
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


# What every HTTP function imports before any code of ours: the chosen libraries alone, under the
# same cold-start settings (etikett.coldstart: GC paused).
FLOOR = "(floor: FastAPI, pynamodb, Mangum, Powertools)"
FLOOR_APP = """from etikett import coldstart
import fastapi
import fastapi.routing
import mangum
import pynamodb.models
from aws_lambda_powertools import Logger, Metrics


def handler(event, context):
    return None


coldstart.done()
"""


def with_floor(targets: dict[str, list[Path]], folder: Path) -> dict[str, list[Path]]:
    """`targets` plus the floor row: a function of nothing but FLOOR_APP, on the misc layers."""
    function = folder / "FloorFunction"
    function.mkdir()
    (function / "app.py").write_text(FLOOR_APP)
    return {**targets, FLOOR: [function, *targets["MiscFunction"][1:]]}


def import_ms(
    paths: list[Path], service: dict[str, str] | None = None
) -> tuple[list[float], list[float]]:
    """The import's ms, then each first request's (with `service`: the environment of a local
    service and the events to send), by the wall clock and by CPU time."""
    env = {
        **(service or {}),
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
    wall, cpu = result.stdout.strip().splitlines()[-2:]
    return [float(figure) for figure in wall.split()], [float(figure) for figure in cpu.split()]


def local_service(work: Path) -> tuple[Any, dict[str, str], str]:
    """An `etikett dev` for the run, the environment its functions see, and an admin's service
    token."""
    import httpx

    from etikett.local import provision
    from etikett.local.service import LOCAL_REGION
    from etikett.local.template import load

    sys.path.insert(0, str(REPO / "tests"))
    from support.server import DevServer

    server = DevServer(work / "home")
    server.start()
    api = httpx.Client(base_url=f"{server.url}/api/v1", timeout=60, trust_env=False)
    session = api.post("/auth/setup", json={"username": "bench", "password": "bench-password-1"})
    api.headers["Authorization"] = f"Bearer {session.json()['token']}"
    token = api.post("/auth/tokens", json={"subject": "bench", "role": "admin"}).json()["token"]
    endpoint = server.aws_endpoint()
    os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"})
    template = load(REPO / "template.yaml")
    region = LOCAL_REGION
    resolver = provision.provision(template, endpoint, region, {"Build": "bench"})
    env = {
        **provision.function_environment(template, resolver),
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_REGION": region,
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    return server, env, token


def events(function: str, token: str) -> list[dict[str, Any]]:
    """The function's first requests as the local gateway would pass them."""
    import json

    from etikett.local.gateway import Router, build_event
    from etikett.local.template import load

    router = Router(load(REPO / "template.yaml").routes)
    built = []
    for method, path, body in FIRST_REQUESTS[function]:
        matched = router.match(method, path)
        assert matched is not None, path
        route, path_parameters = matched
        headers = [(b"authorization", f"Bearer {token}".encode()), (b"host", b"bench.local")]
        raw = b""
        if body is not None:
            raw = json.dumps(body).encode()
            headers += [
                (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream"),
            ]
        scope = {"method": method, "path": path, "headers": headers, "query_string": b""}
        built.append(build_event(scope, raw, route, path_parameters))
    return built


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--first-requests", action="store_true")
    parser.add_argument("--functions", help="comma-separated logical ids (default: all)")
    arguments = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory(prefix="etikett-deployed-") as folder:
        started = time.perf_counter()
        build_dir = arguments.build_dir or build(Path(folder))
        built = time.perf_counter() - started
        targets = functions(build_dir)
        if arguments.functions:
            chosen = arguments.functions.split(",")
            targets = {name: paths for name, paths in targets.items() if name in chosen}
        elif not arguments.first_requests:
            targets = with_floor(targets, Path(folder))
        services: dict[str, dict[str, str] | None] = dict.fromkeys(targets)
        try:
            if arguments.first_requests:
                import json

                server, env, token = local_service(Path(folder))
                targets = {name: paths for name, paths in targets.items() if name in FIRST_REQUESTS}
                services = {
                    name: {**env, "BENCH_EVENTS": json.dumps(events(name, token))}
                    for name in targets
                }
            for name, paths in targets.items():
                import_ms(paths, services[name])  # untimed: the first process warms the caches
            figures: dict[str, list[list[float]]] = {name: [] for name in targets}
            cpu_figures: dict[str, list[list[float]]] = {name: [] for name in targets}
            for _ in range(arguments.repeat):  # round-robin: a noisy moment hits every row alike
                for name, paths in targets.items():
                    wall, cpu = import_ms(paths, services[name])
                    figures[name].append(wall)
                    cpu_figures[name].append(cpu)
        finally:
            if server is not None:
                server.stop()
    source = "an existing build" if arguments.build_dir else f"sam build, {built:.0f} s"
    print(
        f"Handler import as deployed ({source}), fresh `python -S -B` per run, "
        f"n={arguments.repeat}, ms; load {os.getloadavg()[0]:.1f}"
    )
    if arguments.first_requests:
        print("then each first request (median ms), and import + first request")
    print_table(figures)
    print("The same by CPU time (what the process itself used, whatever the machine's load):")
    print_table(cpu_figures)
    return 0


def print_table(figures: dict[str, list[list[float]]]) -> None:
    print(f"{'function':<46} {'min':>7} {'median':>7} {'max':>7}  budget < {BUDGET_MS:.0f}")
    for name, runs in figures.items():
        imports = [run[0] for run in runs]
        median = statistics.median(imports)
        verdict = "PASS" if median < BUDGET_MS else "FAIL"
        line = f"{name:<46} {min(imports):7.1f} {median:7.1f} {max(imports):7.1f}  {verdict}"
        if len(runs[0]) > 1:
            requests = [statistics.median(run[i] for run in runs) for i in range(1, len(runs[0]))]
            cold = statistics.median(run[0] + run[1] for run in runs)
            line += "  requests " + " / ".join(f"{ms:.1f}" for ms in requests)
            line += f"  import + first {cold:.1f}"
        print(line)


if __name__ == "__main__":
    sys.exit(main())
