"""MCP endpoint benchmark: `tools/list` latency, and `tools/call` of getLabelDocument, listLabels
and postLabelPreview through /mcp against the same REST calls, through the local gateway (`etikett
dev`); beside them the bare MCP SDK floor (`mcp_floor.py`: the SDK's stateless server with a no-op
tool against a plain Starlette route, behind the same gateway); then a check that the tool catalog
is generated once per cold start, not per request. Prints its figures as tables.

    .venv/bin/python bench/mcp_bench.py                     # 5 rounds of 100 timed requests
    .venv/bin/python bench/mcp_bench.py --rounds 7 --requests 200

20 untimed warm-up requests, then the rounds; each turn of a round sends one request of every
series (sequential, one keep-alive connection per server): the series compared with each other
back to back, in a shuffled order, the groups in a shuffled order, so that load from elsewhere and
a request's place in the turn hit all series alike. A figure is the median over the
rounds of each round's p50 (or ratio, or difference), so one noisy round does not decide. MCP
requests are raw JSON-RPC posts with httpx, so the figures are the server's, not an SDK client's;
a last series times the SDK client's own call_tool for comparison. Only loopback traffic. Exit
status 0 when every measurement ran, 1 when one could not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
MARKER = "MCP-BENCH-RESULT "
WARMUP = 20
START_TIMEOUT_S = 90.0
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench", "version": "1"},
}
PASSWORD = "bench password 1"


class BenchError(RuntimeError):
    """A measurement could not run."""


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[f"{v:.1f}" if isinstance(v, float) else str(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        parts = [values[0].ljust(widths[0])]
        parts += [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, cells)])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ---------------------------------------------------------------- the dev server


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
            k: v
            for k, v in os.environ.items()
            if k not in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB")
        }
        env.update(PYTHONUNBUFFERED="1", AGENT_PORT=str(free_port()), BROKER_PORT=str(free_port()))
        command = [sys.executable, "-m", "etikett.local.cli", "dev", "--port", str(self.port)]
        command += ["--home", str(self.home), "--template", str(REPO / "template.yaml")]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        with httpx.Client(trust_env=False, timeout=2) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise BenchError(f"etikett dev exited:\n{self.output()[-3000:]}")
                try:
                    ready = client.get(f"{self.url}/api/v1/version").status_code == 200
                except httpx.TransportError:
                    ready = False
                if ready and "Press Ctrl-C to stop." in self.output():
                    return
                time.sleep(0.1)
        raise BenchError(f"etikett dev did not answer in {START_TIMEOUT_S:.0f} s")

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

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


class FloorServer:
    """`mcp_floor.py` as a subprocess: the bare SDK and a plain route behind the local gateway."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, str(REPO / "bench" / "mcp_floor.py"), "--port", str(self.port)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        with httpx.Client(trust_env=False, timeout=2) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise BenchError(f"mcp_floor.py exited:\n{self.log.read_text()[-3000:]}")
                try:
                    if client.get(f"{self.url}/plain").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        raise BenchError(f"mcp_floor.py did not answer in {START_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextmanager
def servers(folder: Path) -> Iterator[tuple[str, str]]:
    """`etikett dev` and the floor server, running: their URLs."""
    dev, floor = DevServer(folder / "home"), FloorServer(folder / "mcp-floor.log")
    progress(f"starting etikett dev on {dev.url} and the SDK floor on {floor.url}")
    try:
        dev.start()
        floor.start()
        yield dev.url, floor.url
    except BaseException:
        print(f"--- etikett dev output ---\n{dev.output()[-4000:]}", file=sys.stderr)
        raise
    finally:
        floor.stop()
        dev.stop()


# ---------------------------------------------------------------- requests


@dataclass
class Series:
    label: str
    samples_ms: list[float]
    rounds: list[list[float]] = field(default_factory=list)  # the samples, round by round

    def p(self, q: float) -> float:
        return percentile(self.samples_ms, q)

    def round_p50s(self) -> list[float]:
        return [percentile(values, 50) for values in self.rounds or [self.samples_ms]]

    def p50(self) -> float:
        """The median of the rounds' p50s."""
        return statistics.median(self.round_p50s())


def ratio(series: Series, base: Series) -> float:
    """The median over the rounds of `series`' p50 ÷ `base`'s p50 in the same round."""
    if len(series.round_p50s()) != len(base.round_p50s()):  # not timed in the same rounds
        return series.p(50) / base.p(50)
    pairs = zip(series.round_p50s(), base.round_p50s(), strict=True)
    return statistics.median(a / b for a, b in pairs)


def over_floor(mcp: Series, rest: Series, sdk: Series, plain: Series) -> float:
    """Ours over the bare SDK floor, ms: the median over the rounds of (MCP - REST) - (SDK -
    plain route), each a p50 of the same round."""
    rounds = zip(
        mcp.round_p50s(), rest.round_p50s(), sdk.round_p50s(), plain.round_p50s(), strict=True
    )
    return statistics.median((m - r) - (s - p) for m, r, s, p in rounds)


Probe = tuple[str, Callable[[], Any], Callable[[Any], bool]]


def timed(
    probes: list[Probe], n: int, rounds: int = 1, groups: list[list[int]] | None = None
) -> list[Series]:
    """Time the probes in turns, one request each per turn, so that a busy moment of a shared
    machine hits every series alike and the ratios between them stay fair; `rounds` rounds of `n`
    turns. A turn sends `groups` (lists of probe indexes, compared with each other) in a shuffled
    order, each group's requests back to back in a shuffled order."""
    for _ in range(WARMUP):
        for label, send, check in probes:
            if not check(send()):
                raise BenchError(f"{label}: warm-up request failed")
    samples: list[list[list[float]]] = [[] for _ in probes]
    # A series always first in a turn (after the other server's requests, its server idle
    # meanwhile) or always after a given one would carry that place's cost: the first request to a
    # server that has been idle for a while costs more, the more code it runs (measured: the SDK
    # floor 0.76 ms back to back, 1.16 ms after 15 ms idle). So the series compared with each
    # other go back to back, and which of them goes first is drawn each turn.
    shuffler = random.Random(31)
    turn = [list(group) for group in groups or [[index] for index in range(len(probes))]]
    for _ in range(rounds):
        for series in samples:
            series.append([])
        for _ in range(n):
            shuffler.shuffle(turn)
            order = []
            for group in turn:
                shuffler.shuffle(group)
                order += [(probes[index], samples[index]) for index in group]
            for (label, send, check), series in order:
                begin = time.perf_counter()
                answer = send()
                series[-1].append((time.perf_counter() - begin) * 1000)
                if not check(answer):
                    raise BenchError(f"{label}: {str(answer)[:500]}")
    return [
        Series(label, [v for part in values for v in part], values)
        for (label, _, _), values in zip(probes, samples, strict=True)
    ]


class Mcp:
    """Raw JSON-RPC posts to /mcp on one keep-alive connection, in either protocol era."""

    def __init__(self, client: httpx.Client, token: str, era: str) -> None:
        self.client, self.era, self.ids = client, era, 0
        self.headers = {"authorization": f"Bearer {token}", "accept": ACCEPT}
        if era == HANDSHAKE:
            initialized = self._post(
                "initialize",
                {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "mcp-bench", "version": "1"},
                },
            )
            if initialized.status_code != 200:
                raise BenchError(f"initialize: {initialized.status_code} {initialized.text[:300]}")

    def _post(self, method: str, params: dict[str, Any], name: str | None = None) -> httpx.Response:
        self.ids += 1
        headers = dict(self.headers)
        if self.era == MODERN:
            params = {**params, "_meta": META}
            headers.update({"mcp-protocol-version": MODERN, "mcp-method": method})
            if name:
                headers["mcp-name"] = name
        elif method != "initialize":
            headers["mcp-protocol-version"] = HANDSHAKE
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        return self.client.post("/mcp", json=message, headers=headers)

    def list_tools(self) -> dict[str, Any]:
        return self.list_raw().json()

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.call_raw(name, arguments).json()

    # The timed series take the raw answer and parse it in their check, after the clock stops,
    # as the REST series do: the figures are the server's, not the client's JSON parser's.
    def list_raw(self) -> httpx.Response:
        return self._post("tools/list", {})

    def call_raw(self, name: str, arguments: dict[str, Any]) -> httpx.Response:
        return self._post("tools/call", {"name": name, "arguments": arguments}, name)


