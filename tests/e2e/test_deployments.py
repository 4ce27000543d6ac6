"""End to end: deployments rolled out to real `etikett-runner` processes, with `etikett dev` and
two printer simulators on loopback. Two Runner groups (Halle A, Halle B) with one Runner and one
printer each: a staged rollout that fails on a missing folder and recovers, the folder, HTTP and
schedule triggers, every run listed, context precedence and printer aliases changed while the
Runners run, supersede, rollback and the policy with service actors, a Runner killed mid-file, a
stage that waits for an offline Runner, and a Runner started with three arguments.

The tests of this module share one service and both sites, in the order written."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from etikett_runner.printer_sim import PrinterSimulator
from playwright.sync_api import Browser, expect

from e2e.prints import printed_serials, released_label
from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.browser import console_session, sign_in
from support.client import PASSWORD, Api, problem
from support.server import DevServer, free_port

# Flows asked for twice a second; a flow that could not start is tried again after a second.
FLOW_TUNING = [*TUNING, "--flows-seconds", "0.5", "--flow-retry-seconds", "1"]
OFFLINE_SECONDS = 4  # this module's service counts a Runner offline after 4 s without a word


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[DevServer]:
    service = DevServer(
        workdir / "home", env={"ETIKETT_RUNNER_OFFLINE_SECONDS": str(OFFLINE_SECONDS)}
    )
    service.start()
    yield service
    service.stop()


@dataclass
class Site:
    """A Runner group with one Runner process, its HTTP trigger port and data folder, and a
    printer simulator adopted as its printer."""

    name: str
    group: dict[str, Any]
    process: RunnerProcess
    runner_id: str
    simulator: PrinterSimulator
    printer: dict[str, Any]
    port: int
    data: Path

    def restart(self) -> None:
        # Later starts: the state directory (with --listen and --data-dir remembered) and tuning.
        self.process.start(*FLOW_TUNING)

    def post(self, records: Any, path: str = "orders") -> httpx.Response:
        return httpx.post(
            f"http://127.0.0.1:{self.port}/flows/{path}", json=records, timeout=10, trust_env=False
        )

    def drop(self, name: str, text: str, folder: str = "in") -> None:
        """A file arrives whole (written aside, then renamed in), as a careful sender does."""
        aside = self.data / folder / f".{name}.part"
        aside.write_text(text)
        aside.rename(self.data / folder / name)


@dataclass
class People:
    operator: Api
    approver: Api
    agent_operator: Api
    agent_approver: Api
    deployments: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def people(admin: Api) -> People:
    return People(
        operator=admin.user_session(["operator"])[1],
        approver=admin.user_session(["approver"])[1],
        agent_operator=admin.as_token(admin.service_token("operator")["token"]),
        agent_approver=admin.as_token(admin.service_token("approver")["token"]),
    )


@pytest.fixture(scope="module")
def sites(server: DevServer, admin: Api, workdir: Path) -> Iterator[dict[str, Site]]:
    made: dict[str, Site] = {}
    try:
        for name in ("A", "B"):
            simulator = PrinterSimulator(port=0, dpi=203, out_dir=None, model="ZT411-203dpi")
            simulator.start()
            process = RunnerProcess(workdir / f"runner-{name}", workdir / f"runner-{name}.log")
            port, data = free_port(), workdir / f"data-{name}"
            group = start_enrolled(
                process,
                server,
                admin,
                f"Halle {name}",
                *FLOW_TUNING,
                "--listen",
                str(port),
                "--data-dir",
                str(data),
            )
            runner_id = eventually(lambda p=process: p.enrolled_as, 30)
            eventually(lambda r=runner_id: admin.get(f"/runners/{r}").json()["status"] == "online")
            printer = admin.post(
                "/printers",
                json={
                    "name": f"Zebra {name}",
                    "runner_id": runner_id,
                    "uri": f"tcp://127.0.0.1:{simulator.port}",
                    "language": "zpl",
                    "dpi": 203,
                },
            )
            assert printer.status_code == 201, printer.text
            made[name] = Site(
                name, group, process, runner_id, simulator, printer.json(), port, data
            )
        yield made
    finally:
        for site in made.values():
            if site.process.running:
                site.process.stop()
            site.simulator.stop()


@pytest.fixture(scope="module")
def label(admin: Api) -> dict[str, Any]:
    counter = admin.post("/counters", json={"name": "dep_serial", "start": 1, "format": "000000"})
    assert counter.status_code == 201, counter.text
    return released_label(admin, "dep_serial")


def orders_flow(label_id: str, marker: str = "") -> dict[str, Any]:
    """CSV files in `in/` and `POST /flows/orders` → one label per record; a log line shows
    the context the Runner applied."""
    return {
        "nodes": [
            {"id": "files", "type": "trigger.folder", "path": "in", "wires": ["shape"]},
            {"id": "web", "type": "trigger.http", "path": "orders", "wires": ["shape"]},
            {
                "id": "shape",
                "type": "logic.set",
                "values": {"n": "int(record.n)"},
                "wires": ["note", "label"],
            },
            {
                "id": "note",
                "type": "action.log",
                "message": f"'{marker}' + context.site + '/' + context.line + '/' + context.shift",
            },
            {
                "id": "label",
                "type": "action.print",
                "label": label_id,
                "printer": "main",
                "variables": {"name": "record.name"},
            },
        ]
    }


@dataclass
class Rollout:
    flow_id: str
    first: dict[str, Any]  # version 1's deployment


@pytest.fixture(scope="module")
def rollout(admin: Api, label: dict[str, Any]) -> Rollout:
    flow = admin.post("/flows", json={"name": "Orders", "document": orders_flow(label["id"])})
    assert flow.status_code == 201, flow.text
    return Rollout(flow.json()["id"], {})


def deployment(admin: Api, deployment_id: str) -> dict[str, Any]:
    return dict(admin.get(f"/deployments/{deployment_id}").json())


def runners_of(view: dict[str, Any], stage: int) -> dict[str, tuple[str, str | None]]:
    return {r["runner_id"]: (r["status"], r["detail"]) for r in view["stages"][stage]["runners"]}


def flow_runs(admin: Api, flow_id: str, **filters: str) -> list[dict[str, Any]]:
    answer = admin.get(f"/flows/{flow_id}/runs", params={"limit": 100, **filters})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["items"])


def run_of(admin: Api, flow_id: str, predicate: Any, timeout: float = 30) -> dict[str, Any]:
    return eventually(
        lambda: next((r for r in flow_runs(admin, flow_id) if predicate(r)), None), timeout, 0.2
    )


def logged(admin: Api, site: Site, flow_id: str, record: dict[str, Any]) -> str:
    """Send one event over HTTP; the log line its run recorded."""
    sent = site.post(record)
    assert sent.status_code == 202, sent.text
    run = run_of(admin, flow_id, lambda r: r["id"] == sent.json()["run_id"])
    return str(run["trace"]["log"][0]["message"])


# --- a dry run performs nothing ---------------------------------------------------------------


def test_a_dry_run_of_a_print_flow_leaves_jobs_archive_counters_and_printers_untouched(
    admin: Api, people: People, sites: dict[str, Site], label: dict[str, Any]
) -> None:
    """With Runners online and their printers ready, a dry run lists its prints and performs
    none: no job at any Runner, no archive entry, no counter value, no label at any printer."""
    flow = admin.post(
        "/flows", json={"name": "Dry orders", "document": orders_flow(label["id"], "dry")}
    )
    assert flow.status_code == 201, flow.text
    before = {
        "jobs": {s.runner_id: newest_job(admin, s.runner_id) for s in sites.values()},
        "archive": admin.get("/print-archive", params={"limit": 1}).json()["items"],
        "counter": admin.get("/counters/dep_serial").json(),
        "odometers": {name: s.simulator.odometer for name, s in sites.items()},
    }
    answer = people.operator.post(
        f"/flows/{flow.json()['id']}/dry-run",
        json={"samples": [{"n": "1", "name": "Anna"}, {"n": "2", "name": "Berta"}]},
    )
    assert answer.status_code == 200, answer.text
    prints = [
        e for run in answer.json()["runs"] for e in run["side_effects"] if e["kind"] == "print"
    ]
    assert len(prints) == 2 and all(e["performed"] is False for e in prints)
    # The values the prints would take, in order, from the counter's next one.
    counter = before["counter"]
    upcoming = counter["start"] if counter["current"] is None else counter["current"] + 1
    values = [int(e["detail"]["counter_values"]["dep_serial"]) for e in prints]  # "000042"
    assert values == [upcoming, upcoming + 1]
    time.sleep(1)  # room for anything that should not happen
    assert {s.runner_id: newest_job(admin, s.runner_id) for s in sites.values()} == before["jobs"]
    assert admin.get("/print-archive", params={"limit": 1}).json()["items"] == before["archive"]
    assert admin.get("/counters/dep_serial").json() == before["counter"]
    assert {name: s.simulator.odometer for name, s in sites.items()} == before["odometers"]
    assert flow_runs(admin, flow.json()["id"]) == []  # dry runs are not Runner runs


# --- the staged rollout --------------------------------------------------------------------


def test_a_stage_fails_with_the_runners_reason_then_rolls_out_once_fixed(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout
) -> None:
    a, b = sites["A"], sites["B"]
    (b.data / "in").mkdir(parents=True)  # A's folder is missing
    created = people.operator.post(
        "/deployments",
        json={
            "flow_id": rollout.flow_id,
            "version": 1,
            "stages": [{"group_ids": [a.group["id"]]}, {"group_ids": [b.group["id"]]}],
            "printers": {"main": a.printer["id"]},
            "context": {"site": "dep", "line": "dep", "shift": "dep"},
        },
    )
    assert created.status_code == 201, created.text
    first = created.json()
    rollout.first.update(first)
    approved = people.approver.post(f"/deployments/{first['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text

    failed = eventually(
        lambda: (lambda d: d if d["status"] == "failed" else None)(deployment(admin, first["id"])),
        20,
    )
    assert [s["status"] for s in failed["stages"]] == ["failed", "pending"]
    status, detail = runners_of(failed, 0)[a.runner_id]
    assert status == "failed" and f"{a.data / 'in'} does not exist" in str(detail)

    (a.data / "in").mkdir(parents=True)  # fixed on site: the Runner tries again by itself
    view = eventually(
        lambda: (lambda d: d if d["status"] == "awaiting_approval" else None)(
            deployment(admin, first["id"])
        ),
        20,
    )
    assert [s["status"] for s in view["stages"]] == ["active", "awaiting_approval"]
    assert runners_of(view, 0) == {a.runner_id: ("active", None)}
    assert view["stages"][1]["runners"] == []  # not approved: B was never told


def test_the_next_stage_rolls_out_once_approved(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout
) -> None:
    a, b = sites["A"], sites["B"]
    dep_id = rollout.first["id"]
    assigned = people.operator.request(
        "PUT",
        f"/deployments/{dep_id}/printers/main",
        json={"printer_id": a.printer["id"], "by_runner": {b.runner_id: b.printer["id"]}},
    )
    assert assigned.status_code == 200, assigned.text
    approved = people.approver.post(f"/deployments/{dep_id}/approval", json={"stage": 1})
    assert approved.status_code == 200, approved.text
    assert approved.json()["stages"][1]["approved_by"]
    view = eventually(
        lambda: (lambda d: d if d["status"] == "active" else None)(deployment(admin, dep_id)), 20
    )
    assert [s["status"] for s in view["stages"]] == ["active", "active"]
    assert runners_of(view, 1) == {b.runner_id: ("active", None)}

    listed = admin.get("/deployments", params={"flow_id": rollout.flow_id}).json()["items"]
    assert [(d["id"], d["status"]) for d in listed] == [(dep_id, "active")]
    assert listed[0]["stages"] == view["stages"]
    for site, stage in ((a, 0), (b, 1)):
        by_group = admin.get(f"/runner-groups/{site.group['id']}/deployments").json()["items"]
        assert [d["id"] for d in by_group] == [dep_id]
        assert runners_of(by_group[0], stage) == {site.runner_id: ("active", None)}


# --- triggers and runs -----------------------------------------------------------------------


def test_a_dropped_file_prints_as_one_job_and_moves_to_done(
    admin: Api, sites: dict[str, Site], rollout: Rollout
) -> None:
    a = sites["A"]
    before = a.simulator.engine.printed_total
    a.drop("orders.csv", "name,n\nAnna,1\nBert,2\nCarl,3\nDora,4\nEmil,5\n")
    a.simulator.wait_printed(before + 5, timeout=30)
    eventually(lambda: (a.data / "in" / "done" / "orders.csv").exists(), 20)
    assert not list((a.data / "in").glob("*.csv"))
    assert not list((a.data / "in" / "processing").iterdir())

    run = run_of(admin, rollout.flow_id, lambda r: r["trigger"]["source"] == "orders.csv")
    assert run["outcome"] == "succeeded" and run["records"] == 5
    assert run["deployment_id"] == rollout.first["id"] and run["runner_id"] == a.runner_id
    assert run["version"] == 1 and run["trigger"]["node_id"] == "files"
    assert len(run["job_ids"]) == 1  # the event's records for one printer: one data stream
    assert [step["node_id"] for step in run["trace"]["records"][0]] == [
        "files",
        "shape",
        "note",
        "label",
    ]
    assert run["trace"]["log"][0]["message"] == "dep/dep/dep"
    entries = admin.get("/print-archive", params={"job_id": run["job_ids"][0]}).json()["items"]
    assert [e["variables"]["name"] for e in entries] == ["Anna", "Bert", "Carl", "Dora", "Emil"]
    assert {e["printer"] for e in entries} == {"Zebra A"}
    # The Runner confirms by the printer's counter after it sent the bytes: wait for that report.
    job = eventually(
        lambda: (lambda j: j if j["status"] == "confirmed" else None)(
            admin.get(f"/jobs/{run['job_ids'][0]}").json()
        ),
        20,
    )
    assert job["runner_id"] == a.runner_id
    time.sleep(1.5)  # three more looks at the folder: the file is never taken again
    assert a.simulator.engine.printed_total == before + 5
    assert (
        len(
            [r for r in flow_runs(admin, rollout.flow_id) if r["trigger"]["source"] == "orders.csv"]
        )
        == 1
    )


def test_a_bad_record_fails_alone_and_an_unreadable_file_goes_to_failed(
    admin: Api, sites: dict[str, Site], rollout: Rollout
) -> None:
    a = sites["A"]
    before = a.simulator.engine.printed_total
    a.drop("mixed.csv", "name,n\nok1,1\nbad,x\nok2,2\n")
    a.drop("broken.csv", "name,n\nok,1,extra\n")
    partial = run_of(admin, rollout.flow_id, lambda r: r["trigger"]["source"] == "mixed.csv")
    assert partial["outcome"] == "partial" and partial["records"] == 3
    assert [(e["record"], e["node_id"]) for e in partial["trace"]["errors"]] == [(1, "shape")]
    assert "int" in partial["trace"]["errors"][0]["message"]
    a.simulator.wait_printed(before + 2, timeout=30)

    failed = run_of(admin, rollout.flow_id, lambda r: r["trigger"]["source"] == "broken.csv")
    assert failed["outcome"] == "failed" and failed["records"] == 0 and failed["job_ids"] == []
    reason = eventually(
        lambda: (
            (p := a.data / "in" / "failed" / "broken.csv.reason.txt").exists() and p.read_text()
        ),
        20,
    )
    assert "line 2" in reason and "3 fields" in reason
    assert (a.data / "in" / "failed" / "broken.csv").exists()
    eventually(lambda: (a.data / "in" / "done" / "mixed.csv").exists(), 20)
    time.sleep(0.5)
    assert a.simulator.engine.printed_total == before + 2


def test_the_http_trigger_answers_with_the_run_on_loopback(
    admin: Api, sites: dict[str, Site], rollout: Rollout
) -> None:
    a = sites["A"]
    assert f"HTTP triggers on http://127.0.0.1:{a.port}/flows/" in a.process.output()
    before = a.simulator.engine.printed_total
    sent = a.post([{"name": "Web 1", "n": "1"}, {"name": "Web 2", "n": "2"}])
    assert sent.status_code == 202, sent.text
    run = run_of(admin, rollout.flow_id, lambda r: r["id"] == sent.json()["run_id"])
    assert run["trigger"] == {"node_id": "web", "source": "POST /flows/orders"}
    assert run["records"] == 2 and run["outcome"] == "succeeded" and len(run["job_ids"]) == 1
    a.simulator.wait_printed(before + 2, timeout=30)
    assert a.post({"name": "x", "n": "1"}, path="nowhere").status_code == 404
    assert a.post([1, 2]).status_code == 422
    listed = flow_runs(admin, rollout.flow_id, runner_id=a.runner_id, outcome="succeeded")
    assert sent.json()["run_id"] in {r["id"] for r in listed}
    assert all(r["outcome"] == "succeeded" for r in listed)


def test_context_deployment_then_group_then_runner_changes_apply_without_restart(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout
) -> None:
    a = sites["A"]
    pid = a.process.process.pid if a.process.process else None
    starts = a.process.output().count("--- start")
    group_base = f"/runner-groups/{a.group['id']}/context"
    for name in ("line", "shift"):
        put = people.operator.request("PUT", f"{group_base}/{name}", json={"value": "group"})
        assert put.status_code == 200, put.text
    put = people.operator.request(
        "PUT", f"/runners/{a.runner_id}/context/shift", json={"value": "runner"}
    )
    assert put.status_code == 200, put.text
    record = {"name": "ctx", "n": "1"}
    eventually(lambda: logged(admin, a, rollout.flow_id, record) == "dep/group/runner", 20, 0.2)

    people.operator.request("PUT", f"/runners/{a.runner_id}/context/shift", json={"value": "late"})
    people.operator.request(
        "PUT", f"/deployments/{rollout.first['id']}/context/site", json={"value": "dep2"}
    )
    eventually(lambda: logged(admin, a, rollout.flow_id, record) == "dep2/group/late", 20, 0.2)
    assert a.process.running and a.process.process and a.process.process.pid == pid
    assert a.process.output().count("--- start") == starts  # the same process all along


def test_printer_aliases_by_runner_and_through_the_printers_own_runner(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout
) -> None:
    a, b = sites["A"], sites["B"]
    at_a, at_b = a.simulator.engine.printed_total, b.simulator.engine.printed_total
    sent = b.post({"name": "from B", "n": "1"})
    run = run_of(admin, rollout.flow_id, lambda r: r["id"] == sent.json()["run_id"])
    b.simulator.wait_printed(at_b + 1, timeout=30)  # B's own printer (by_runner)
    assert admin.get(f"/jobs/{run['job_ids'][0]}").json()["runner_id"] == b.runner_id

    reassigned = people.operator.request(
        "PUT",
        f"/deployments/{rollout.first['id']}/printers/main",
        json={"printer_id": a.printer["id"]},
    )
    assert reassigned.status_code == 200, reassigned.text

    def printed_at_a() -> dict[str, Any] | None:
        sent = b.post({"name": "from B to A", "n": "1"})
        run = run_of(admin, rollout.flow_id, lambda r: r["id"] == sent.json()["run_id"])
        job = admin.get(f"/jobs/{run['job_ids'][0]}").json()
        return job if job["printer_id"] == a.printer["id"] else None

    job = eventually(printed_at_a, 20, 0.2)
    assert job["runner_id"] == a.runner_id  # the job went to the printer's own Runner
    a.simulator.wait_printed(at_a + 1, timeout=30)


def test_a_schedule_runs_every_tick_until_rolled_back(
    admin: Api, people: People, sites: dict[str, Site]
) -> None:
    a = sites["A"]
    ticking = admin.post(
        "/flows",
        json={
            "name": "Ticks",
            "document": {
                "nodes": [
                    {"id": "tick", "type": "trigger.schedule", "every_s": 1, "wires": ["write"]},
                    {
                        "id": "write",
                        "type": "action.file",
                        "path": "'ticks/' + runner.name + '.txt'",
                        "content": "runner.group_id",
                    },
                ]
            },
        },
    ).json()
    created = people.operator.post(
        "/deployments",
        json={"flow_id": ticking["id"], "version": 1, "stages": [{"group_ids": [a.group["id"]]}]},
    ).json()
    people.approver.post(f"/deployments/{created['id']}/approval", json={"stage": 0})
    runs = eventually(
        lambda: (lambda r: r if len(r) >= 2 else None)(flow_runs(admin, ticking["id"])), 20
    )
    assert {(r["trigger"]["node_id"], r["trigger"]["source"]) for r in runs} == {
        ("tick", "schedule")
    }
    assert all(r["records"] == 1 and r["outcome"] == "succeeded" for r in runs)
    written = list((a.data / "ticks").glob("*.txt"))
    assert [p.read_text() for p in written] == [a.group["id"]]

    rolled = people.agent_operator.post(f"/deployments/{created['id']}/rollback", json={})
    assert rolled.status_code == 200 and rolled.json()["status"] == "rolled_back"
    eventually(lambda: f"flow {ticking['id']} ({created['id']}) stopped" in a.process.output())
    count = len(flow_runs(admin, ticking["id"]))
    time.sleep(2.5)  # two ticks' time: the flow no longer runs on the Runner
    assert len(flow_runs(admin, ticking["id"])) == count


def test_an_http_action_sends_its_secret_which_stays_in_the_runners_memory(
    admin: Api, people: People, sites: dict[str, Site], workdir: Path
) -> None:
    import http.server
    import threading

    a = sites["A"]
    seen: list[str | None] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append(self.headers.get("authorization"))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    secret = "erp-e2e-9dQpWHs72k"
    try:
        made = admin.post(
            "/credentials", json={"ref": "erp-e2e", "kind": "secret", "value": secret}
        )
        assert made.status_code == 201, made.text
        flow = admin.post(
            "/flows",
            json={
                "name": "Tell the ERP",
                "document": {
                    "nodes": [
                        {"id": "web", "type": "trigger.http", "path": "erp", "wires": ["tell"]},
                        {
                            "id": "tell",
                            "type": "action.http",
                            "url": f"http://127.0.0.1:{receiver.server_address[1]}/printed",
                            "body": "record",
                            "credential": "erp-e2e",
                        },
                    ]
                },
            },
        ).json()
        created = people.operator.post(
            "/deployments",
            json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [a.group["id"]]}]},
        ).json()
        people.approver.post(f"/deployments/{created['id']}/approval", json={"stage": 0})
        eventually(lambda: deployment(admin, created["id"])["status"] == "active", 30)
        sent = a.post({"order": 1}, path="erp")
        assert sent.status_code == 202, sent.text
        run = run_of(admin, flow["id"], lambda r: r["id"] == sent.json()["run_id"])
        assert run["outcome"] == "succeeded" and seen == [f"Bearer {secret}"]
        stored = [p.read_bytes() for p in a.process.state_dir.rglob("*") if p.is_file()]
        assert stored and not any(secret.encode() in content for content in stored)
        assert secret not in a.process.output()
        rolled = people.operator.post(f"/deployments/{created['id']}/rollback", json={})
        assert rolled.status_code == 200, rolled.text
    finally:
        receiver.shutdown()
        receiver.server_close()


# --- versions: policy, supersede, rollback ---------------------------------------------------


def test_a_new_version_needs_people_supersedes_and_rolls_back(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout, label: dict[str, Any]
) -> None:
    a, b = sites["A"], sites["B"]
    patched = admin.request(
        "PATCH",
        f"/flows/{rollout.flow_id}/document",
        json={
            "operations": [
                {
                    "op": "replace",
                    "path": "/nodes/3/message",
                    "value": orders_flow(label["id"], "v2 ")["nodes"][3]["message"],
                }
            ]
        },
    )
    assert patched.status_code == 200, patched.text
    body = {
        "flow_id": rollout.flow_id,
        "version": 2,
        "stages": [{"group_ids": [a.group["id"], b.group["id"]]}],
        "printers": {"main": a.printer["id"]},
        "context": {"site": "new", "line": "new", "shift": "new"},
    }
    problem(people.agent_operator.post("/deployments", json=body), 403, "policy.human_required")
    second = people.operator.post("/deployments", json=body).json()
    problem(
        people.agent_approver.post(f"/deployments/{second['id']}/approval", json={"stage": 0}),
        403,
        "policy.human_required",
    )
    people.approver.post(f"/deployments/{second['id']}/approval", json={"stage": 0})
    view = eventually(
        lambda: (lambda d: d if d["status"] == "active" else None)(deployment(admin, second["id"])),
        20,
    )
    assert runners_of(view, 0) == {a.runner_id: ("active", None), b.runner_id: ("active", None)}
    # The Runner's report that made the stage active supersedes the older deployment next,
    # in the same request: wait for it rather than read between the two writes.
    eventually(lambda: deployment(admin, rollout.first["id"])["status"] == "superseded", 20)
    # Group A's context still wins over the new deployment's (group < Runner as before).
    assert logged(admin, a, rollout.flow_id, {"name": "v2", "n": "1"}) == "v2 new/group/late"

    rolled = people.agent_operator.post(
        f"/deployments/{second['id']}/rollback", json={"comment": "back to version 1"}
    )
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["status"] == "rolled_back"

    def back_on_version_1() -> dict[str, Any] | None:
        sent = a.post({"name": "after rollback", "n": "1"})
        if sent.status_code == 404:
            return None  # between stopping version 2 and starting version 1 again
        run = run_of(admin, rollout.flow_id, lambda r: r["id"] == sent.json()["run_id"])
        return run if run["version"] == 1 else None

    run = eventually(back_on_version_1, 20, 0.2)
    assert run["deployment_id"] == rollout.first["id"]
    assert run["trace"]["log"][0]["message"] == "dep2/group/late"
    # Deployed once, version 2 may now be deployed by an agent too (it rolls out on approval).
    again = people.agent_operator.post(
        "/deployments", json={**body, "stages": [{"group_ids": [b.group["id"]]}]}
    )
    assert again.status_code == 201, again.text
    people.deployments.append(again.json()["id"])


# --- faults --------------------------------------------------------------------------------


def newest_job(admin: Api, runner_id: str) -> str | None:
    items = admin.get(f"/runners/{runner_id}/jobs", params={"limit": 1}).json()["items"]
    return items[0]["id"] if items else None


@pytest.mark.parametrize("moment", ["file taken", "print request at the service"])
def test_a_runner_killed_mid_file_finishes_it_exactly_once(
    admin: Api, sites: dict[str, Site], rollout: Rollout, moment: str
) -> None:
    """SIGKILL right after the Runner took the file (before its run was journaled), or while
    its print request is at the service (the job exists, the Runner never heard the answer):
    after the restart every row is printed exactly once, counted at the printer."""
    a = sites["A"]
    name = f"big-{moment.split()[0]}.csv"
    before, odometer = a.simulator.engine.printed_total, a.simulator.odometer
    last_job = newest_job(admin, a.runner_id)
    a.drop(name, "name,n\n" + "".join(f"Name {i},{i}\n" for i in range(200)))
    if moment == "file taken":
        eventually(lambda: list((a.data / "in" / "processing").glob(f"*{name}")), 20, 0.005)
    else:
        eventually(lambda: newest_job(admin, a.runner_id) != last_job, 20, 0.005)
    a.process.kill()
    assert not (a.data / "in" / "done" / name).exists()
    a.restart()
    eventually(lambda: (a.data / "in" / "done" / name).exists(), 60)
    a.simulator.wait_printed(before + 200, timeout=60)
    time.sleep(1.0)  # anything printed twice would arrive now
    assert a.simulator.engine.printed_total == before + 200
    assert a.simulator.odometer == odometer + 200
    printed = printed_serials(a.simulator, 200)
    assert len(set(printed)) == 200 and "?" not in printed  # no label twice, none lost
    runs = [r for r in flow_runs(admin, rollout.flow_id) if r["trigger"]["source"] == name]
    assert len(runs) == 1 and runs[0]["records"] == 200 and len(runs[0]["job_ids"]) == 1
    assert not list((a.data / "in" / "processing").iterdir())
    assert not list((a.process.state_dir / "flow-runs").glob("*.json"))


def test_a_file_taken_while_the_service_is_away_prints_once_after_both_restart(
    server: DevServer, admin: Api, sites: dict[str, Site], rollout: Rollout
) -> None:
    a = sites["A"]
    before = a.simulator.engine.printed_total
    journal = a.process.state_dir / "flow-runs"
    server.stop()
    try:
        a.drop("late.csv", "name,n\n" + "".join(f"Late {i},{i}\n" for i in range(20)))
        eventually(lambda: list(journal.glob("frn_*.json")), 20)  # run and journaled
        a.process.kill()
    finally:
        server.start()
    a.restart()
    a.simulator.wait_printed(before + 20, timeout=60)
    eventually(lambda: (a.data / "in" / "done" / "late.csv").exists(), 30)
    time.sleep(1.0)
    assert a.simulator.engine.printed_total == before + 20
    runs = [r for r in flow_runs(admin, rollout.flow_id) if r["trigger"]["source"] == "late.csv"]
    assert len(runs) == 1 and runs[0]["records"] == 20


def test_a_stage_waits_for_an_offline_runner_and_completes_when_it_returns(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout
) -> None:
    b = sites["B"]
    assert b.process.stop() == 0
    eventually(lambda: admin.get(f"/runners/{b.runner_id}").json()["status"] == "offline", 20)
    (waiting,) = people.deployments  # version 2 to group B, created above
    approved = people.approver.post(f"/deployments/{waiting}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    view = deployment(admin, waiting)
    assert view["status"] == "rolling_out" and view["stages"][0]["status"] == "rolling_out"
    status, detail = runners_of(view, 0)[b.runner_id]
    assert status == "pending" and str(detail).startswith("offline since ")

    b.restart()
    view = eventually(
        lambda: (lambda d: d if d["status"] == "active" else None)(deployment(admin, waiting)), 30
    )
    assert runners_of(view, 0) == {b.runner_id: ("active", None)}


def test_a_deployment_bundle_is_signed_kept_private_and_a_foreign_key_refuses_it(
    admin: Api, people: People, sites: dict[str, Site], rollout: Rollout, label: dict[str, Any]
) -> None:
    """B runs version 2 from its bundle: signed by the service's key (pinned from the
    configuration), kept 0600 in the state directory, with the approved label version the flow
    prints and no secret. With another key pinned (the answers are not the service's), the
    deployment is reported failed with the reason; with the service's key back, active again."""
    import base64
    import stat

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    b = sites["B"]
    (waiting,) = people.deployments
    state = b.process.state_dir
    kept, pinned = state / "bundles" / f"{waiting}.json", state / "bundle-key.pem"
    bundle = json.loads(eventually(lambda: kept.exists() and kept.read_text(), 20))
    for private in (kept, pinned):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert not kept.is_relative_to(b.data)
    public = serialization.load_pem_public_key(pinned.read_bytes())
    data = base64.b64decode(bundle["payload"])
    public.verify(base64.b64decode(bundle["signature"]), data)  # type: ignore[union-attr]
    payload = json.loads(data)
    assert (payload["deployment_id"], payload["runner_id"]) == (waiting, b.runner_id)
    assert (payload["flow_id"], payload["version"]) == (rollout.flow_id, 2)
    assert set(payload["printers"]) == {"main"}  # the alias, with the printer assigned above
    (printed,) = payload["labels"]
    assert (printed["label_id"], printed["version"], payload["not_offline"]) == (label["id"], 2, [])
    assert "counters.dep_serial" in json.dumps(printed["document"])
    assert "credential" not in data.decode()

    service_key = pinned.read_bytes()
    assert b.process.stop() == 0
    foreign = Ed25519PrivateKey.generate().public_key()
    pinned.write_bytes(
        foreign.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    try:
        b.restart()
        _, detail = eventually(
            lambda: (lambda r: r if r[0] == "failed" else None)(
                runners_of(deployment(admin, waiting), 0)[b.runner_id]
            ),
            30,
        )
        assert "bundle is refused" in str(detail) and "signature" in str(detail), detail
    finally:
        b.process.stop()
        pinned.write_bytes(service_key)
        b.restart()
    eventually(lambda: runners_of(deployment(admin, waiting), 0)[b.runner_id] == ("active", None))


def test_a_runner_started_with_three_arguments_runs_deployed_flows(
    server: DevServer, admin: Api, people: People, workdir: Path
) -> None:
    """`--server URL --enrollment-token T --state-dir D` only: the agent channel comes from the
    enrollment, and the flows' data folder is D/data."""
    group = admin.post("/runner-groups", json={"name": "Drei"}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    process = RunnerProcess(workdir / "runner-three", workdir / "runner-three.log")
    process.start("--server", server.url, "--enrollment-token", token["token"])
    try:
        eventually(lambda: process.enrolled_as, 30)
        flow = admin.post(
            "/flows",
            json={
                "name": "Hello",
                "document": {
                    "nodes": [
                        {"id": "t", "type": "trigger.schedule", "every_s": 1, "wires": ["w"]},
                        {
                            "id": "w",
                            "type": "action.file",
                            "path": "'hello.txt'",
                            "content": "runner.id",
                        },
                    ]
                },
            },
        ).json()
        created = people.operator.post(
            "/deployments",
            json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group["id"]]}]},
        ).json()
        people.approver.post(f"/deployments/{created['id']}/approval", json={"stage": 0})
        hello = process.state_dir / "data" / "hello.txt"
        assert eventually(lambda: hello.exists() and hello.read_text(), 30) == process.enrolled_as
        eventually(lambda: deployment(admin, created["id"])["status"] == "active", 20)
        assert "certificate_required" not in process.output()
        settings = json.loads((process.state_dir / "settings.json").read_text())
        assert "listen" not in settings and "data_dir" not in settings
    finally:
        process.stop()


