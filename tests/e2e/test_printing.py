"""End to end: printing through the local service, a real `etikett-runner` and a printer
simulator. What the simulator decodes is the preview raster; a 1,000-record stream prints 1,000
labels with 1,000 distinct serials; a repeated idempotency key prints nothing more; a printer out
of paper holds the job until it is refilled, then sends and confirms it; concurrent clients
printing and previewing get no error, and the printer counts exactly the labels they asked for.
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Any

from etikett_runner.printer_sim import PrinterSimulator
from PIL import Image, ImageChops

from e2e.prints import (
    PrintEvents,
    PrintSite,
    outcomes,
    printed_serials,
    wait_final,
    wait_status,
)
from support.client import Api, unique
from support.load import final_jobs, run_load
from support.server import DevServer


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
    archived: list[str] = []  # the job's labels in record order
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
        archived += [e["serials"]["e2e_serial"] for e in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(set(archived)) == 1000
    # Rendered by two processes (the print renderer's), printed in the records' order.
    assert printed_serials(simulator, 1000) == archived
    print(
        f"\n1,000 labels from POST /print to confirmed in {elapsed:.1f} s "
        f"({1000 / elapsed:.0f} labels/s)"
    )


def connections_to(pid: int, port: int) -> int:
    """How many sockets process `pid` holds open to loopback port `port` (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port = int(fields[2].rpartition(":")[2], 16)
        if remote_port == port and fields[9] in inodes:
            count += 1
    return count


def test_prints_one_after_another_reuse_the_runners_connections(
    operator: Api,
    label: dict[str, Any],
    print_site: PrintSite,
    server: DevServer,
    simulator: PrinterSimulator,
) -> None:
    """Each print's reports travel on connections the Runner already has: a connection (and a
    mutual-TLS handshake) per print would cost both sides CPU just as the next print runs, and
    pile up open sockets over a day of printing."""
    runner = print_site.process.process
    assert runner is not None
    port = int(server.agent_url.rpartition(":")[2])

    def one_print(name: str) -> None:
        accepted = operator.post(
            "/print",
            json={
                "label_id": label["id"],
                "printer": print_site.printer,
                "variables": {"name": name},
            },
        )
        assert accepted.status_code == 202, accepted.text
        assert wait_final(operator, accepted.json()["job_id"])["status"] == "confirmed"

    one_print("warm")
    before = connections_to(runner.pid, port)
    assert before >= 1  # the long poll's at least
    for index in range(8):
        one_print(f"Nr. {index}")
    assert connections_to(runner.pid, port) <= before + 1


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
    # The same job and archive entries, as the job is now.
    assert again.json() == {**first.json(), "status": "confirmed"}
    time.sleep(2)
    assert len(simulator.printed) == printed


def test_out_of_paper_holds_until_refilled_then_sends_and_confirms(
    operator: Api,
    label: dict[str, Any],
    printer_name: str,
    simulator: PrinterSimulator,
    print_events: PrintEvents,
) -> None:
    simulator.set_condition(paper_out=True)
    try:
        accepted = operator.post(
            "/print",
            json={"label_id": label["id"], "printer": printer_name, "variables": {"name": "paper"}},
        ).json()
        held = wait_status(operator, accepted["job_id"], {"held"}, 30)
        assert held["outcome_reason"] == "paper_out"
        entry = operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()
        assert (entry["outcome"], entry["outcome_reason"]) == ("held", "paper_out")
        printed = len(simulator.printed)
    finally:
        simulator.set_condition(paper_out=False)
    job = wait_final(operator, accepted["job_id"])
    assert job["status"] == "confirmed"
    assert len(simulator.printed) == printed + 1
    texts = [m["text"] for m in job["messages"]]
    assert "Held: paper_out." in texts
    sent = [i for i, text in enumerate(texts) if text.startswith(f"Sent to {printer_name}")]
    confirmed = [i for i, text in enumerate(texts) if text.startswith("Printed 1 label(s)")]
    assert len(sent) == len(confirmed) == 1 and sent[0] < confirmed[0], texts
    entry = operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()
    assert (entry["outcome"], entry["outcome_reason"]) == ("confirmed", None)
    events = print_events.wait(accepted["job_id"], "print.confirmed")
    assert outcomes(events) == [
        ("print.held", "paper_out"),
        ("print.sent", None),
        ("print.confirmed", None),
    ]
    assert {e["data"]["outcome"] for e in events} == {"held", "sent", "confirmed"}
    assert all(e["data"]["labels"] == 1 and e["data"]["printer"] == printer_name for e in events)


def test_concurrent_clients_printing_and_previewing_get_no_error(
    admin: Api, label: dict[str, Any], printer_name: str, simulator: PrinterSimulator
) -> None:
    """The short version of bench/load_bench.py (20 clients for 60 s): no timing asserted."""
    tokens = [admin.user_session(["operator"])[1].token or "" for _ in range(2)]
    tokens.append(admin.service_token("operator")["token"])
    before, odometer = simulator.engine.printed_total, simulator.odometer
    outcome = run_load(admin.base_url, tokens, label["id"], printer_name, clients=5, seconds=8)
    assert not outcome.errors, outcome.errors
    assert outcome.job_ids and outcome.latencies["preview"]
    jobs = final_jobs(lambda job: admin.get(f"/jobs/{job}").json(), outcome.job_ids, 120)
    assert {job["status"] for job in jobs.values()} == {"confirmed"}, [
        job for job in jobs.values() if job["status"] != "confirmed"
    ][:3]
    simulator.wait_printed(before + len(outcome.job_ids), timeout=30)
    time.sleep(1.0)  # a label printed twice would arrive now
    assert simulator.engine.printed_total == before + len(outcome.job_ids)
    assert simulator.odometer == odometer + len(outcome.job_ids)
