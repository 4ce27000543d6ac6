"""Deployed flows on the Runner, against a fake agent channel: prints collected per event and
printer, delivered exactly once across restarts, refusals that fail only the records they name,
folder arrival, flows started, changed and failed with reasons, and the site effects' bounds."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from etikett_runner import flow_effects, reach
from etikett_runner.connectivity import Connectivity
from etikett_runner.flow_effects import SiteEffects
from etikett_runner.flow_host import FlowHost
from etikett_runner.flow_runs import RUN_ID, Batch, EventFile, PendingRun, RunJournal
from etikett_runner.http_triggers import HttpTriggers
from etikett_runner.roots import AllowedRoots
from etikett_runner.run_sender import RunSender
from etikett_runner.transport import Refused
from etikett_runner.tuning import Tuning
from runner_fakes import FakeChannel, eventually, refuse, spec, statuses

from etikett_engine.flows.effects import EffectFailed, FileIntent, HttpIntent, PrintIntent

LABEL = "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5"


def sender_for(channel: FakeChannel, state: Path) -> RunSender:
    stop = threading.Event()
    journal = RunJournal(state / "flow-runs")
    roots = AllowedRoots.of(state)  # the folders these tests claim files in
    return RunSender(channel, journal, Connectivity(stop), lambda r: None, roots)  # type: ignore[arg-type]


def pending(
    run_id: str, batches: list[Batch], records: int, file: EventFile | None = None
) -> PendingRun:
    return PendingRun(
        id=run_id,
        deployment_id="dep_1",
        flow_id="flw_1",
        version=1,
        trigger_node="in",
        source="orders.csv",
        started_at="2026-11-25T00:00:00+00:00",
        records=records,
        batches=batches,
        file=file,
    )


RUN = "frn_01M88H6PARY91YC74M6WPY1TQ9"


# --- effects -------------------------------------------------------------------------------


def test_prints_of_an_event_go_together_per_printer_label_and_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(flow_effects, "MAX_RECORDS_PER_PRINT", 3)
    effects = SiteEffects(tmp_path)
    for index in range(5):
        effects.record_index = index
        for printer in ("ship", "box"):
            effects.print(PrintIntent("p", LABEL, printer, 1, {"n": index}, "k"))
    effects.record_index = 5
    effects.print(PrintIntent("p", LABEL, "ship", 2, {"n": 5}, "k"))
    shapes = [(b.printer, b.copies, b.indexes) for b in effects.batches]
    assert shapes == [
        ("ship", 1, [0, 1, 2]),
        ("box", 1, [0, 1, 2]),
        ("ship", 1, [3, 4]),  # at most MAX_RECORDS_PER_PRINT records per print request
        ("box", 1, [3, 4]),
        ("ship", 2, [5]),
    ]
    assert effects.batches[0].records == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_files_stay_inside_the_data_folder(tmp_path: Path) -> None:
    effects = SiteEffects(tmp_path / "data")
    effects.file(FileIntent("f", "out/a.txt", "hello"))
    assert (tmp_path / "data" / "out" / "a.txt").read_text() == "hello"
    for path in ("../escape.txt", "/etc/passwd", "out/../../x", "."):
        with pytest.raises(EffectFailed, match="outside"):
            effects.file(FileIntent("f", path, "x"))


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on loopback; the Host headers it saw."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            seen.append(self.headers["host"])
            body = b'{"ok": true}'
            self.send_response(201)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_port}", seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def policy() -> Iterator[Callable[[reach.Reach], None]]:
    yield reach.configure
    reach.configure(None)


def test_http_to_loopback_needs_the_runners_allowance(
    tmp_path: Path,
    receiver: tuple[str, list[str]],
    policy: Callable[[reach.Reach], None],
) -> None:
    url, seen = receiver
    effects = SiteEffects(tmp_path)
    intent = HttpIntent("h", f"{url}/hook", "POST", {"n": 1}, None)
    policy(reach.Reach(outgoing_private_networks=False))
    with pytest.raises(EffectFailed, match="loopback"):
        effects.http(intent)
    assert seen == []  # refused before any connection
    policy(reach.Reach(outgoing_private_networks=True))
    outcome = effects.http(intent)
    assert outcome.result == {"status": 201, "body": {"ok": True}}
    assert seen == [url.removeprefix("http://")]


@pytest.mark.parametrize(
    ("url", "problem", "allowed"),
    [
        ("http://93.184.216.34/x", "only to loopback", True),
        ("https://10.1.2.3/x", "private address", False),
        ("https://192.168.1.10/x", "private address", False),
        ("https://169.254.169.254/latest", "link-local", True),
        ("https://[fe80::1]/x", "link-local", True),
        ("ftp://127.0.0.1/x", "https://", True),
        ("https://host.invalid/x", "resolve", False),
    ],
)
def test_http_goes_only_where_the_policy_allows(
    tmp_path: Path,
    policy: Callable[[reach.Reach], None],
    url: str,
    problem: str,
    allowed: bool,
) -> None:
    policy(reach.Reach(outgoing_private_networks=allowed))
    with pytest.raises(EffectFailed, match=problem):
        SiteEffects(tmp_path).http(HttpIntent("h", url, "POST", None, None))


def test_a_name_is_checked_after_it_resolves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: Callable[[reach.Reach], None]
) -> None:
    """A public-looking name that resolves to the site's network is refused on connect."""
    real = socket.getaddrinfo

    def resolving(host: str, port: object, *args: object, **kwargs: object) -> object:
        if host == "erp.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 443))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    policy(reach.Reach(outgoing_private_networks=False))
    with pytest.raises(EffectFailed, match=r"10\.0\.0\.7.*private"):
        SiteEffects(tmp_path).http(HttpIntent("h", "https://erp.example.com/x", "GET", None, None))