def parsed(check: Callable[[dict[str, Any]], bool]) -> Callable[[httpx.Response], bool]:
    return lambda response: response.status_code == 200 and check(response.json())


def _tools(answer: dict[str, Any]) -> int:
    return len(answer.get("result", {}).get("tools", []))


def _document_ok(answer: dict[str, Any]) -> bool:
    result = answer.get("result") or {}
    if result.get("isError") is not False:
        return False
    return "document" in json.loads(result["content"][0]["text"])


def _structured_ok(key: str) -> Callable[[dict[str, Any]], bool]:
    def ok(answer: dict[str, Any]) -> bool:
        result = answer.get("result") or {}
        return result.get("isError") is False and key in json.loads(result["content"][0]["text"])

    return ok


def _image_ok(answer: dict[str, Any]) -> bool:
    result = answer.get("result") or {}
    content = result.get("content") or [{}]
    return result.get("isError") is False and any(c.get("type") == "image" for c in content)


# The series measure() returns, in this order, and which series each is compared with.
(
    REST_DOCUMENT,
    MCP_DOCUMENT,
    MCP_DOCUMENT_2025,
    REST_LIST,
    MCP_LIST,
    REST_PREVIEW,
    MCP_PREVIEW,
    LIST_DESIGNER,
    LIST_ADMIN,
    FLOOR_PLAIN,
    FLOOR_SDK,
    SDK_CLIENT,
) = range(12)
BASES = {
    MCP_DOCUMENT: REST_DOCUMENT,
    MCP_DOCUMENT_2025: REST_DOCUMENT,
    MCP_LIST: REST_LIST,
    MCP_PREVIEW: REST_PREVIEW,
    LIST_DESIGNER: REST_DOCUMENT,
    LIST_ADMIN: REST_DOCUMENT,
    FLOOR_SDK: FLOOR_PLAIN,
    SDK_CLIENT: REST_DOCUMENT,
}
# The series compared with each other, sent back to back in each turn (timed()).
GROUPS = [
    [REST_DOCUMENT, MCP_DOCUMENT, MCP_DOCUMENT_2025],
    [REST_LIST, MCP_LIST],
    [REST_PREVIEW, MCP_PREVIEW],
    [LIST_DESIGNER, LIST_ADMIN],
    [FLOOR_PLAIN, FLOOR_SDK],
]
# The operations whose MCP ÷ REST and cost over the floor are goals: (name, MCP, REST).
OPERATIONS = (
    ("getLabelDocument", MCP_DOCUMENT, REST_DOCUMENT),
    ("listLabels", MCP_LIST, REST_LIST),
    ("postLabelPreview", MCP_PREVIEW, REST_PREVIEW),
)


