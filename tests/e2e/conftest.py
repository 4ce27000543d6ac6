"""Each end-to-end module gets a service of its own (module scope): the modules add and remove
Runners, printers and counters, and must not see each other's. The printing fixtures (a Runner
process with a printer simulator adopted, a released label, a webhook receiver for the print
events) start once per module that asks for them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.printer_sim import PrinterSimulator
from integration.webhooks.receiver import Receiver
from playwright.sync_api import Browser

from e2e.prints import PRINT_KINDS, PrintEvents, PrintSite, released_label
from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.browser import running_browser
from support.client import PASSWORD, Api
from support.server import DevServer


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium per console module (each test opens a context of its own). Closed with the
    module: Playwright's sync API holds an event loop on the main thread while it runs."""
    with running_browser() as running:
        yield running


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def server(workdir: Path, request: pytest.FixtureRequest) -> Iterator[DevServer]:
    # A module's SERVER_ENV, if it has one: the service's environment for its tests.
    service = DevServer(workdir / "home", env=getattr(request.module, "SERVER_ENV", None))
    service.start()
    yield service
    service.stop()


@pytest.fixture(scope="module")
def admin(server: DevServer) -> Api:
    anonymous = Api(server.url)
    response = anonymous.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
    assert response.status_code == 201, response.text
    return anonymous.as_token(response.json()["token"])


# --- printing ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def simulator(workdir: Path) -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0, dpi=203, out_dir=None, model="ZT411-203dpi") as printer:
        yield printer


@pytest.fixture(scope="module")
def print_site(
    server: DevServer, admin: Api, simulator: PrinterSimulator, workdir: Path
) -> Iterator[PrintSite]:
    process = RunnerProcess(workdir / "runner", workdir / "runner.log")
    group = start_enrolled(process, server, admin, "Versand", *TUNING)
    try:
        runners = eventually(
            lambda: [
                r
                for r in admin.get("/runners").json()["items"]
                if r["group_id"] == group["id"] and r["status"] == "online"
            ],
            30,
        )
        name = "Zebra Versand"
        created = admin.post(
            "/printers",
            json={
                "name": name,
                "runner_id": runners[0]["id"],
                "uri": f"tcp://127.0.0.1:{simulator.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        assert created.status_code == 201, created.text
        yield PrintSite(name, runners[0]["id"], process)
    finally:
        process.stop()


@pytest.fixture(scope="module")
def printer_name(print_site: PrintSite) -> str:
    return print_site.printer


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


@pytest.fixture(scope="module")
def label(admin: Api, operator: Api) -> dict[str, Any]:
    """A released label printing a zero-padded serial of the counter `e2e_serial`."""
    counter = operator.post(
        "/counters", json={"name": "e2e_serial", "start": 1, "format": "0000000"}
    )
    assert counter.status_code == 201, counter.text
    return released_label(admin, "e2e_serial")


@pytest.fixture(scope="module")
def print_events(admin: Api) -> Iterator[PrintEvents]:
    """A loopback receiver subscribed to every print outcome, from the first test that asks."""
    with Receiver() as receiver:
        hook = admin.post("/webhooks", json={"url": receiver.url, "events": PRINT_KINDS})
        assert hook.status_code == 201, hook.text
        yield PrintEvents(receiver, hook.json()["secret"])
        admin.delete(f"/webhooks/{hook.json()['id']}")