# --- delivery ------------------------------------------------------------------------------


def test_a_run_is_sent_reported_and_its_file_moved_then_forgotten(tmp_path: Path) -> None:
    channel = FakeChannel()
    sender = sender_for(channel, tmp_path)
    folder = tmp_path / "in"
    (folder / "processing").mkdir(parents=True)
    claimed = folder / "processing" / f"{RUN}.orders.csv"
    claimed.write_text("name\nA\n")
    batch = Batch("ship", LABEL, 1, [{"n": 1}], [0], key=f"{RUN}:0")
    run = pending(RUN, [batch], 1, EventFile(str(folder), "orders.csv", str(claimed)))
    sender.submit(run)
    assert sender.owns(claimed) and (tmp_path / "flow-runs" / f"{RUN}.json").exists()
    assert sender.deliver(run, threading.Event())
    assert channel.prints[0]["idempotency_key"] == f"{RUN}:0"
    assert channel.prints[0]["deployment_id"] == "dep_1"
    report = channel.runs[0]
    assert (report["outcome"], report["records"], report["job_ids"]) == ("succeeded", 1, ["job_1"])
    assert (folder / "done" / "orders.csv").read_text() == "name\nA\n"
    assert not (tmp_path / "flow-runs" / f"{RUN}.json").exists()


def test_a_journaled_run_is_finished_after_a_restart_without_sending_twice(tmp_path: Path) -> None:
    channel = FakeChannel()
    first = sender_for(channel, tmp_path)
    batches = [
        Batch("ship", LABEL, 1, [{"n": 1}], [0], key=f"{RUN}:0"),
        Batch("box", LABEL, 1, [{"n": 1}], [0], key=f"{RUN}:1"),
    ]
    run = pending(RUN, batches, 1)
    first.submit(run)

    def away_now(body: dict[str, Any]) -> Any:
        channel.away = True  # the first request got through; then the service is gone
        return None

    channel.print_answers = [away_now]
    assert not first.deliver(run, threading.Event())
    assert len(channel.prints) == 1

    channel.away = False
    second = sender_for(channel, tmp_path)  # a new process reads the journal
    assert second.load() == 1
    stop = threading.Event()
    worker = threading.Thread(target=second.run, args=(stop,), daemon=True)
    worker.start()
    eventually(lambda: second.delivered == 1)
    stop.set()
    assert [p["printer"] for p in channel.prints] == ["ship", "box"]  # ship never again
    assert channel.runs[0]["job_ids"] == ["job_1", "job_2"]


