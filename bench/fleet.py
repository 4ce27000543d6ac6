"""A fleet of Runners against local mode (issue 29): N simulated Runners in one asyncio process,
each with M simulated printers, speaking the real protocol over real mutual TLS and waiting for
work the way the Runner does (its own SQS queue, long-polled with its queue credentials, SigV4
signed; with `--wait wake`, as the Runner does where the service offers wakes: polling while
awake, and while idle waiting on its MQTT topic at local mode's broker; or, with `--wait channel`,
the agent channel's long poll as before issue 29).

    .venv/bin/python bench/fleet.py [--runners 500] [--printers 4] [--idle 150] [--busy 150]
                                    [--rate 50] [--wait wake|queue|channel]

1. Reference: one Runner alone, `--reference` single-label prints one after another: latency
   from sending `POST /print` to the Runner holding the claimed job, and to the label's bytes
   at its printer.
2. Idle: every Runner waits for `--idle` seconds. Counted per idle Runner per minute: its
   requests to the agent channel, its requests to SQS, and every AWS call the service makes
   (local mode's botocore calls, logged as `bench/aws_calls.py` does) less the service's own
   rate without Runners, measured first; and the agent function's busy seconds for them.
3. Busy: `--rate` single-label prints a second for `--busy` seconds, each to a random printer
   of a random Runner: the same latencies under fleet load, p50/p99, and errors (0 expected).

A simulated printer is an asyncio TCP server that takes the label bytes and answers `~HS`; a
simulated Runner reports `sent` and `confirmed` in one request after its printer took the bytes
(as the Runner does when its printer confirms within its 2 s hold).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import ssl
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from etikett_runner.queue import RENEW_BEFORE  # noqa: E402 - after the path

PASSWORD = "bench password 1"
GOAL_REQUESTS_PER_MINUTE = 3.0  # AWS requests an idle Runner causes
GOAL_LOAD_RATIO = 1.2  # p50 under fleet load ÷ a single Runner's
STATUS_ANSWER = (  # ~HS of a ready printer: three STX…ETX lines
    b"\x02030,0,0,1245,000,0,0,0,000,0,0,0\x03\r\n"
    b"\x02000,0,0,0,0,2,4,0,00000000,1,000\x03\r\n"
    b"\x021234,0\x03\r\n"
)


BUSY_RETRIES = 5
# Calls not made in a function invocation: local mode's event-source pollers (on AWS, Lambda's
# event source mappings), which poll whatever the fleet does. Listed apart, not per Runner.
POLLERS = "-"
HEARTBEAT = "POST_/api/v1/runner-agent/heartbeat"
QUEUE_ACCESS = "POST_/api/v1/runner-agent/queue-access"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else 0.0


# --- printers -------------------------------------------------------------------------------


class Printer:
    """Enough of a Zebra on raw TCP: counts labels (`^XZ`) and answers `~HS`."""

    def __init__(self) -> None:
        self.labels = 0
        self.port = 0
        self.arrived: dict[str, float] = {}  # job id → when its bytes were in
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                self.labels += data.count(b"^XZ")
                if b"~HS" in data:
                    writer.write(STATUS_ANSWER)
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            # Cancelled: the run is over with a connection open. Ended quietly here, since
            # Python 3.11's start_server asks a cancelled handler for its exception and prints
            # the CancelledError that raises.
            pass
        finally:
            writer.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()


# --- Runners ---------------------------------------------------------------------------------


@dataclass
class Counts:
    channel: Counter[str] = field(default_factory=Counter)  # agent channel requests by path
    sqs: Counter[str] = field(default_factory=Counter)  # direct SQS requests by operation
    mqtt: Counter[str] = field(default_factory=Counter)  # wake channel: connects, wakes
    channel_seconds: float = 0.0  # time agent-channel requests took (the function's busy time)
    errors: list[str] = field(default_factory=list)
    busy: int = 0  # 503 `service.busy` answers, retried after Retry-After as clients do


class WakeTopic:
    """The Runner's wake channel in the fleet's event loop: paho's MQTT client over TLS with the
    Runner's certificate, its socket watched by asyncio (as paho's own asyncio example does)."""

    def __init__(self, access: dict[str, Any], context: ssl.SSLContext, counts: Counts) -> None:
        import paho.mqtt.client as mqtt

        wake = access["wake"]
        self.counts = counts
        self.woken = asyncio.Event()
        self.woken_at = 0.0  # perf_counter of the last wake
        self.subscribed = asyncio.Event()
        self.keepalive = int(wake["keepalive_seconds"])
        self.look_seconds = float(wake["look_seconds"])
        self._loop = asyncio.get_running_loop()
        self._misc: asyncio.Task[None] | None = None
        client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=wake["client_id"],
            clean_session=False,
            protocol=mqtt.MQTTv311,
        )
        client.tls_set_context(context)
        client.on_socket_open = self._opened
        client.on_socket_close = self._closed
        client.on_socket_register_write = lambda c, u, sock: self._loop.add_writer(
            sock, c.loop_write
        )
        client.on_socket_unregister_write = lambda c, u, sock: self._loop.remove_writer(sock)
        client.on_connect = lambda c, u, f, reason, p: c.subscribe(wake["topic"], qos=1)
        client.on_subscribe = lambda c, u, mid, reasons, p: self.subscribed.set()
        client.on_message = lambda c, u, message: self._woke()
        self.client = client
        counts.mqtt["CONNECT"] += 1
        client.connect(wake["host"], int(wake["port"]), keepalive=self.keepalive)

    def _woke(self) -> None:
        self.counts.mqtt["wake"] += 1
        self.woken_at = time.perf_counter()
        self.woken.set()

    def _opened(self, client: Any, userdata: Any, sock: Any) -> None:
        self._loop.add_reader(sock, client.loop_read)
        self._misc = self._loop.create_task(self._keep())

    def _closed(self, client: Any, userdata: Any, sock: Any) -> None:
        self._loop.remove_reader(sock)
        if self._misc is not None:
            self._misc.cancel()

    async def _keep(self) -> None:
        import paho.mqtt.client as mqtt

        while self.client.loop_misc() == mqtt.MQTT_ERR_SUCCESS:  # keep-alive pings
            await asyncio.sleep(5)

    def close(self) -> None:
        self.client.disconnect()


class SimulatedRunner:
    def __init__(
        self, name: str, runner_id: str, context: ssl.SSLContext, agent_url: str, counts: Counts
    ) -> None:
        import httpx

        self.name, self.runner_id, self.counts = name, runner_id, counts
        self.agent = httpx.AsyncClient(
            base_url=f"{agent_url}/api/v1/runner-agent",
            verify=context,
            timeout=httpx.Timeout(60.0, connect=20.0),
            trust_env=False,
            limits=httpx.Limits(max_connections=4),
        )
        self.sqs = httpx.AsyncClient(timeout=60.0, trust_env=False)
        self.printers: dict[str, Printer] = {}  # uri → printer
        self.held: dict[str, float] = {}  # job id → when the claimed job reached the Runner
        self.access: dict[str, Any] = {}
        self.context = context
        self.beat_seconds = self.renewal_seconds = 0.0  # as the Runner: from its queue access
        self.wake: WakeTopic | None = None
        self.awake_until = 0.0  # monotonic: polling until then (its promise to the service)
        self.awake_seconds = 0.0
        self.woken = True  # a starting Runner looks and says it is awake
        self.work_since_told = False
        self.polling = asyncio.Event()
        self.receive_wait = 20  # seconds of its long poll, as the Runner's
        self.looked: dict[str, float] = {}  # job id → when the receive that found it started
        self._tasks: set[asyncio.Task[None]] = set()

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        for _ in range(BUSY_RETRIES):
            started = time.perf_counter()
            try:
                response = await self.agent.request(method, path, **kwargs)
            finally:
                self.counts.channel[path if "/report" not in path else "/jobs/{id}/report"] += 1
                self.counts.channel_seconds += time.perf_counter() - started
            if response.status_code != 503:
                break
            self.counts.busy += 1  # the Runner's reports and claims wait and go again
            await asyncio.sleep(float(response.headers.get("retry-after") or 1))
        if response.status_code >= 400:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
        return response.json() if response.content else None

    async def sqs_call(self, target: str, params: dict[str, Any]) -> dict[str, Any]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        access = self.access
        body = json.dumps({"QueueUrl": access["queue_url"], **params})
        request = AWSRequest(
            method="POST",
            url=access["endpoint_url"] + "/",
            data=body,
            headers={
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": f"AmazonSQS.{target}",
            },
        )
        credentials = Credentials(
            access["access_key_id"], access["secret_access_key"], access["session_token"]
        )
        for _ in range(BUSY_RETRIES):  # as botocore does in the Runner, then its backoff
            SigV4Auth(credentials, "sqs", access["region"]).add_auth(request)
            self.counts.sqs[target] += 1
            response = await self.sqs.post(request.url, content=body, headers=dict(request.headers))
            if response.status_code != 503:
                break
            self.counts.busy += 1
            await asyncio.sleep(1.0)
        if response.status_code >= 400:
            raise RuntimeError(f"SQS {target}: {response.status_code} {response.text[:200]}")
        return dict(response.json()) if response.content else {}

    async def run(self, wait: str, stop: asyncio.Event) -> None:
        await self.call("POST", "/heartbeat", json={"hostname": self.name, "version": "fleet"})
        await self.call("POST", "/jobs/release")
        if wait in ("queue", "wake"):
            self.access = await self.call("POST", "/queue-access")
            self.beat_seconds = float(self.access["heartbeat_seconds"])
            life = datetime.fromisoformat(self.access["expires_at"]) - datetime.now(UTC)
            self.renewal_seconds = (life - RENEW_BEFORE).total_seconds()
        if wait == "wake":
            if not self.access.get("wake"):
                raise RuntimeError("the service offers no wakes (is mosquitto installed?)")
            self.wake = WakeTopic(self.access, self.context, self.counts)
            await asyncio.wait_for(self.wake.subscribed.wait(), 60)
        while not stop.is_set():
            try:
                self.polling.set()
                if wait == "wake":
                    await self._await_work(stop)
                    if stop.is_set():
                        break
                    jobs = await self._receive()
                    self._start(jobs)
                    # As the Runner (intake.py): after the jobs started, not in their way.
                    await self._received(len(jobs))
                elif wait == "queue":
                    self._start(await self._receive())
                else:
                    answer = await self.call(
                        "POST", "/jobs/claim", json={"wait_seconds": 20, "max_jobs": 1}
                    )
                    self._start(answer["jobs"])
            except Exception as error:  # counted; the fleet goes on, as a Runner would
                if not stop.is_set():
                    self.counts.errors.append(f"{self.name}: {error}")
                    await asyncio.sleep(1.0)

    def _start(self, jobs: list[dict[str, Any]]) -> None:
        """The Runner holds the jobs: each goes to its printer."""
        for job in jobs:
            self.held[job["job_id"]] = time.perf_counter()
            task = asyncio.create_task(self._execute(job))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _await_work(self, stop: asyncio.Event) -> None:
        """As the Runner (etikett_runner/wake.py): poll while awake; else wait for a wake, or
        look at the queue when its look is due."""
        assert self.wake is not None
        if self.woken or time.monotonic() < self.awake_until:
            return
        self.wake.woken.clear()
        stopped = asyncio.create_task(stop.wait())
        woken = asyncio.create_task(self.wake.woken.wait())
        done, pending = await asyncio.wait(
            {stopped, woken}, timeout=self.wake.look_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        for task in pending:
            task.cancel()
        self.woken = woken in done

    async def _received(self, jobs: int) -> None:
        """As the Runner: say it polls (a heartbeat with `awake`) when woken, or when work keeps
        coming and its promise is half over."""
        self.work_since_told = self.work_since_told or jobs > 0
        left = self.awake_until - time.monotonic()
        if not (self.woken or (self.work_since_told and left < self.awake_seconds / 2)):
            return
        answer = await self.call("POST", "/heartbeat", json={"awake": True})
        self.awake_seconds = float(answer.get("awake_seconds") or 0)
        self.awake_until = time.monotonic() + self.awake_seconds
        self.woken = self.work_since_told = False

    async def _receive(self) -> list[dict[str, Any]]:
        looked = time.perf_counter()
        answer = await self.sqs_call(
            "ReceiveMessage",
            {
                "WaitTimeSeconds": self.receive_wait,
                "MaxNumberOfMessages": 1,
                "VisibilityTimeout": 20,  # as the Runner: the claim hides it for 120 s
                "MessageSystemAttributeNames": ["ApproximateReceiveCount"],
            },
        )
        received, carried = [], {}
        for message in answer.get("Messages", []):
            body = json.loads(message["Body"])
            if "notice" in body and "job_id" not in body:
                await self.sqs_call("DeleteMessage", {"ReceiptHandle": message["ReceiptHandle"]})
                continue
            data = body.pop("data_base64", None)
            if data:
                carried[body["job_id"]] = data
            delivery = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
            received.append(
                {
                    "receipt": message["ReceiptHandle"],
                    "delivery": delivery,
                    "body": json.dumps(body),
                }
            )
        if not received:
            return []
        # As the Runner: its keeper would report a job still printing after 8 s (these end
        # within a second), so the claim need not hide it for the queue's 120 s.
        claim = {"messages": received, "keeps_hidden": True}
        answer = await self.call("POST", "/jobs/claim-received", json=claim)
        jobs = list(answer["jobs"])
        for job in jobs:
            job["data_base64"] = job.get("data_base64") or carried.get(job["job_id"])
            self.looked[job["job_id"]] = looked
        return jobs

    async def _execute(self, job: dict[str, Any]) -> None:
        try:
            uri = job["payload"]["printer"]["uri"]
            host, _, port = uri.removeprefix("tcp://").rpartition(":")
            data = base64.b64decode(job["data_base64"])
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(data + b"~HS")
            await writer.drain()
            await reader.readuntil(b"\x03\r\n")
            printer = self.printers.get(uri)
            if printer is not None:
                printer.arrived[job["job_id"]] = time.perf_counter()
            writer.close()
            # As the Runner: `sent` held back and carried by the final report, one request.
            sent = {"status": "sent", "at": datetime.now(UTC).isoformat()}
            final = {"receipt": job["receipt"], "status": "confirmed", "final": True}
            final["earlier"] = [sent]
            await self.call("POST", f"/jobs/{job['job_id']}/report", json=final)
        except Exception as error:
            self.counts.errors.append(f"{self.name} job {job.get('job_id')}: {error!r}")

    async def close(self) -> None:
        if self.wake is not None:
            self.wake.close()
        for task in list(self._tasks):
            task.cancel()
        await self.agent.aclose()
        await self.sqs.aclose()


# --- the rig ---------------------------------------------------------------------------------


async def until_polling(runner: SimulatedRunner, running: asyncio.Task[None]) -> bool:
    """Wait until the Runner polls (or waits for wakes); False, with an error counted, if it
    gave up before (its queue access or its broker refused it after their retries)."""
    polling = asyncio.create_task(runner.polling.wait())
    await asyncio.wait({polling, running}, return_when=asyncio.FIRST_COMPLETED)
    if runner.polling.is_set():
        return True
    polling.cancel()
    error = running.exception() if not running.cancelled() else None
    runner.counts.errors.append(f"{runner.name} did not start: {error!r}")
    return False


async def _loop_lag(lags: list[float]) -> None:
    """How late the simulator's event loop wakes a 10 ms sleep, in ms: what its own load adds to
    every latency it measures (500 Runners share one process)."""
    while True:
        started = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append((time.perf_counter() - started - 0.01) * 1000)


def enroll(api: Any, server: Any, group_id: str, name: str, folder: Path) -> tuple[str, Any]:
    """A Runner admitted with a real key and certificate; its mutual-TLS context."""
    from support.runner_site import FakeSite

    token = api.post(f"/runner-groups/{group_id}/enrollment-tokens", json={}).json()["token"]
    site = FakeSite(folder, name)
    response = site.enroll(api_adapter(api), token)
    assert response.status_code == 201, response.text
    site.agent(server).close()  # writes cert.pem and key.pem
    context = ssl.create_default_context(cafile=str(server.ca_file))
    context.load_cert_chain(site.folder / "cert.pem", site.folder / "key.pem")
    return str(site.enrollment["runner_id"]), context


class api_adapter:  # FakeSite wants the tests' Api (post with token=)
    def __init__(self, client: Any) -> None:
        self.client = client

    def post(self, path: str, token: str | None = None, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.client.post(path, headers=headers, **kwargs)


def read_calls(log: Path, since: int) -> tuple[list[tuple[str, str]], int]:
    data = log.read_bytes()
    calls = []
    for line in data[since:].decode().splitlines():
        _, _operation, function, request = line.split("\t")
        calls.append((function, request))
    return calls, len(data)


def prepare(server: Any) -> tuple[Any, str, str]:
    """The service set up: its first administrator's client, a released one-text label, a
    Runner group."""
    import httpx

    api = httpx.Client(base_url=f"{server.url}/api/v1", timeout=120, trust_env=False)
    setup = api.post("/auth/setup", json={"username": "fleet", "password": PASSWORD})
    api.headers["Authorization"] = f"Bearer {setup.json()['token']}"
    label = api.post(
        "/labels/from-dimensions", json={"name": "fleet", "width_mm": 50, "height_mm": 25}
    ).json()
    text = {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "expression": "'F'"}
    api.patch(
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "add", "path": "/objects/-", "value": text}]},
    )
    api.post(f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"})
    group = api.post("/runner-groups", json={"name": "fleet"}).json()
    return api, str(label["id"]), str(group["id"])


async def add_runner(
    api: Any, server: Any, group_id: str, name: str, printers: int, counts: Counts, work: Path
) -> tuple[SimulatedRunner, list[Printer]]:
    """A Runner enrolled in the group with `printers` simulated printers (named
    `<name>-<slot>`), not yet running."""
    runner_id, context = enroll(api, server, group_id, name, work / "sites")
    runner = SimulatedRunner(name, runner_id, context, server.agent_url, counts)
    made = []
    for slot in range(printers):
        printer = Printer()
        await printer.start()
        made.append(printer)
        uri = f"tcp://127.0.0.1:{printer.port}"
        runner.printers[uri] = printer
        created = api.post(
            "/printers",
            json={
                "name": f"{name}-{slot}",
                "runner_id": runner_id,
                "uri": uri,
                "language": "zpl",
                "dpi": 203,
            },
        )
        assert created.status_code == 201, created.text
    return runner, made


async def fleet(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    from support.server import DevServer

    work = Path(tempfile.mkdtemp(prefix="etikett-fleet-"))
    log = work / "calls.log"
    log.touch()
    env = {
        "ETIKETT_BENCH_CALL_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(
            [str(BENCH / "aws_call_log"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    if args.wait == "wake":
        env["ETIKETT_RUNNER_AWAKE_SECONDS"] = str(int(args.awake))
    server = DevServer(work / "home", env=env)
    server.start()
    counts = Counts()
    runners: list[SimulatedRunner] = []
    printers: list[Printer] = []
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    try:
        api, label_id, group_id = prepare(server)
        started = time.monotonic()
        for index in range(args.runners):
            runner, its_printers = await add_runner(
                api, server, group_id, f"fleet-{index:05d}", args.printers, counts, work
            )
            runners.append(runner)
            printers.extend(its_printers)
        setup_seconds = time.monotonic() - started
        print(f"{args.runners} Runners, {len(printers)} printers set up in {setup_seconds:.0f} s")

        # The service's own AWS calls without Runners waiting: its functions' (scheduled work)
        # apart from the pollers'.
        await asyncio.sleep(3)
        _, offset = read_calls(log, 0)
        base_started = time.monotonic()
        await asyncio.sleep(args.baseline)
        base_calls, offset = read_calls(log, offset)
        base_seconds = time.monotonic() - base_started
        base_rate = sum(1 for f, _ in base_calls if f != POLLERS) / base_seconds

        client = httpx.AsyncClient(base_url=f"{server.url}/api/v1", timeout=120, trust_env=False)
        client.headers["Authorization"] = api.headers["Authorization"]

        async def print_one(runner: SimulatedRunner, slot: int) -> tuple[float, float] | None:
            t0 = time.perf_counter()
            body = {
                "label_id": label_id,
                "printer": f"{runner.name}-{slot}",
                "idempotency_key": f"fleet-{random.getrandbits(64):x}",
            }
            for _ in range(BUSY_RETRIES):  # a client retries 503 with the same key
                response = await client.post("/print", json=body)
                if response.status_code != 503:
                    break
                counts.busy += 1
                await asyncio.sleep(float(response.headers.get("retry-after") or 1))
            if response.status_code != 202:
                counts.errors.append(f"print: {response.status_code} {response.text[:200]}")
                return None
            job_id = response.json()["job_id"]
            printer = list(runner.printers.values())[slot]
            deadline = time.perf_counter() + 60
            while job_id not in printer.arrived and time.perf_counter() < deadline:
                await asyncio.sleep(0.002)
            if job_id not in printer.arrived or job_id not in runner.held:
                counts.errors.append(f"print {job_id}: not at the printer within 60 s")
                return None
            return (runner.held[job_id] - t0) * 1000, (printer.arrived[job_id] - t0) * 1000

        # 1. One Runner alone.
        first = runners[0]
        tasks.append(asyncio.create_task(first.run(args.wait, stop)))
        if not await until_polling(first, tasks[-1]):
            raise RuntimeError(f"the first Runner did not start: {counts.errors[-1]}")
        reference = []
        for index in range(args.reference + 3):
            result = await print_one(first, index % args.printers)
            if result is not None and index >= 3:
                reference.append(result)
            await asyncio.sleep(0.2)

        # 1b. One Runner alone at the fleet's print rate: prints overlapping in local mode's one
        # process queue for its two cores whatever the fleet's size; this isolates that.
        at_rate: list[asyncio.Task[tuple[float, float] | None]] = []
        rate_started = time.monotonic()
        rate_sent = 0
        while time.monotonic() - rate_started < args.reference_busy:
            due = rate_started + rate_sent / args.rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            slot = random.randrange(args.printers)
            at_rate.append(asyncio.create_task(print_one(first, slot)))
            rate_sent += 1
        reference_at_rate = [r for r in await asyncio.gather(*at_rate) if r is not None]

        # 2. The whole fleet, idle.
        for runner in runners[1:]:
            tasks.append(asyncio.create_task(runner.run(args.wait, stop)))
            await asyncio.sleep(args.ramp / max(1, len(runners)))
        up = await asyncio.gather(
            *(until_polling(runner, task) for runner, task in zip(runners, tasks, strict=True))
        )
        for runner, ok in zip(list(runners), up, strict=True):
            if not ok:  # counted as an error; the fleet goes on without it
                await runner.close()
                runners.remove(runner)
        await asyncio.sleep(min(5.0, args.idle / 4))  # first polls and their answers are done
        if args.wait == "wake":  # every Runner's promise to poll is over, its last poll too
            await asyncio.sleep(args.awake + 25)
        # A beat as every beat after a Runner's first (the agent function admitted it lately):
        # what the idle share of beats is counted from.
        _, offset = read_calls(log, 0)
        await asyncio.gather(*(r.call("POST", "/heartbeat", json={}) for r in runners))
        beat_calls, _ = read_calls(log, offset)
        channel_before, sqs_before = Counter(counts.channel), Counter(counts.sqs)
        busy_before = counts.channel_seconds
        started_calls, offset = read_calls(log, 0)
        idle_started = time.monotonic()
        await asyncio.sleep(args.idle)
        idle_calls, offset = read_calls(log, offset)
        idle_seconds = time.monotonic() - idle_started
        minutes = idle_seconds / 60 * len(runners)
        channel = sum((counts.channel - channel_before).values()) / minutes
        sqs = sum((counts.sqs - sqs_before).values()) / minutes
        in_functions = sum(1 for f, _ in idle_calls if f != POLLERS)
        service_calls = (in_functions - base_rate * idle_seconds) / minutes
        pollers = sum(1 for f, _ in idle_calls if f == POLLERS) / (idle_seconds / 60)
        # A window of a minute or two holds none of the beats (every 10 min) and credential
        # renewals (50 min) an idle Runner makes: their share of a minute is what a later beat
        # and each Runner's queue access cost, at the intervals the service hands out.
        per_beat = sum(1 for _, r in beat_calls if r == HEARTBEAT) / len(runners)
        per_renewal = sum(1 for _, r in started_calls if r == QUEUE_ACCESS) / max(
            1, counts.channel["/queue-access"]
        )
        direct = args.wait in ("queue", "wake")
        beats = per_beat * 60 / runners[0].beat_seconds if direct else 0.0
        renewals = per_renewal * 60 / runners[0].renewal_seconds if direct else 0.0
        # Waiting for wakes: a look at the queue every `look_seconds` (a window may hold one or
        # none of a Runner's) and the connection's keep-alive pings, at their intervals.
        wake = runners[0].wake
        looks = 60 / wake.look_seconds if wake is not None else 0.0
        pings = 60 / wake.keepalive if wake is not None else 0.0
        now = time.monotonic()
        asleep = sum(1 for r in runners if r.wake and not r.woken and r.awake_until <= now)
        busy_seconds = counts.channel_seconds - busy_before
        # The agent function's busy time for these requests (on AWS: Lambda-seconds).
        lambda_seconds = busy_seconds / minutes
        idle_errors = len(counts.errors)

        # 3. Printing across the fleet.
        results: list[asyncio.Task[tuple[float, float] | None]] = []
        firsts: list[bool] = []  # the print is its Runner's first since the idle window
        printed_to: set[str] = set()
        lags: list[float] = []
        watch = asyncio.create_task(_loop_lag(lags))
        busy_started = time.monotonic()
        sent = 0
        while time.monotonic() - busy_started < args.busy:
            due = busy_started + sent / args.rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            runner = random.choice(runners)
            firsts.append(runner.runner_id not in printed_to)  # asleep, waiting for a wake
            printed_to.add(runner.runner_id)
            results.append(asyncio.create_task(print_one(runner, random.randrange(args.printers))))
            sent += 1
        gathered = await asyncio.gather(*results)
        watch.cancel()
        loaded = [r for r in gathered if r is not None]
        # Each Runner's first print after the idle window: woken (--wait wake), or found by its
        # poll; either way the service's first print to that printer (its caches cold).
        after_idle = [
            r for r, first in zip(gathered, firsts, strict=True) if first and r is not None
        ]
        # Prints to Runners that are polling (each Runner's later prints): like for like with the
        # one Runner's, which polls throughout. Waiting at the queue, every print is such a one.
        polled = [
            r
            for r, first in zip(gathered, firsts, strict=True)
            if r is not None and (args.wait != "wake" or not first)
        ]
        labels = sum(p.labels for p in printers)
        await client.aclose()
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        for runner in runners:
            await runner.close()
        for printer in printers:
            printer.close()
        server.stop()
    return {
        "runners": args.runners,
        "printers": args.printers,
        "wait": args.wait,
        "idle_seconds": idle_seconds,
        "channel_per_runner_minute": channel,
        "sqs_per_runner_minute": sqs,
        "service_aws_per_runner_minute": service_calls,
        "beats_aws_per_runner_minute": beats,
        "renewals_aws_per_runner_minute": renewals,
        "pollers_aws_per_minute": pollers,
        # The service's share is its functions' rate less their rate without Runners: noise can
        # make it slightly negative; it counts as 0 then.
        "looks_per_runner_minute": looks,
        "pings_per_runner_minute": pings,
        "asleep_at_end_of_idle": asleep,
        "aws_per_runner_minute": max(sqs, looks)
        + pings
        + max(0.0, service_calls)
        + beats
        + renewals,
        "lambda_seconds_per_runner_minute": lambda_seconds,
        "service_base_rate": base_rate,
        "reference_hold_p50": statistics.median([r[0] for r in reference]),
        "reference_printer_p50": statistics.median([r[1] for r in reference]),
        "reference_rate_hold_p50": percentile([r[0] for r in reference_at_rate], 0.5),
        "load_hold_p50": percentile([r[0] for r in loaded], 0.5),
        "load_hold_p99": percentile([r[0] for r in loaded], 0.99),
        "first_hold_p50": percentile([r[0] for r in after_idle], 0.5) if after_idle else 0.0,
        "polled_hold_p50": percentile([r[0] for r in polled], 0.5) if polled else 0.0,
        "polled_prints": len(polled),
        "first_prints": len(after_idle),
        "load_printer_p50": percentile([r[1] for r in loaded], 0.5),
        "load_printer_p99": percentile([r[1] for r in loaded], 0.99),
        "prints": sent,
        "prints_done": len(loaded),
        "labels_at_printers": labels,
        "errors": counts.errors,
        "busy": counts.busy,
        "loop_lag_p50": percentile(lags, 0.5),
        "loop_lag_p99": percentile(lags, 0.99),
        "mqtt_connects": counts.mqtt["CONNECT"],
        "wakes": counts.mqtt["wake"],
        "idle_errors": idle_errors,
    }


def report(result: dict[str, Any]) -> bool:
    load = os.getloadavg()
    # The goal's ratio, like for like: prints to Runners that poll (a woken Runner's first print
    # has the wake's hop more, shown apart).
    ratio = result["polled_hold_p50"] / max(result["reference_hold_p50"], 1e-9)
    ratio = ratio if result["prints_done"] else 0.0
    at_rate = result["load_hold_p50"] / max(result["reference_rate_hold_p50"], 1e-9)
    at_rate = at_rate if result["prints_done"] else 0.0
    print(
        f"\nFleet: {result['runners']} Runners x {result['printers']} printers, waiting at the "
        f"{result['wait']}; load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, "
        f"{os.cpu_count()} cores"
    )
    rows = [
        ("idle: agent-channel requests / Runner / min", result["channel_per_runner_minute"]),
        ("idle: SQS requests by the Runner / Runner / min", result["sqs_per_runner_minute"]),
        ("idle: the service's AWS calls / Runner / min", result["service_aws_per_runner_minute"]),
        ("idle: its beats' AWS calls / Runner / min", result["beats_aws_per_runner_minute"]),
        ("idle: its renewals' AWS calls / Runner / min", result["renewals_aws_per_runner_minute"]),
        ("idle: its looks at the queue / Runner / min (wake)", result["looks_per_runner_minute"]),
        ("idle: MQTT keep-alive pings / Runner / min (wake)", result["pings_per_runner_minute"]),
        ("Runners asleep at the idle window's end (wake)", result["asleep_at_end_of_idle"]),
        ("idle: AWS requests in all / Runner / min (goal <= 3)", result["aws_per_runner_minute"]),
        ("idle: agent function busy s / Runner / min", result["lambda_seconds_per_runner_minute"]),
        ("idle: local pollers' AWS calls / min (not per Runner)", result["pollers_aws_per_minute"]),
        ("one Runner: POST /print -> Runner holds job, p50 ms", result["reference_hold_p50"]),
        ("one Runner: POST /print -> bytes at printer, p50 ms", result["reference_printer_p50"]),
        ("fleet load: -> Runner holds job, p50 ms", result["load_hold_p50"]),
        ("fleet load: -> Runner holds job, p99 ms", result["load_hold_p99"]),
        ("fleet load: -> bytes at printer, p50 ms", result["load_printer_p50"]),
        ("fleet load: -> bytes at printer, p99 ms", result["load_printer_p99"]),
        ("one Runner at the fleet's rate: -> holds job, p50 ms", result["reference_rate_hold_p50"]),
        ("  of them to Runners polling, p50 ms", result["polled_hold_p50"]),
        ("  such prints", result["polled_prints"]),
        ("a Runner's first print after idling: -> holds job, p50 ms", result["first_hold_p50"]),
        ("  such first prints", result["first_prints"]),
        ("fleet load p50, Runners polling / one Runner p50 (goal <= 1.2)", ratio),
        ("fleet load p50 / one Runner at the same rate p50", at_rate),
        ("prints sent / at their printer", f"{result['prints']} / {result['prints_done']}"),
        (
            "the simulator's own delay (event loop lag) while printing, p50 / p99 ms",
            f"{result['loop_lag_p50']:.1f} / {result['loop_lag_p99']:.1f}",
        ),
        (
            "MQTT connections / wakes received (wake)",
            f"{result['mqtt_connects']} / {result['wakes']}",
        ),
        ("503 service.busy answers, retried", result["busy"]),
        ("errors (0 expected)", len(result["errors"])),
    ]
    for name, value in rows:
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {name:<56} {shown:>12}")
    for error in result["errors"][:10]:
        print("   error:", error)
    return (
        not result["errors"]
        and result["aws_per_runner_minute"] <= GOAL_REQUESTS_PER_MINUTE
        and ratio <= GOAL_LOAD_RATIO
    )


def options() -> argparse.ArgumentParser:
    """The fleet's options, with `make fleet`'s defaults (tests and `make bench` parse their own
    short fleet with it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", type=int, default=500)
    parser.add_argument("--printers", type=int, default=4)
    parser.add_argument("--idle", type=float, default=150.0, help="seconds all Runners idle")
    parser.add_argument("--busy", type=float, default=150.0, help="seconds of printing")
    parser.add_argument("--rate", type=float, default=50.0, help="prints a second, fleet-wide")
    parser.add_argument("--reference", type=int, default=20, help="prints of one Runner alone")
    parser.add_argument("--baseline", type=float, default=10.0)
    parser.add_argument(
        "--reference-busy", type=float, default=20.0, help="seconds of one Runner at --rate"
    )
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds to start the fleet")
    parser.add_argument("--wait", choices=["wake", "queue", "channel"], default="wake")
    parser.add_argument(
        "--awake", type=float, default=120.0, help="seconds a woken Runner polls (--wait wake)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = options().parse_args(argv)
    result = asyncio.run(fleet(args))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if report(result) else 1


if __name__ == "__main__":
    raise SystemExit(main())