# --- offline printing (the last test: it stops and restarts the service) ------------------------


def test_with_the_service_stopped_a_site_prints_from_its_reserved_counter_block(
    server: DevServer,
    admin: Api,
    people: People,
    sites: dict[str, Site],
    label: dict[str, Any],
    browser: Browser,
) -> None:
    """A folder flow deployed to A with offline printing allowed: while the service answers,
    the Runner reserves a block of the label's counter; with the service stopped, the records
    of a dropped file print at the simulator with distinct values from that block, journaled as
    offline prints; the Runner killed and started again while the service is still down prints
    the next file with the next values; with the service back, the sync archives each label
    once, marked printed offline."""
    a = sites["A"]
    flow = admin.post(
        "/flows",
        json={
            "name": "Offline orders",
            "document": {
                "nodes": [
                    {"id": "files", "type": "trigger.folder", "path": "offline-in", "wires": ["p"]},
                    {
                        "id": "p",
                        "type": "action.print",
                        "label": label["id"],
                        "printer": "main",
                        "variables": {"name": "record.name"},
                    },
                ]
            },
        },
    ).json()
    (a.data / "offline-in").mkdir()
    policy = {"allowed": True, "max_hours": 1, "max_labels": 200, "counter_block_size": 120}
    created = people.operator.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [a.group["id"]]}],
            "printers": {"main": a.printer["id"]},
            "offline": policy,
        },
    )
    assert created.status_code == 201, created.text
    people.approver.post(f"/deployments/{created.json()['id']}/approval", json={"stage": 0})
    journal = a.process.state_dir / "counter-blocks.jsonl"

    def reserved() -> dict[str, Any] | None:
        lines = journal.read_text().splitlines() if journal.exists() else []
        blocks = [json.loads(line) for line in lines if '"kind": "block"' in line]
        return next((b for b in blocks if b["counter"] == "dep_serial"), None)

    block = eventually(reserved, 30)
    assert block["size"] == 120 and block["format"] == "000000"
    counter = admin.get("/counters/dep_serial").json()
    assert counter["current"] >= block["first"] + 119  # the service prints after the block

    before = a.simulator.engine.printed_total
    server.stop()
    a.drop("offline.csv", "name\n" + "".join(f"Offline {i}\n" for i in range(70)), "offline-in")
    a.simulator.wait_printed(before + 70, timeout=60)
    time.sleep(1.0)  # anything printed twice would arrive now
    assert a.simulator.engine.printed_total == before + 70
    printed = printed_serials(a.simulator, 70)
    assert printed == [f"{block['first'] + i:06d}" for i in range(70)]  # from the block, in order
    lines = (a.process.state_dir / "offline-prints.jsonl").read_text().splitlines()
    prints = [json.loads(line)["print"] for line in lines if '"kind": "print"' in line]
    outcomes = [json.loads(line)["outcome"] for line in lines if '"kind": "outcome"' in line]
    assert sum(len(p["records"]) * p["copies"] for p in prints) == 70 and outcomes == ["sent"]
    assert [r["variables"]["name"] for r in prints[0]["records"]] == [
        f"Offline {i}" for i in range(70)
    ]
    assert (prints[0]["label_id"], prints[0]["printer_id"]) == (label["id"], a.printer["id"])
    # The file stays taken until the run's report reaches the service.
    assert not (a.data / "offline-in" / "done" / "offline.csv").exists()

    # The site PC restarts during the outage (killed: a power cut): the Runner starts from what
    # it kept and goes on printing offline with the next values of its block.
    a.process.kill()
    a.restart()
    a.drop("more.csv", "name\n" + "".join(f"Later {i}\n" for i in range(30)), "offline-in")
    a.simulator.wait_printed(before + 100, timeout=90)
    time.sleep(1.0)
    assert a.simulator.engine.printed_total == before + 100
    assert printed_serials(a.simulator, 100) == [f"{block['first'] + i:06d}" for i in range(100)]
    assert "starting as" in a.process.output()

    # The service back: the Runner syncs what it printed. The archive holds each of the 100
    # labels once, marked printed offline with its print time and the block's value; the runs'
    # reports follow and the files go to done/.
    server.start()

    def synced() -> list[dict[str, Any]] | None:
        page = admin.get("/print-archive", params={"label_id": label["id"], "limit": 200})
        offline = [e for e in page.json()["items"] if e.get("printed_offline")]
        return offline if len(offline) >= 100 else None

    eventually(synced, 120)
    for name in ("offline.csv", "more.csv"):
        eventually(lambda n=name: (a.data / "offline-in" / "done" / n).exists(), 120)
    entries = synced() or []
    assert len(entries) == 100  # nothing archived twice by a retried upload
    values = sorted(int(value) for e in entries for value in e["serials"].values())
    assert values == [block["first"] + i for i in range(100)]
    assert all(e["printed_at"] for e in entries)
    assert not (a.process.state_dir / "offline-prints.jsonl").read_text().strip()

    # The console marks them: in the archive, and on the job the sync made of each print.
    with console_session(browser) as session:
        page = session.page
        sign_in(page, server.url, "admin", PASSWORD)
        page.goto(f"{server.url}/console/archive")
        expect(page.get_by_text("printed offline").first).to_be_visible()
        page.goto(f"{server.url}/console/jobs/{entries[0]['job_id']}")
        expect(page.get_by_text("Printed on site while the service was away")).to_be_visible()
        expect(page.locator(".job-status")).to_contain_text("outcome sent")
        session.assert_clean(server.url)