def test_records_the_service_names_invalid_fail_alone(tmp_path: Path) -> None:
    channel = FakeChannel()
    sender = sender_for(channel, tmp_path)
    channel.print_answers = [
        refuse(
            422,
            "print.variables_invalid",
            errors=[{"record": 1, "variable": "name", "message": "is required"}],
        )
    ]
    batch = Batch("ship", LABEL, 1, [{"n": 0}, {}, {"n": 2}], [0, 1, 2], key=f"{RUN}:0")
    run = pending(RUN, [batch], 3)
    sender.submit(run)
    assert sender.deliver(run, threading.Event())
    assert [p["idempotency_key"] for p in channel.prints] == [f"{RUN}:0", f"{RUN}:0:1"]
    assert channel.prints[1]["records"] == [{"n": 0}, {"n": 2}]
    report = channel.runs[0]
    assert report["outcome"] == "partial"
    assert report["trace"]["errors"] == [
        {"record": 1, "node_id": None, "message": "print to 'ship': name is required"}
    ]


def test_a_refused_print_fails_its_records_and_the_file_goes_to_failed(tmp_path: Path) -> None:
    channel = FakeChannel()
    sender = sender_for(channel, tmp_path)
    channel.print_answers = [
        lambda body: (_ for _ in ()).throw(Refused(409, "print.in_progress", "wait")),
        refuse(409, "deployment.printer_unassigned"),
    ]
    folder = tmp_path / "in"
    (folder / "processing").mkdir(parents=True)
    claimed = folder / "processing" / f"{RUN}.a.csv"
    claimed.write_text("x")
    batch = Batch("ship", LABEL, 1, [{"n": 0}], [0], key=f"{RUN}:0")
    run = pending(RUN, [batch], 1, EventFile(str(folder), "a.csv", str(claimed)))
    sender.submit(run)
    assert not sender.deliver(run, threading.Event())  # still running there: try again later
    assert sender.deliver(run, threading.Event())
    assert channel.runs[0]["outcome"] == "failed"
    reason = (folder / "failed" / "a.csv.reason.txt").read_text()
    assert "1 of 1 records failed" in reason and "deployment.printer_unassigned" in reason
    assert (folder / "failed" / "a.csv").exists()


# --- the host ------------------------------------------------------------------------------


FOLDER_FLOW = {
    "nodes": [
        {"id": "in", "type": "trigger.folder", "path": "in", "wires": ["p"]},
        {
            "id": "p",
            "type": "action.print",
            "label": LABEL,
            "printer": "ship",
            "variables": {"name": "record.name + '@' + context.site"},
        },
    ]
}


Host = tuple[FakeChannel, FlowHost, threading.Thread]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    channel = FakeChannel()
    stop = threading.Event()
    tuning = Tuning(flows_seconds=0.05, folder_seconds=0.25, flow_retry_seconds=0.1)
    flows = FlowHost(
        channel,  # type: ignore[arg-type]
        tmp_path / "state",
        tmp_path / "data",
        Connectivity(stop),
        lambda removed: None,
        tuning=tuning,
    )
    thread = threading.Thread(target=flows.run, args=(stop,), daemon=True)
    yield channel, flows, thread
    stop.set()
    if thread.is_alive():
        thread.join(10)


def test_a_missing_folder_fails_with_its_reason_until_it_exists(host: Host, tmp_path: Path) -> None:
    channel, flows, thread = host
    channel.wanted = [spec(FOLDER_FLOW)]
    thread.start()
    eventually(lambda: statuses(channel) and statuses(channel)[-1][0] == "failed")
    assert statuses(channel)[0] == ("applying", None)
    assert "does not exist" in str(statuses(channel)[-1][1])
    time.sleep(0.3)  # tried again meanwhile, failing the same way: nothing more told
    assert [s for s, _ in statuses(channel)] == ["applying", "failed"]
    (tmp_path / "data" / "in").mkdir(parents=True)
    eventually(lambda: statuses(channel)[-1] == ("active", None))

    (tmp_path / "data" / "in" / "orders.csv").write_text("name\nAnna\nBert\n")
    eventually(lambda: channel.runs)
    assert channel.prints[0]["records"] == [{"name": "Anna@A"}, {"name": "Bert@A"}]
    assert RUN_ID.fullmatch(channel.runs[0]["id"])
    assert eventually(lambda: (tmp_path / "data" / "in" / "done" / "orders.csv").exists())

    # A context change applies to the next event, without stopping the flow.
    channel.wanted = [spec(FOLDER_FLOW, context={"site": "B"})]
    eventually(  # taken over by the running flow (waited for, not slept: a loaded CI is slow)
        lambda: any(
            getattr(flow, "spec", {}).get("context") == {"site": "B"}
            for flow in list(flows.running.values())
        )
    )
    (tmp_path / "data" / "in" / "more.csv").write_text("name\nCarl\n")
    eventually(lambda: len(channel.runs) == 2)
    assert channel.prints[1]["records"] == [{"name": "Carl@B"}]
    assert [s for s, _ in statuses(channel)] == ["applying", "failed", "active"]

    channel.wanted = []  # rolled back to nothing: the flow stops
    eventually(lambda: not flows.running)


