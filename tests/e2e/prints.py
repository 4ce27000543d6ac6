"""Helpers for the printing end-to-end tests: a released label, waiting for a job, and the print
events a real webhook receiver got (signatures verified)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from integration.webhooks.receiver import Receiver
from standardwebhooks import Webhook

from e2e.runners import RunnerProcess, eventually
from support.client import Api

if TYPE_CHECKING:
    from etikett_runner.printer_sim import PrinterSimulator

FINAL = {"confirmed", "succeeded", "failed", "cancelled"}
PRINT_KINDS = ["print.failed", "print.held", "print.sent", "print.confirmed"]


def printed_serials(simulator: PrinterSimulator, count: int) -> list[str]:
    """The Code 128 serials of the last `count` labels the printer printed, in print order
    ("?" for a label without a readable one)."""
    import zxingcpp

    found = []
    for printed in simulator.printed[-count:] if count else []:
        codes = zxingcpp.read_barcodes(printed.image.convert("L"))
        found.append(codes[0].text if codes else "?")
    return found


@dataclass(frozen=True)
class PrintSite:
    """A real Runner process with the module's printer simulator adopted as `printer`."""

    printer: str
    runner_id: str
    process: RunnerProcess


def released_label(admin: Api, counter: str) -> dict[str, Any]:
    """A released label: a name and a Code 128 of the counter's (formatted) value."""
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
                        "expression": f"counters.{counter}",
                    },
                },
            ]
        },
    )
    assert patched.status_code == 200, patched.text
    approver = admin.user_session(["approver"])[1]
    approved = approver.post(
        f"/labels/{created['id']}/status", json={"version": 2, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text
    return dict(created)


def wait_status(api: Api, job_id: str, statuses: set[str], timeout: float = 60) -> dict[str, Any]:
    """The job once its status is one of `statuses`."""
    return eventually(
        lambda: (lambda job: job if job["status"] in statuses else None)(
            api.get(f"/jobs/{job_id}").json()
        ),
        timeout,
        0.2,
    )


def wait_final(api: Api, job_id: str, timeout: float = 60) -> dict[str, Any]:
    return wait_status(api, job_id, FINAL, timeout)


class PrintEvents:
    """What a receiver subscribed to every `print.*` kind got: each request's signature is
    verified; `of(job)` is the events it acknowledged (2xx), one per event id."""

    def __init__(self, receiver: Receiver, secret: str) -> None:
        self.receiver = receiver
        self.secret = secret

    def of(self, job_id: str) -> list[dict[str, Any]]:
        delivered: dict[str, dict[str, Any]] = {}
        for request in list(self.receiver.requests):
            event = Webhook(self.secret).verify(request.body, request.headers)
            assert event == json.loads(request.body)
            if event["data"]["job_id"] == job_id and 200 <= request.status < 300:
                assert event["id"] not in delivered, f"delivered twice: {event}"
                delivered[event["id"]] = event
        return sorted(delivered.values(), key=lambda e: (e["created_at"], e["id"]))

    def wait(self, job_id: str, *kinds: str, timeout: float = 60) -> list[dict[str, Any]]:
        """The job's events once every kind in `kinds` is among them."""
        return eventually(
            lambda: (lambda got: got if set(kinds) <= {e["type"] for e in got} else None)(
                self.of(job_id)
            ),
            timeout,
            0.1,
        )


def outcomes(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(kind, reason) of each event, oldest first."""
    return [(e["type"], e["data"]["reason"]) for e in events]