def measure(url: str, floor_url: str, n: int, rounds: int = 1) -> list[Series]:
    with (
        httpx.Client(base_url=url, trust_env=False, timeout=30) as client,
        httpx.Client(base_url=floor_url, trust_env=False, timeout=30) as floor_client,
    ):
        setup = client.post("/api/v1/auth/setup", json={"username": "bench", "password": PASSWORD})
        if setup.status_code != 201:
            raise BenchError(f"setup: {setup.status_code} {setup.text[:300]}")
        admin = {"authorization": f"Bearer {setup.json()['token']}"}

        def token(role: str) -> str:
            issued = client.post(
                "/api/v1/auth/tokens",
                json={"subject": f"bench-{role}", "role": role},
                headers=admin,
            )
            if issued.status_code != 201:
                raise BenchError(f"token: {issued.status_code} {issued.text[:300]}")
            return str(issued.json()["token"])

        designer, admin_token = token("designer"), token("admin")
        rest = {"authorization": f"Bearer {designer}"}
        vorlage = client.get("/api/v1/label-vorlagen", headers=rest).json()["items"][0]["id"]
        label = client.post(
            "/api/v1/labels/from-vorlage",
            json={"vorlageId": vorlage, "name": "bench"},
            headers=rest,
        ).json()["id"]

        modern, legacy = Mcp(client, designer, MODERN), Mcp(client, designer, HANDSHAKE)
        modern_admin = Mcp(client, admin_token, MODERN)
        floor = Mcp(floor_client, "unused", MODERN)
        counts = {
            "designer": _tools(modern.list_tools()),
            "admin": _tools(modern_admin.list_tools()),
        }
        arguments = {"labelId": label}
        preview_body = {"variables": {}}
        progress(f"timing 11 series, {rounds} rounds of {n} turns, each in a shuffled order")
        series = timed(
            [
                (
                    "REST GET /api/v1/labels/{id}/document",
                    lambda: client.get(f"/api/v1/labels/{label}/document", headers=rest),
                    lambda r: r.status_code == 200 and "document" in r.json(),
                ),
                (
                    "MCP tools/call getLabelDocument (2026-07-28)",
                    lambda: modern.call_raw("getLabelDocument", arguments),
                    parsed(_document_ok),
                ),
                (
                    "MCP tools/call getLabelDocument (2025-11-25)",
                    lambda: legacy.call_raw("getLabelDocument", arguments),
                    parsed(_document_ok),
                ),
                (
                    "REST GET /api/v1/labels",
                    lambda: client.get("/api/v1/labels", headers=rest),
                    lambda r: r.status_code == 200 and len(r.json()["items"]) >= 1,
                ),
                (
                    "MCP tools/call listLabels (2026-07-28)",
                    lambda: modern.call_raw("listLabels", {}),
                    parsed(_structured_ok("items")),
                ),
                (
                    "REST POST /api/v1/labels/{id}/preview",
                    lambda: client.post(
                        f"/api/v1/labels/{label}/preview", json=preview_body, headers=rest
                    ),
                    lambda r: r.status_code == 200 and r.content[:4] == b"\x89PNG",
                ),
                (
                    "MCP tools/call postLabelPreview (2026-07-28)",
                    lambda: modern.call_raw(
                        "postLabelPreview", {**arguments, "body": preview_body}
                    ),
                    parsed(_image_ok),
                ),
                (
                    f"MCP tools/list, designer ({counts['designer']} tools, 2026-07-28)",
                    modern.list_raw,
                    parsed(lambda a: _tools(a) == counts["designer"]),
                ),
                (
                    f"MCP tools/list, admin ({counts['admin']} tools, 2026-07-28)",
                    modern_admin.list_raw,
                    parsed(lambda a: _tools(a) == counts["admin"]),
                ),
                (
                    "floor: plain Starlette route (mcp_floor.py)",
                    lambda: floor_client.get("/plain"),
                    lambda r: r.status_code == 200 and r.json() == {"ok": True},
                ),
                (
                    "floor: bare SDK tools/call no-op (2026-07-28)",
                    lambda: floor.call_raw("noop", {}),
                    parsed(lambda a: (a.get("result") or {}).get("isError") is False),
                ),
            ],
            n,
            rounds,
            GROUPS,
        )
        series.append(sdk_series(url, designer, label, n))
    return series