def test_an_unassigned_alias_or_an_http_trigger_without_listen_fail_the_start(host: Host) -> None:
    channel, _, thread = host
    http_flow = {
        "nodes": [
            {"id": "web", "type": "trigger.http", "path": "orders", "wires": ["log"]},
            {"id": "log", "type": "action.log", "message": "'x'"},
        ]
    }
    channel.wanted = [
        spec(FOLDER_FLOW, printers={}),
        spec(http_flow, flow_id="flw_2", deployment_id="dep_2"),
    ]
    thread.start()
    eventually(lambda: len([s for s in statuses(channel) if s[0] == "failed"]) == 2)
    reasons = {d: b["detail"] for d, b in channel.statuses if b["status"] == "failed"}
    assert "'ship' has no printer in dep_1" in reasons["dep_1"]
    assert "--listen" in reasons["dep_2"]


def test_http_triggers_answer_202_with_the_run(host: Host, tmp_path: Path) -> None:
    import httpx

    channel, flows, thread = host
    flows.http = HttpTriggers("127.0.0.1", 0)
    flow = {
        "nodes": [
            {"id": "web", "type": "trigger.http", "path": "orders/new", "wires": ["p"]},
            {
                "id": "p",
                "type": "action.print",
                "label": LABEL,
                "printer": "ship",
                "variables": {"name": "record.name"},
            },
        ]
    }
    channel.wanted = [spec(flow)]
    thread.start()
    eventually(lambda: statuses(channel) and statuses(channel)[-1] == ("active", None))
    base = f"http://127.0.0.1:{flows.http.address[1]}"
    sent = httpx.post(f"{base}/flows/orders/new", json=[{"name": "A"}, {"name": "B"}])
    assert sent.status_code == 202
    run_id = sent.json()["run_id"]
    eventually(lambda: channel.runs)
    assert channel.runs[0]["id"] == run_id
    assert channel.runs[0]["trigger"] == {"node_id": "web", "source": "POST /flows/orders/new"}
    assert len(channel.prints) == 1 and len(channel.prints[0]["records"]) == 2
    assert httpx.post(f"{base}/flows/other", json={}).status_code == 404
    json_type = {"content-type": "application/json"}
    assert (
        httpx.post(f"{base}/flows/orders/new", content=b"{", headers=json_type).status_code == 400
    )
    assert httpx.post(f"{base}/flows/orders/new", json=[]).status_code == 422
    assert httpx.get(f"{base}/flows/orders/new").status_code == 405


def test_an_http_trigger_with_a_secret_starts_only_once_it_has_it(host: Host) -> None:
    import httpx

    channel, flows, thread = host
    flows.http = HttpTriggers("127.0.0.1", 0)
    flow = {
        "nodes": [
            {
                "id": "web",
                "type": "trigger.http",
                "path": "erp",
                "secret": "erp-in",
                "wires": ["l"],
            },
            {"id": "l", "type": "action.log", "message": "'got ' + string(record.n)"},
        ]
    }
    flow["nodes"][0]["wires"] = ["l"]
    channel.wanted = [spec(flow, printers={})]  # the service could not deliver it (yet)
    thread.start()
    eventually(lambda: statuses(channel) and statuses(channel)[-1][0] == "failed")
    assert "secret 'erp-in' was not delivered" in str(statuses(channel)[-1][1])
    base = f"http://127.0.0.1:{flows.http.address[1]}"
    assert httpx.post(f"{base}/flows/erp", json={"n": 1}).status_code == 404  # never open
    channel.wanted = [spec(flow, printers={}, credentials={"erp-in": "s3cr3t"})]
    eventually(lambda: statuses(channel)[-1] == ("active", None))
    assert httpx.post(f"{base}/flows/erp", json={"n": 1}).status_code == 401
    sent = httpx.post(
        f"{base}/flows/erp", json={"n": 2}, headers={"authorization": "Bearer s3cr3t"}
    )
    assert sent.status_code == 202
    (run,) = eventually(lambda: channel.runs)
    assert run["id"] == sent.json()["run_id"] and run["trace"]["log"][0]["message"] == "got 2"


