"""End to end: printing through the local service, a real `etikett-runner` and a printer
simulator. What the simulator decodes is the preview raster; a 1,000-record stream prints 1,000
labels with 1,000 distinct serials; a repeated idempotency key prints nothing more; a printer out
of paper holds the job until it is refilled.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.printer_sim import PrinterSimulator
from PIL import Image, ImageChops

from e2e.runners import RunnerProcess, eventually
from support.client import Api, unique
from support.server import DevServer

TUNING = ["--heartbeat-seconds", "1", "--unreachable-seconds", "4", "--held-recheck-seconds", "0.5"]
FINAL = {"confirmed", "succeeded", "failed", "cancelled"}


@pytest.fixture(scope="module")
def simulator(workdir: Path) -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0, dpi=203, out_dir=None, model="ZT411-203dpi") as printer:
        yield printer


@pytest.fixture(scope="module")
def printer_name(
    server: DevServer, admin: Api, simulator: PrinterSimulator, workdir: Path
) -> Iterator[str]:
    """A Runner (a real process) with the simulator adopted as its printer."""
    group = admin.post("/runner-groups", json={"name": "Versand"}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    process = RunnerProcess(workdir / "runner", workdir / "runner.log")
    process.start(
        "--server",
        server.url,
        "--agent-url",
        server.agent_url,
        "--ca-file",
        str(server.ca_file),
        "--enrollment-token",
        token["token"],
        *TUNING,
    )
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
        yield name
    finally:
        process.stop()


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


@pytest.fixture(scope="module")
def label(admin: Api, operator: Api) -> dict[str, Any]:
    """A released label: a name, a quantity and a Code 128 of a zero-padded serial."""
    counter = operator.post(
        "/counters", json={"name": "e2e_serial", "start": 1, "format": "0000000"}
    )
    assert counter.status_code == 201, counter.text
    designer = admin.user_session(["designer"])[1]
    created = designer.post(
        "/labels/from-dimensions", json={"name": "E2E", "width_mm": 50, "height_mm": 25}
    ).json()
    patched = designer.request(
        "PATCH",
        f"/labels/{created['id']}/document",
        json={
            "operations": [
                {
                    "op": "add",
                    "path": "/variables/-",
                    "value": {"name": "name", "type": "string", "sample": "Muster"},
                },
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        "id": "title",
                        "type": "text",
                        "x_mm": 2,
                        "y_mm": 2,
                        "size_pt": 9,
                        "expression": "name",
                    },
                },
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        "id": "serial",
                        "type": "barcode",
                        "symbology": "code128",
                        "x_mm": 2,
                        "y_mm": 8,
                        "height_mm": 10,
                        "expression": "counters.e2e_serial",
                    },
                },
            ]
        },
    )
    assert patched.status_code == 200, patched.text
    approver = admin.user_session(["approver"])[1]
    assert (
        approver.post(
            f"/labels/{created['id']}/status", json={"version": 2, "status": "approved"}
        ).status_code
        == 200
    )
    return created


def wait_final(operator: Api, job_id: str, timeout: float = 60) -> dict[str, Any]:
    return eventually(
        lambda: (lambda job: job if job["status"] in FINAL else None)(
            operator.get(f"/jobs/{job_id}").json()
        ),
        timeout,
        0.2,
    )


def test_print_by_reference_prints_the_preview_raster(
    operator: Api, label: dict[str, Any], printer_name: str, simulator: PrinterSimulator
) -> None:
    before = len(simulator.printed)
    preview = operator.post(f"/labels/{label['id']}/preview", json={"variables": {"name": "Ö1"}})
    accepted = operator.post(
        "/print",
        json={"label_id": label["id"], "printer": printer_name, "variables": {"name": "Ö1"}},
    )
    assert accepted.status_code == 202, accepted.text
    job = wait_final(operator, accepted.json()["job_id"])
    assert job["status"] == "confirmed", job
    printed = simulator.printed[before:]
    assert len(printed) == 1
    expected = Image.open(io.BytesIO(preview.content))
    assert (
        ImageChops.difference(printed[0].image.convert("L"), expected.convert("L")).getbbox()
        is None
    )
    entry = operator.get(f"/print-archive/{accepted.json()['archive_entry_ids'][0]}").json()
    assert entry["outcome"] == "confirmed" and entry["serials"] == {"e2e_serial": "0000001"}

    by_version = operator.post(
        "/print",
        json={
            "label_id": f"{label['id']}@2",
            "printer": printer_name,
            "copies": 3,
            "variables": {"name": "V2"},
        },
    )
    assert wait_final(operator, by_version.json()["job_id"])["status"] == "confirmed"
    assert simulator.printed[-1].copies == 3


def test_a_thousand_record_stream_prints_a_thousand_distinct_serials(
    operator: Api, label: dict[str, Any], printer_name: str, simulator: PrinterSimulator
) -> None:
    before, odometer = len(simulator.printed), simulator.odometer
    started = time.monotonic()
    accepted = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": printer_name,
            "data": [{"name": f"Nr. {i}"} for i in range(1000)],
        },
    )
    assert accepted.status_code == 202, accepted.text
    job = wait_final(operator, accepted.json()["job_id"], 240)
    elapsed = time.monotonic() - started
    assert job["status"] == "confirmed", job
    assert len(simulator.printed) - before == 1000
    assert simulator.odometer - odometer == 1000
    serials: set[str] = set()
    cursor = None
    while True:
        page = operator.get(
            "/print-archive",
            params={
                "job_id": accepted.json()["job_id"],
                "limit": 200,
                **({"cursor": cursor} if cursor else {}),
            },
        ).json()
        serials |= {e["serials"]["e2e_serial"] for e in page["items"]}
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(serials) == 1000
    print(
        f"\n1,000 labels from POST /print to confirmed in {elapsed:.1f} s "
        f"({1000 / elapsed:.0f} labels/s)"
    )


def test_a_repeated_idempotency_key_prints_nothing_more(
    operator: Api, label: dict[str, Any], printer_name: str, simulator: PrinterSimulator
) -> None:
    body = {
        "label_id": label["id"],
        "printer": printer_name,
        "variables": {"name": "once"},
        "idempotency_key": unique("order"),
    }
    first = operator.post("/print", json=body)
    assert wait_final(operator, first.json()["job_id"])["status"] == "confirmed"
    printed = len(simulator.printed)
    again = operator.post("/print", json=body)
    assert again.json() == first.json()
    time.sleep(2)
    assert len(simulator.printed) == printed


def test_out_of_paper_holds_until_refilled(
    operator: Api, label: dict[str, Any], printer_name: str, simulator: PrinterSimulator
) -> None:
    simulator.set_condition(paper_out=True)
    try:
        accepted = operator.post(
            "/print",
            json={"label_id": label["id"], "printer": printer_name, "variables": {"name": "paper"}},
        ).json()
        held = eventually(
            lambda: (lambda job: job if job["status"] == "held" else None)(
                operator.get(f"/jobs/{accepted['job_id']}").json()
            ),
            30,
            0.2,
        )
        assert held["outcome_reason"] == "paper_out"
        entry = operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()
        assert entry["outcome"] == "held"
    finally:
        simulator.set_condition(paper_out=False)
    assert wait_final(operator, accepted["job_id"])["status"] == "confirmed"
    messages = [m["text"] for m in operator.get(f"/jobs/{accepted['job_id']}").json()["messages"]]
    assert any("paper_out" in text for text in messages)