def sdk_series(url: str, token: str, label: str, n: int) -> Series:
    """The same call from the MCP SDK's client (its default protocol): what an agent host sees."""
    import anyio
    import httpx2
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> list[float]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            samples = []
            for index in range(WARMUP + n):
                begin = time.perf_counter()
                result = await client.call_tool("getLabelDocument", {"labelId": label})
                if index >= WARMUP:
                    samples.append((time.perf_counter() - begin) * 1000)
                if result.is_error:
                    raise BenchError(f"SDK client: {result.content}")
            return samples

    return Series("MCP tools/call getLabelDocument, SDK client", anyio.run(run))


# ---------------------------------------------------------------- once per cold start


def coldstart_child(requests: int) -> None:
    """Runs inside a fresh interpreter: the local service in process (its function imports are
    the cold start), then requests over HTTP to it; reports how often the catalog was built."""
    import logging

    logging.disable(logging.INFO)
    from etikett.local.service import LocalService

    with tempfile.TemporaryDirectory(prefix="etikett-mcp-bench-") as folder:
        service = LocalService(
            REPO / "template.yaml",
            Path(folder) / "home",
            "127.0.0.1",
            free_port(),
            free_port(),
            free_port(),
        )
        started = time.perf_counter()
        service.start()
        startup_ms = (time.perf_counter() - started) * 1000
        try:
            from etikett.mcp import catalog, invoke, server

            after_start = catalog.catalog.cache_info()
            with httpx.Client(base_url=service.url, trust_env=False, timeout=30) as client:
                setup = client.post(
                    "/api/v1/auth/setup", json={"username": "bench", "password": PASSWORD}
                )
                admin = {"authorization": f"Bearer {setup.json()['token']}"}
                token = client.post(
                    "/api/v1/auth/tokens",
                    json={"subject": "bench", "role": "designer"},
                    headers=admin,
                ).json()["token"]
                mcp = Mcp(client, token, MODERN)
                for _ in range(requests):
                    if not _tools(mcp.list_tools()):
                        raise BenchError("tools/list answered no tools")
                    mcp.call("getWhoami", {})
            after_requests = catalog.catalog.cache_info()
            from etikett.api import openapi

            groups = openapi.operation_groups()
            documents, costs = [], []
            for _ in range(5):
                begin = time.perf_counter()
                spec = openapi.build()  # uncached: what a per-request generation pays
                middle = time.perf_counter()
                catalog.build(spec, groups)
                documents.append((middle - begin) * 1000)
                costs.append((time.perf_counter() - middle) * 1000)
            result = {
                "startup_ms": startup_ms,
                "requests": 2 * requests,
                "builds_after_start": after_start.misses,
                "builds_after_requests": after_requests.misses,
                "catalog_reads": after_requests.hits + after_requests.misses,
                "wire_tool_builds": server.wire_tools.cache_info().misses,
                "operations_app_builds": invoke.operations_app.cache_info().misses,
                "build_ms": statistics.median(costs),
                "document_ms": statistics.median(documents),
                "tools": len(catalog.catalog().tools),
            }
        finally:
            service.stop()
    print(MARKER + json.dumps(result), flush=True)