def test_a_file_is_taken_only_once_it_stands_still(host: Host, tmp_path: Path) -> None:
    channel, _, thread = host
    folder = tmp_path / "data" / "in"
    folder.mkdir(parents=True)
    channel.wanted = [spec(FOLDER_FLOW)]
    growing = folder / "slow.csv"
    with growing.open("w") as handle:
        handle.write("name\n")
        handle.flush()
        thread.start()
        eventually(lambda: statuses(channel) and statuses(channel)[-1] == ("active", None))
        for name in ("A", "B", "C", "D", "E"):
            time.sleep(0.02)  # much faster than two looks at the folder
            handle.write(f"{name}\n")
            handle.flush()
    (folder / ".hidden.csv").write_text("name\nX\n")
    eventually(lambda: channel.runs)
    assert [r["name"] for r in channel.prints[0]["records"]] == ["A@A", "B@A", "C@A", "D@A", "E@A"]
    time.sleep(0.3)
    assert len(channel.runs) == 1 and (folder / ".hidden.csv").exists()


def test_a_record_stopped_by_its_budget_prints_nothing(host: Host) -> None:
    """A looping record (a flow that reached the Runner anyhow) is stopped by the engine's
    budget; the labels its loop collected are withdrawn, the other records print."""
    import httpx

    channel, flows, thread = host
    flows.http = HttpTriggers("127.0.0.1", 0)
    flow = {
        "nodes": [
            {"id": "web", "type": "trigger.http", "path": "loop", "wires": ["p"]},
            {
                "id": "p",
                "type": "action.print",
                "label": LABEL,
                "printer": "ship",
                "variables": {"name": "record.name"},
                "wires": ["again"],
            },
            {"id": "again", "type": "logic.filter", "condition": "record.loop", "wires": ["p"]},
        ]
    }
    channel.wanted = [spec(flow)]
    thread.start()
    eventually(lambda: statuses(channel) and statuses(channel)[-1] == ("active", None))
    base = f"http://127.0.0.1:{flows.http.address[1]}"
    records = [{"name": "A", "loop": False}, {"name": "B", "loop": True}, {"name": "C"}]
    sent = httpx.post(f"{base}/flows/loop", json=records)
    assert sent.status_code == 202
    (run,) = eventually(lambda: channel.runs)
    assert run["outcome"] == "partial"
    errors = {e["record"]: e["message"] for e in run["trace"]["errors"]}
    assert set(errors) == {1, 2} and "budget" in errors[1]
    (request,) = channel.prints
    # C printed before it failed at `record.loop` (it keeps its label); B's 500 are withdrawn.
    assert request["records"] == [{"name": "A"}, {"name": "C"}]


def test_a_flow_the_service_says_cannot_run_fails_alone_until_it_can(
    host: Host, tmp_path: Path
) -> None:
    channel, _, thread = host
    (tmp_path / "data" / "in").mkdir(parents=True)
    gone = "the printer prn_1 assigned to the alias 'ship' in dep_1 was deleted"
    schedule = {
        "nodes": [
            {"id": "tick", "type": "trigger.schedule", "every_s": 3600, "wires": ["log"]},
            {"id": "log", "type": "action.log", "message": "'tick'"},
        ]
    }
    channel.wanted = [
        spec(FOLDER_FLOW, printers={}, problems=[gone]),
        spec(schedule, flow_id="flw_2", deployment_id="dep_2"),
    ]
    thread.start()
    eventually(
        lambda: {d for d, b in channel.statuses if b["status"] != "applying"} >= {"dep_1", "dep_2"}
    )
    final = {d: (b["status"], b["detail"]) for d, b in channel.statuses}
    assert final["dep_1"] == ("failed", gone)
    assert final["dep_2"] == ("active", None)
    # Assigned again: the flow starts at once.
    channel.wanted = [
        channel.wanted[0] | {"printers": {"ship": "Zebra"}, "problems": []},
        channel.wanted[1],
    ]
    eventually(lambda: channel.statuses[-1] == ("dep_1", {"status": "active", "detail": None}))


