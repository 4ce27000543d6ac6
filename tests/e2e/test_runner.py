"""End to end: the local service (`etikett dev`), real `etikett-runner` processes and two printer
simulators on loopback. Enrollment with and without approval, discovery and adoption, a rendered
label through the job queue to the printer, held / unreachable / cancelled jobs, a Runner killed
mid-job that prints nothing twice, and a removed Runner refused on the agent channel.

The tests of this module share one service and one Runner (`runner`), in the order written.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import shutil
import socket
import ssl
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from etikett_runner.printer_sim import PrinterSimulator
from PIL import Image, ImageChops

from e2e.runners import TUNING, RunnerProcess, eventually
from etikett.catalog.vorlagen import get_vorlage, sample_values
from etikett_engine.render import encode_zpl, render, resolve_variables
from support.client import Api, problem
from support.server import DevServer

FINAL = {"confirmed", "succeeded", "failed", "cancelled"}


# --- the stack ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def group(admin: Api) -> dict[str, Any]:
    response = admin.post("/runner-groups", json={"name": "Halle 1"})
    assert response.status_code == 201, response.text
    return response.json()


@pytest.fixture(scope="module")
def printers(workdir: Path) -> Iterator[tuple[PrinterSimulator, PrinterSimulator]]:
    one = PrinterSimulator(port=0, dpi=203, out_dir=workdir / "zebra-1", model="ZT411-203dpi")
    two = PrinterSimulator(port=0, dpi=300, out_dir=workdir / "zebra-2", model="ZT610-300dpi")
    with one, two:
        yield one, two


def enrollment_token(admin: Api, group: dict[str, Any], **options: Any) -> str:
    response = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json=options)
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


def runner_view(admin: Api, runner_id: str) -> dict[str, Any]:
    response = admin.get(f"/runners/{runner_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def state_runner_id(state_dir: Path) -> str | None:
    path = state_dir / "enrollment.json"
    return json.loads(path.read_text()).get("runner_id") if path.exists() else None


class Started:
    def __init__(self, process: RunnerProcess, runner_id: str, arguments: list[str]) -> None:
        self.process = process
        self.runner_id = runner_id
        self.arguments = arguments  # for a restart: what the service manager would pass again


@pytest.fixture(scope="module")
def runner(
    server: DevServer, admin: Api, group: dict[str, Any], workdir: Path
) -> Iterator[Started]:
    """A Runner enrolled without approval (the token admits it at once)."""
    process = RunnerProcess(workdir / "runner-a", workdir / "runner-a.log")
    token = enrollment_token(admin, group)
    process.start(
        "--server", server.url, "--agent-url", server.agent_url, "--ca-file",
        str(server.ca_file), "--enrollment-token", token, "--name", "Packstation", *TUNING,
    )  # fmt: skip
    try:
        runner_id = eventually(lambda: state_runner_id(process.state_dir), 20)
        eventually(lambda: runner_view(admin, runner_id)["status"] == "online", 20)
        yield Started(process, runner_id, TUNING)
    finally:
        if process.running:
            process.stop()


def job(admin: Api, job_id: str) -> dict[str, Any]:
    response = admin.get(f"/jobs/{job_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def until_final(admin: Api, job_id: str, timeout: float = 60) -> dict[str, Any]:
    return eventually(lambda: (j := job(admin, job_id))["status"] in FINAL and j, timeout)


def texts(view: dict[str, Any]) -> str:
    return "\n".join(m["text"] for m in view["messages"])


# --- enrollment -----------------------------------------------------------------------------


def test_enrolled_without_approval_the_runner_is_online(
    runner: Started, admin: Api, group: dict[str, Any]
) -> None:
    # Not `?group_id=`: that query also reads the group's enrollment records and fails (500).
    listed = admin.get("/runners").json()["items"]
    [mine] = [r for r in listed if r["id"] == runner.runner_id]
    assert mine["status"] == "online" and mine["name"] == "Packstation"
    assert mine["group_id"] == group["id"]
    assert mine["version"] and mine["hostname"] == socket.gethostname()
    state = runner.process.state_dir
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "key.pem").stat().st_mode) == 0o600
    assert (state / "certificate.pem").exists() and (state / "ca.pem").exists()
    assert json.loads((state / "settings.json").read_text())["agent_url"].startswith("https://")


def test_enrollment_with_approval_waits_for_an_admin_then_runs(
    server: DevServer, admin: Api, group: dict[str, Any], workdir: Path
) -> None:
    # As the installer sets it up: config.json beside the CA, the token in a file.
    install = workdir / "opt"
    install.mkdir()
    shutil.copy(server.ca_file, install / "ca.pem")
    (install / "config.json").write_text(
        json.dumps(
            {
                "server_url": server.url,
                "agent_url": server.agent_url,
                "group_id": group["id"],
                "group_name": group["name"],
                "ca_file": "ca.pem",
            }
        )
    )
    token_file = workdir / "enrollment-token"
    token_file.write_text(enrollment_token(admin, group, needs_approval=True) + "\n")
    process = RunnerProcess(workdir / "runner-b", workdir / "runner-b.log")
    arguments = [
        "--config",
        str(install / "config.json"),
        "--enrollment-token-file",
        str(token_file),
    ]
    process.start(*arguments, "--heartbeat-seconds", "1")
    try:
        runner_id = eventually(lambda: state_runner_id(process.state_dir), 20)
        assert runner_view(admin, runner_id)["status"] == "pending"
        pending = admin.get("/runner-enrollments", params={"status": "pending"}).json()["items"]
        [enrollment] = [e for e in pending if e["runner_id"] == runner_id]
        time.sleep(1.5)  # it waits: no certificate without approval
        assert process.running and not (process.state_dir / "certificate.pem").exists()
        approved = admin.post(f"/runner-enrollments/{enrollment['id']}/approval")
        assert approved.status_code == 200, approved.text
        eventually(lambda: runner_view(admin, runner_id)["status"] == "online", 20)
        assert process.stop() == 0  # SIGTERM: a clean stop

        # Later starts need only the state directory (the token is spent).
        process.start("--heartbeat-seconds", "1")
        assert eventually(lambda: "connected as" in process.output().split("--- start")[-1], 20)
        assert runner_view(admin, runner_id)["status"] == "online"

        # Removed by an admin: refused on the agent channel, and the process stops by itself.
        assert admin.delete(f"/runners/{runner_id}").status_code == 204
        assert process.wait(20) == 78
        assert "runner.removed" in process.output()
        context = ssl.create_default_context(cafile=str(process.state_dir / "ca.pem"))
        context.load_cert_chain(
            process.state_dir / "certificate.pem", process.state_dir / "key.pem"
        )
        with httpx.Client(verify=context, trust_env=False) as channel:
            refused = channel.post(f"{server.agent_url}/api/v1/runner-agent/heartbeat", json={})
        problem(refused, 401, "runner.removed")
    finally:
        if process.running:
            process.stop()


def test_three_arguments_are_enough(server: DevServer, admin: Api, workdir: Path) -> None:
    """`--server URL --enrollment-token T --state-dir D` and nothing else: the enrollment answer
    names the agent channel and its CA, and the Runner takes its jobs there. (A group of its
    own: the Runner stays online for a while after it stops, and group discovery would ask it.)"""
    own_group = admin.post("/runner-groups", json={"name": "Three arguments"})
    assert own_group.status_code == 201, own_group.text
    token = enrollment_token(admin, own_group.json())
    process = RunnerProcess(workdir / "runner-zero", workdir / "runner-zero.log")
    process.start("--server", server.url, "--enrollment-token", token)
    try:
        runner_id = eventually(lambda: process.enrolled_as, 20)
        eventually(lambda: runner_view(admin, runner_id)["status"] == "online", 20)
        output = process.output()
        assert f"agent channel {server.agent_url} (from the enrollment)" in output
        assert "certificate_required" not in output
        state = process.state_dir
        assert json.loads((state / "service.json").read_text()) == {"agent_url": server.agent_url}
        assert "agent_url" not in json.loads((state / "settings.json").read_text())
        assert process.stop() == 0
        process.start()  # later starts: the state directory alone
        eventually(lambda: "connected as" in process.output().split("--- start")[-1], 20)
        assert runner_view(admin, runner_id)["status"] == "online"
    finally:
        if process.running:
            process.stop()


def test_a_user_token_is_refused_on_the_agent_channel(server: DevServer, admin: Api) -> None:
    for method, path in (("POST", "/runner-agent/heartbeat"), ("GET", "/runner-agent/config")):
        refused = admin.request(method, path, json={} if method == "POST" else None)
        problem(refused, 401, "runner.certificate_required")
    # The mutual-TLS port wants a client certificate before any HTTP is spoken.
    verify = ssl.create_default_context(cafile=str(server.ca_file))
    with (
        httpx.Client(verify=verify, trust_env=False) as anonymous,
        pytest.raises(httpx.TransportError),
    ):
        anonymous.post(
            f"{server.agent_url}/api/v1/runner-agent/heartbeat", json={}, headers=admin.headers()
        )


# --- discovery and adoption --------------------------------------------------------------------


@pytest.fixture(scope="module")
def adopted(
    runner: Started, admin: Api, printers: tuple[PrinterSimulator, PrinterSimulator]
) -> dict[str, Any]:
    one, two = printers
    response = admin.post(
        f"/runners/{runner.runner_id}/discovery",
        json={"targets": [f"127.0.0.1:{one.port}", f"127.0.0.1:{two.port}"]},
    )
    assert response.status_code == 202, response.text
    found = until_final(admin, response.json()["id"])
    assert found["status"] == "succeeded", found
    findings = {f["address"]: f for f in found["result"]["findings"]}
    assert set(findings) == {f"127.0.0.1:{one.port}", f"127.0.0.1:{two.port}"}
    first = findings[f"127.0.0.1:{one.port}"]
    second = findings[f"127.0.0.1:{two.port}"]
    assert (first["model"], first["dpi"], first["status"]) == ("ZT411-203dpi", 203, "ready")
    assert (second["model"], second["dpi"], second["status"]) == ("ZT610-300dpi", 300, "ready")
    assert first["firmware"] and first["id"]
    created = admin.post("/printers", json={"finding_id": first["id"], "name": "Zebra Packtisch"})
    assert created.status_code == 201, created.text
    printer = dict(created.json())
    assert printer["uri"] == f"tcp://127.0.0.1:{one.port}" and printer["dpi"] == 203
    assert printer["runner_id"] == runner.runner_id and printer["model"] == "ZT411-203dpi"
    return printer


def test_discovered_printers_are_adopted(adopted: dict[str, Any], admin: Api) -> None:
    listed = admin.get("/printers", params={"runner_id": adopted["runner_id"]}).json()["items"]
    assert [p["id"] for p in listed] == [adopted["id"]]


def test_group_discovery_asks_every_online_runner(
    runner: Started,
    admin: Api,
    group: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
) -> None:
    target = f"127.0.0.1:{printers[1].port}"
    response = admin.post("/printers/discover", json={"group_id": group["id"], "targets": [target]})
    assert response.status_code == 202, response.text
    [sent] = response.json()["jobs"]  # the other Runner of the group was removed
    assert sent["runner_id"] == runner.runner_id
    done = until_final(admin, sent["id"])
    assert [(f["address"], f["dpi"]) for f in done["result"]["findings"]] == [(target, 300)]


# --- jobs ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def label() -> Image.Image:
    vorlage = get_vorlage("gs1-logistic-label")
    assert vorlage is not None
    document = vorlage.label()
    now = dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC)
    values = resolve_variables(document, sample_values(vorlage), use_samples=True, now=now)
    image = render(document, values, now=now)
    assert document.dpi == 203
    return image


def submit(admin: Api, runner_id: str, printer_id: str, data: bytes, **extra: Any) -> str:
    body = {"printer_id": printer_id, "data_base64": base64.b64encode(data).decode(), **extra}
    response = admin.post(f"/runners/{runner_id}/jobs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def test_a_rendered_label_prints_and_is_confirmed(
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    # Slower than the Runner holds a `sent` report for the final one to carry (2 s): the job is
    # seen `sent` before `confirmed`.
    zebra.set_condition(slow_seconds=3.5)
    before_total, before_odometer = zebra.engine.printed_total, zebra.odometer
    job_id = submit(admin, runner.runner_id, adopted["id"], encode_zpl(label), expected_labels=1)
    try:
        eventually(lambda: job(admin, job_id)["status"] == "sent", 15, every=0.02)
        done = until_final(admin, job_id)
    finally:
        zebra.set_condition(slow_seconds=0)
    assert done["status"] == "confirmed", done
    assert "Sent to Zebra Packtisch" in texts(done)
    assert f"went from {before_odometer} to {before_odometer + 1}" in texts(done)
    assert zebra.engine.printed_total == before_total + 1
    assert zebra.odometer == before_odometer + 1
    printed = zebra.printed[-1]
    assert printed.image.size == label.size
    assert ImageChops.difference(printed.image.convert("L"), label.convert("L")).getbbox() is None
    assert printed.crc_ok is True
    assert runner.process.journal_states(job_id) == ["claimed", "started", "sent", "done"]


def test_a_job_too_large_for_the_claim_answer_is_fetched_from_its_url(
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    data = encode_zpl(label, compression="hex") * 5  # five labels, ~1.2 MB: over the inline limit
    assert len(data) > 1_000_000
    before, odometer = zebra.engine.printed_total, zebra.odometer
    job_id = submit(admin, runner.runner_id, adopted["id"], data)  # the Runner counts 5 formats
    done = until_final(admin, job_id)
    assert done["status"] == "confirmed", done
    assert zebra.engine.printed_total == before + 5 and zebra.odometer == odometer + 5
    assert all(
        ImageChops.difference(p.image.convert("L"), label.convert("L")).getbbox() is None
        for p in zebra.printed[-5:]
    )
    assert runner.process.journal(job_id)[0]["payload"]["data_url"].startswith("http")


def test_out_of_paper_holds_the_job_until_refilled(
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    zebra.set_condition(paper_out=True)
    before = zebra.engine.printed_total
    job_id = submit(admin, runner.runner_id, adopted["id"], encode_zpl(label, copies=2))
    held = eventually(lambda: (j := job(admin, job_id))["status"] == "held" and j, 15)
    assert held["outcome_reason"] == "paper_out"
    assert "Held: paper_out." in texts(held)
    # The Runner's heartbeats carry the printer's state to listPrinters.
    eventually(lambda: admin.get(f"/printers?runner_id={runner.runner_id}").json()["items"][0]
               ["status"] == "paper_out", 10)  # fmt: skip
    time.sleep(1.5)  # rechecked several times meanwhile: still held, nothing sent
    assert job(admin, job_id)["status"] == "held"
    assert zebra.snapshot().formats_in_buffer == 0 and zebra.engine.printed_total == before
    zebra.set_condition(paper_out=False)
    done = until_final(admin, job_id)
    assert (done["status"], done["outcome_reason"]) == ("confirmed", None), done
    assert zebra.engine.printed_total == before + 1 and zebra.printed[-1].copies == 2


def test_a_held_job_can_be_cancelled_and_never_prints(
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    zebra.set_condition(head_open=True)
    before = zebra.odometer
    try:
        job_id = submit(admin, runner.runner_id, adopted["id"], encode_zpl(label))
        held = eventually(lambda: (j := job(admin, job_id))["status"] == "held" and j, 15)
        assert held["outcome_reason"] == "head_open"
        cancelled = admin.post(f"/jobs/{job_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        eventually(lambda: "done" in runner.process.journal_states(job_id), 10)
    finally:
        zebra.set_condition(head_open=False)
    time.sleep(1.0)
    assert zebra.odometer == before and zebra.snapshot().formats_in_buffer == 0
    assert job(admin, job_id)["status"] == "cancelled"
    assert runner.process.outcome(job_id) == {"status": "cancelled", "final": True}


def test_an_unreachable_printer_fails_the_job_after_retries(
    runner: Started, admin: Api, label: Image.Image
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    declared = admin.post(
        "/printers",
        json={
            "name": "Zebra im Lager",
            "runner_id": runner.runner_id,
            "uri": f"tcp://127.0.0.1:{port}",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert declared.status_code == 201, declared.text
    started = time.monotonic()
    job_id = submit(admin, runner.runner_id, declared.json()["id"], encode_zpl(label))
    done = until_final(admin, job_id)
    assert (done["status"], done["outcome_reason"]) == ("failed", "unreachable"), done
    assert time.monotonic() - started >= 4  # retried for --unreachable-seconds first
    assert "trying again" in texts(done) and "stayed unreachable" in texts(done)
    assert runner.process.journal_states(job_id) == ["claimed", "done"]


def test_a_runner_killed_mid_job_prints_nothing_twice(
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    zebra.set_condition(slow_seconds=2.0)  # the label is still printing when the Runner dies
    before_total, before_odometer = zebra.engine.printed_total, zebra.odometer
    try:
        job_id = submit(admin, runner.runner_id, adopted["id"], encode_zpl(label))
        eventually(lambda: "sent" in runner.process.journal_states(job_id), 15, every=0.01)
        runner.process.kill()  # SIGKILL right after `sent` was recorded
        assert job(admin, job_id)["status"] not in FINAL
        runner.process.start(*runner.arguments)  # as systemd's Restart=always would
        done = until_final(admin, job_id)
    finally:
        zebra.set_condition(slow_seconds=0)
    assert done["status"] == "confirmed", done
    assert "Resumed after a restart" in texts(done)
    time.sleep(0.5)
    assert zebra.engine.printed_total == before_total + 1  # printed once
    assert zebra.odometer == before_odometer + 1
    # The restart rewrote the journal (one line per job); it never recorded a second send.
    assert runner.process.journal_states(job_id) == ["sent", "done"]
    eventually(lambda: runner_view(admin, runner.runner_id)["status"] == "online", 10)


def test_an_outcome_reached_while_the_service_is_down_is_delivered_later(
    server: DevServer,
    runner: Started,
    admin: Api,
    adopted: dict[str, Any],
    printers: tuple[PrinterSimulator, PrinterSimulator],
    label: Image.Image,
) -> None:
    zebra = printers[0]
    zebra.set_condition(slow_seconds=1.0)
    before, odometer = zebra.engine.printed_total, zebra.odometer
    outbox = runner.process.state_dir / "outbox"
    try:
        job_id = submit(admin, runner.runner_id, adopted["id"], encode_zpl(label, copies=2))
        eventually(lambda: "sent" in runner.process.journal_states(job_id), 15, every=0.01)
        eventually(lambda: zebra.snapshot().labels_remaining == 2, 10, every=0.005)  # printing
        zebra.set_condition(paused=True)  # the first copy finishes, the second waits
        eventually(lambda: zebra.odometer == odometer + 1, 10)
        server.stop()  # Ctrl-C: the service saves its state and is gone
        zebra.set_condition(paused=False, slow_seconds=0)  # the job ends while it is away
        eventually(lambda: "done" in runner.process.journal_states(job_id), 15)
        # Journaled first, then reported: the report tries the service before the outbox keeps it.
        eventually(lambda: list(outbox.iterdir()), 15)  # the final report waits in the outbox
        assert runner.process.running  # network errors never end the Runner
    finally:
        zebra.set_condition(paused=False, slow_seconds=0)
        server.start()  # same ports, same state
    done = until_final(admin, job_id)
    assert done["status"] == "confirmed", done
    assert "paused" in texts(done)  # what the Runner said while the labels waited
    assert zebra.engine.printed_total == before + 1 and zebra.odometer == odometer + 2
    eventually(lambda: not list(outbox.iterdir()), 10)
    eventually(lambda: runner_view(admin, runner.runner_id)["status"] == "online", 10)
