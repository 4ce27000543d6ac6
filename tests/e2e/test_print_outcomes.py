"""End to end: the outcomes of `POST /print` through a real `etikett-runner` and the printer
simulator, as the job, the print archive and signed webhook deliveries show them: delivered once
each despite a failing first attempt; a held print cancelled never prints; twenty concurrent
prints get twenty contiguous serials; a print for an offline Runner is held until it is back; a
printer nobody answers for fails the print.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import zxingcpp
from etikett_runner.printer_sim import PrinterSimulator
from integration.webhooks.receiver import Receiver
from standardwebhooks import Webhook

from e2e.prints import (
    PRINT_KINDS,
    PrintEvents,
    PrintSite,
    outcomes,
    released_label,
    wait_final,
    wait_status,
)
from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.client import Api
from support.server import DevServer, free_port


def _print(operator: Api, label: dict[str, Any], printer: str, name: str) -> dict[str, Any]:
    response = operator.post(
        "/print", json={"label_id": label["id"], "printer": printer, "variables": {"name": name}}
    )
    assert response.status_code == 202, response.text
    return dict(response.json())


def _entry(operator: Api, accepted: dict[str, Any]) -> dict[str, Any]:
    return dict(operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json())


def test_outcomes_reach_a_receiver_once_each_though_its_first_answer_was_500(
    admin: Api, operator: Api, label: dict[str, Any], printer_name: str
) -> None:
    # The module's first print: no other print event is on its way to this receiver.
    with Receiver([500]) as receiver:
        hook = admin.post("/webhooks", json={"url": receiver.url, "events": PRINT_KINDS}).json()
        try:
            accepted = _print(operator, label, printer_name, "hooked")
            job_id = accepted["job_id"]
            assert wait_final(operator, job_id)["status"] == "confirmed"

            def acknowledged(requests: list[Any]) -> set[str]:
                return {
                    json.loads(r.body)["type"]
                    for r in requests
                    if r.status == 200 and json.loads(r.body)["data"]["job_id"] == job_id
                }

            receiver.wait_for(lambda rs: acknowledged(rs) == {"print.sent", "print.confirmed"})
            attempts: dict[str, list[int]] = defaultdict(list)
            kinds: dict[str, str] = {}
            for request in receiver.requests:
                event = Webhook(hook["secret"]).verify(request.body, request.headers)
                assert event["id"] == request.headers["webhook-id"]
                assert event["data"]["job_id"] == job_id
                attempts[event["id"]].append(request.status)
                kinds[event["id"]] = event["type"]
            assert sorted(kinds.values()) == ["print.confirmed", "print.sent"]
            assert receiver.requests[0].status == 500
            # The failed event came again under the same webhook-id; each was acknowledged once.
            assert sorted(attempts.values()) == [[200], [500, 200]]

            def logged() -> list[dict[str, Any]] | None:
                items = admin.get(f"/webhooks/{hook['id']}/deliveries").json()["items"]
                delivered = [d for d in items if d["outcome"] == "delivered"]
                return items if len(delivered) == 2 else None

            log = eventually(logged, 15)
            assert sorted((d["event_id"], d["attempt"], d["status_code"]) for d in log) == sorted(
                (event_id, attempt, status)
                for event_id, statuses in attempts.items()
                for attempt, status in enumerate(statuses, 1)
            )
        finally:
            admin.delete(f"/webhooks/{hook['id']}")


def test_a_held_print_that_is_cancelled_never_prints(
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
    print_events: PrintEvents,
) -> None:
    simulator.set_condition(paper_out=True)
    try:
        accepted = _print(operator, label, print_site.printer, "cancel me")
        job_id = accepted["job_id"]
        assert wait_status(operator, job_id, {"held"}, 30)["outcome_reason"] == "paper_out"
        cancelled = operator.post(f"/jobs/{job_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        # The Runner learns it at its next recheck and ends the job without sending it.
        eventually(
            lambda: print_site.process.outcome(job_id) == {"status": "cancelled", "final": True}
        )
        printed, odometer = len(simulator.printed), simulator.odometer
    finally:
        simulator.set_condition(paper_out=False)
    # Refilled: the next print comes out, and nothing before it.
    after = _print(operator, label, print_site.printer, "after")
    assert wait_final(operator, after["job_id"])["status"] == "confirmed"
    assert len(simulator.printed) == printed + 1 and simulator.odometer == odometer + 1
    assert operator.get(f"/jobs/{job_id}").json()["status"] == "cancelled"
    entry = _entry(operator, accepted)
    assert (entry["outcome"], entry["outcome_reason"]) == ("failed", "cancelled")
    events = print_events.wait(job_id, "print.failed")
    assert outcomes(events) == [("print.held", "paper_out"), ("print.failed", "cancelled")]
    assert events[-1]["data"]["outcome"] == "failed"


def test_twenty_concurrent_prints_take_twenty_contiguous_serials(
    admin: Api, operator: Api, printer_name: str, simulator: PrinterSimulator
) -> None:
    created = operator.post("/counters", json={"name": "burst", "start": 300, "format": "000000"})
    assert created.status_code == 201, created.text
    label = released_label(admin, "burst")
    before = len(simulator.printed)
    answers: list[dict[str, Any]] = []
    failures: list[str] = []

    def one(i: int) -> None:
        response = operator.as_token(operator.token or "").post(
            "/print",
            json={"label_id": label["id"], "printer": printer_name, "variables": {"name": f"#{i}"}},
        )
        (answers if response.status_code == 202 else failures).append(response.json())

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(answers) == 20
    for accepted in answers:
        assert wait_final(operator, accepted["job_id"])["status"] == "confirmed"
    entries = [_entry(operator, accepted) for accepted in answers]
    serials = sorted(entry["serials"]["burst"] for entry in entries)
    assert serials == [f"{n:06d}" for n in range(300, 320)]
    assert {entry["outcome"] for entry in entries} == {"confirmed"}
    printed = simulator.printed[before:]
    assert len(printed) == 20
    decoded = sorted(
        barcode.text
        for label_printed in printed
        for barcode in zxingcpp.read_barcodes(label_printed.image.convert("L"))
    )
    assert decoded == serials
    assert operator.get("/counters/burst").json()["current"] == 319


def test_a_print_for_an_offline_runner_is_held_and_prints_when_it_is_back(
    server: DevServer,
    admin: Api,
    operator: Api,
    label: dict[str, Any],
    workdir: Path,
    print_events: PrintEvents,
) -> None:
    late = RunnerProcess(workdir / "late-runner", workdir / "late-runner.log")
    # Enrolled through the API, but its agent channel leads nowhere: never seen, so offline.
    nowhere = f"https://127.0.0.1:{free_port()}"
    start_enrolled(late, server, admin, "Spätschicht", *TUNING, agent_url=nowhere)
    try:
        runner_id = eventually(lambda: late.enrolled_as, 30)
    finally:
        late.stop()
    assert admin.get(f"/runners/{runner_id}").json()["status"] == "offline"
    with PrinterSimulator(port=0, dpi=203, out_dir=None) as printer:
        adopted = admin.post(
            "/printers",
            json={
                "name": "Zebra Spätschicht",
                "runner_id": runner_id,
                "uri": f"tcp://127.0.0.1:{printer.port}",
                "language": "zpl",
                "dpi": 203,
            },
        )
        assert adopted.status_code == 201, adopted.text
        accepted = _print(operator, label, "Zebra Spätschicht", "late")
        job_id = accepted["job_id"]
        assert accepted["status"] == "held"
        job = operator.get(f"/jobs/{job_id}").json()
        assert (job["status"], job["outcome"], job["outcome_reason"]) == (
            "held",
            "held",
            "runner_offline",
        )
        entry = _entry(operator, accepted)
        assert (entry["outcome"], entry["outcome_reason"]) == ("held", "runner_offline")
        assert outcomes(print_events.wait(job_id, "print.held")) == [
            ("print.held", "runner_offline")
        ]
        assert printer.printed == []

        late.start("--agent-url", server.agent_url, *TUNING)  # back, with the right channel
        try:
            job = wait_final(operator, job_id)
        finally:
            late.stop()
        assert job["status"] == "confirmed", job
        assert len(printer.printed) == 1
    entry = _entry(operator, accepted)
    assert (entry["outcome"], entry["outcome_reason"]) == ("confirmed", None)
    events = print_events.wait(job_id, "print.confirmed")
    assert outcomes(events) == [
        ("print.held", "runner_offline"),
        ("print.sent", None),
        ("print.confirmed", None),
    ]


def test_a_printer_that_does_not_answer_fails_the_print(
    admin: Api,
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    print_events: PrintEvents,
) -> None:
    declared = admin.post(
        "/printers",
        json={
            "name": "Zebra ohne Strom",
            "runner_id": print_site.runner_id,
            "uri": f"tcp://127.0.0.1:{free_port()}",  # nothing listens there
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert declared.status_code == 201, declared.text
    accepted = _print(operator, label, "Zebra ohne Strom", "nobody home")
    job = wait_final(operator, accepted["job_id"], 30)
    assert (job["status"], job["outcome"], job["outcome_reason"]) == (
        "failed",
        "failed",
        "unreachable",
    )
    entry = _entry(operator, accepted)
    assert (entry["outcome"], entry["outcome_reason"]) == ("failed", "unreachable")
    events = print_events.wait(accepted["job_id"], "print.failed")
    assert outcomes(events) == [("print.failed", "unreachable")]