class Receiver:
    """An HTTP endpoint on loopback that keeps each request's Authorization header and body."""

    def __init__(self) -> None:
        import http.server
        import json as json_module

        seen: list[tuple[str | None, Any]] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json_module.loads(self.rfile.read(length) or b"null")
                seen.append((self.headers.get("authorization"), body))
                answer = b'{"ok": true}'
                self.send_response(201)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                return None

        self.seen = seen
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_http_sends_a_delivered_secret_as_bearer_and_keeps_it_in_memory_only(
    host: Host, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import httpx

    receiver = Receiver()
    try:
        channel, flows, thread = host
        flows.http = HttpTriggers("127.0.0.1", 0)
        secret = "s3cr3t-Hs72kd9QpW"
        call = {"type": "action.http", "url": receiver.url, "body": "record"}
        flow = {
            "nodes": [
                {"id": "web", "type": "trigger.http", "path": "hook", "wires": ["erp", "lost"]},
                {"id": "erp", **call, "credential": "erp"},
                {"id": "lost", **call, "credential": "missing"},
            ]
        }
        channel.wanted = [spec(flow, printers={}, credentials={"erp": secret})]
        caplog.set_level("DEBUG")
        thread.start()
        eventually(lambda: statuses(channel) and statuses(channel)[-1] == ("active", None))
        base = f"http://127.0.0.1:{flows.http.address[1]}"
        channel.away = True  # the run waits in the journal: what does the state dir hold?
        assert httpx.post(f"{base}/flows/hook", json={"n": 1}).status_code == 202
        journal = tmp_path / "state" / "flow-runs"
        pending = eventually(lambda: [p.read_bytes() for p in journal.rglob("*.json")])
        assert b'"frn_' in b"".join(pending) and secret.encode() not in b"".join(pending)
        assert receiver.seen == [(f"Bearer {secret}", {"n": 1})]
        channel.away = False
        (run,) = eventually(lambda: channel.runs)
        (error,) = run["trace"]["errors"]
        assert error["node_id"] == "lost" and "'missing' was not delivered" in error["message"]
        # Held in memory only: nothing the Runner wrote or logged holds it.
        written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
        assert not any(secret.encode() in content for content in written)
        assert secret not in caplog.text and secret not in str(channel.runs)
    finally:
        receiver.close()


def test_http_sends_a_secret_only_to_the_origins_it_names(host: Host) -> None:
    """Issue 23, item 5: the service delivers a secret's origins with it; the Runner's HTTP
    node refuses to send it anywhere else (the record fails with `credential.origin_refused`,
    nothing reaches the other receiver), and sends it where it may."""
    import httpx

    allowed, other = Receiver(), Receiver()
    try:
        channel, flows, thread = host
        flows.http = HttpTriggers("127.0.0.1", 0)
        secret = "s3cr3t-origins-Hs72kd9Q"
        flow = {
            "nodes": [
                {"id": "web", "type": "trigger.http", "path": "hook", "wires": ["ok", "off"]},
                {"id": "ok", "type": "action.http", "url": allowed.url, "credential": "erp"},
                {"id": "off", "type": "action.http", "url": other.url, "credential": "erp"},
            ]
        }
        origin = allowed.url.removesuffix("/hook")
        channel.wanted = [
            spec(
                flow,
                printers={},
                credentials={"erp": secret},
                credential_origins={"erp": [origin]},
            )
        ]
        thread.start()
        eventually(lambda: statuses(channel) and statuses(channel)[-1] == ("active", None))
        base = f"http://127.0.0.1:{flows.http.address[1]}"
        assert httpx.post(f"{base}/flows/hook", json={"n": 1}).status_code == 202
        (run,) = eventually(lambda: channel.runs)
        (error,) = run["trace"]["errors"]
        assert error["node_id"] == "off", error
        assert error["message"].startswith("credential.origin_refused"), error
        assert origin in error["message"]
        assert allowed.seen == [(f"Bearer {secret}", None)]
        assert other.seen == []
    finally:
        allowed.close()
        other.close()