def coldstart(requests: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--coldstart-child", "--requests", str(requests)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
    )
    for line in done.stdout.splitlines():
        if line.startswith(MARKER):
            result: dict[str, Any] = json.loads(line.removeprefix(MARKER))
            return result
    raise BenchError(f"cold-start child: exit {done.returncode}\n{done.stderr[-3000:]}")


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=100, help="timed requests per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (figures: their median)")
    parser.add_argument("--skip-coldstart", action="store_true", help="only the latency tables")
    parser.add_argument("--coldstart-child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.coldstart_child:
        coldstart_child(min(arguments.requests, 50))
        return 0

    print(
        f"Etikett MCP benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; load average "
        + " ".join(f"{load:.1f}" for load in os.getloadavg())
    )
    try:
        with (
            tempfile.TemporaryDirectory(prefix="etikett-mcp-bench-") as folder,
            servers(Path(folder)) as (url, floor_url),
        ):
            series = measure(url, floor_url, arguments.requests, arguments.rounds)
        once = None
        if not arguments.skip_coldstart:
            progress("cold-start check in a fresh process")
            once = coldstart(arguments.requests)
    except BenchError as error:
        print(f"\nbenchmark failed: {error}", file=sys.stderr)
        return 1

    print(
        f"\nThrough the local gateway (etikett dev; the floor through the same gateway code in "
        f"mcp_floor.py): {arguments.rounds} rounds of {arguments.requests} requests after "
        f"{WARMUP} warm-up requests, compared series back to back in shuffled order, one "
        "keep-alive connection per server, ms; designer service token (the SDK client's series "
        "runs after the others, one round). p50: the median of the rounds' p50s; ÷ base: the "
        "median of the rounds' ratios"
    )
    rows = [
        [
            s.label,
            s.p50(),
            s.p(90),
            s.p(99),
            max(s.samples_ms),
            f"{ratio(s, series[BASES[index]]):.2f}" if index in BASES else "",
            f"{s.p(99) / series[BASES[index]].p(99):.2f}" if index in BASES else "",
        ]
        for index, s in enumerate(series)
    ]
    print(table(["request", "p50", "p90", "p99", "max", "p50 ÷ base", "p99 ÷ base"], rows))
    print(floor_table(series))
    if once is None:
        return 0
    print(
        "\nTool catalog per cold start (fresh process: the local service in process, its function "
        f"imports are the cold start; then {once['requests']} MCP requests over HTTP)"
    )
    verdict = "once" if once["builds_after_start"] == once["builds_after_requests"] == 1 else "FAIL"
    print(
        table(
            ["measure", "value"],
            [
                ["catalog builds after the cold start", once["builds_after_start"]],
                [
                    f"catalog builds after {once['requests']} requests",
                    once["builds_after_requests"],
                ],
                ["catalog reads (cache hits + builds)", once["catalog_reads"]],
                ["MCP Tool list builds", once["wire_tool_builds"]],
                ["operations apps built (one per group)", once["operations_app_builds"]],
                ["generating the OpenAPI document once, ms", once["document_ms"]],
                [f"building the {once['tools']} tools from it once, ms", once["build_ms"]],
                ["verdict", verdict],
            ],
        )
    )
    return 0 if verdict == "once" else 1


def floor_table(series: list[Series]) -> str:
    """The bare SDK floor and ours over it, per operation (medians over the rounds, ms)."""
    plain, sdk = series[FLOOR_PLAIN], series[FLOOR_SDK]
    floor = statistics.median(
        s - p for s, p in zip(sdk.round_p50s(), plain.round_p50s(), strict=True)
    )
    rows: list[list[Any]] = [
        [
            "bare SDK tools/call over a plain Starlette route",
            f"{floor:.2f}",
            f"{ratio(sdk, plain):.2f}",
        ]
    ]
    for name, mcp, rest in OPERATIONS:
        cost = statistics.median(
            m - r for m, r in zip(series[mcp].round_p50s(), series[rest].round_p50s(), strict=True)
        )
        ours = over_floor(series[mcp], series[rest], sdk, plain)
        rows.append(
            [f"{name}: MCP over REST", f"{cost:.2f}", f"{ratio(series[mcp], series[rest]):.2f}"]
        )
        rows.append([f"{name}: ours over the floor", f"{ours:.2f}", ""])
    return "\nThe bare MCP SDK floor and ours over it (p50s, medians over the rounds)\n" + table(
        ["measure", "ms", "÷"], rows
    )


if __name__ == "__main__":
    sys.exit(main())
