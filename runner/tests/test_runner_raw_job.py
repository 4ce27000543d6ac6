"""Raw jobs against the printer simulator: held and resumed, unreachable, cancelled, and — after a
crash — never printed twice: the journal and the printer's counter decide."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from etikett_runner import context, download, jobs, reach
from etikett_runner.journal import DONE, SENT, STARTED
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.printers import Printers
from etikett_runner.tuning import Tuning
from runner_fakes import Harness

LABEL = b"^XA^PW16^LL4^FO0,0^GFA,8,8,2,FF00FF00FF00FF00^FS^PQ2^XZ"
FAST = Tuning(
    unreachable_seconds=1.5, held_recheck_seconds=0.2, confirm_seconds=3.0, connect_timeout=1.0
)


@pytest.fixture
def sim() -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0, odometer=100) as printer:
        yield printer


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path / "state")


def payload(port: int, expected: int | None = 2) -> dict[str, object]:
    printer = {"printer_id": "prn_1", "name": "Zebra", "uri": f"tcp://127.0.0.1:{port}"}
    return {"printer": {**printer, "language": "zpl", "dpi": 203}, "expected_labels": expected}


def run(harness: Harness, job_id: str, port: int, expected: int | None = 2, **kw: object) -> None:
    ctx = harness.context(job_id, "raw", payload(port, expected), LABEL, **kw)  # type: ignore[arg-type]
    jobs.execute(ctx, Printers(), FAST)


def in_background(harness: Harness, job_id: str, port: int) -> threading.Thread:
    thread = threading.Thread(target=run, args=(harness, job_id, port), daemon=True)
    thread.start()
    return thread


def wait_for(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_sent_then_confirmed_by_the_counter(harness: Harness, sim: PrinterSimulator) -> None:
    run(harness, "job_1", sim.port)
    assert sim.odometer == 102 and len(sim.printed) == 1
    # Straight from the claim to the printer: no extra round trip before sending.
    assert harness.service.statuses("job_1") == ["sent", "confirmed"]
    # Confirmed within the hold: `sent` rode on the final report, with the time it happened.
    assert harness.service.requests("job_1") == 1
    sent, final = harness.service.bodies("job_1")
    assert final["final"] is True and final["receipt"] == "r-1"
    assert sent["at"] <= datetime.now(UTC).isoformat() and "Sent to" in sent["messages"][0]["text"]
    record = harness.journal.get("job_1")
    assert record is not None and record.state == DONE and record.odometer == 100
    assert harness.state.spool_read("job_1") is None  # the spooled bytes are gone


def test_labels_are_counted_from_the_zpl_when_the_job_does_not_say(
    harness: Harness, sim: PrinterSimulator
) -> None:
    run(harness, "job_1", sim.port, expected=None)
    assert harness.service.statuses("job_1")[-1] == "confirmed"
    assert harness.journal.get("job_1").expected == 2  # type: ignore[union-attr]


def test_held_while_out_of_paper_then_printed_after_refill(
    harness: Harness, sim: PrinterSimulator
) -> None:
    sim.set_condition(paper_out=True)
    thread = in_background(harness, "job_1", sim.port)
    wait_for(lambda: "held" in harness.service.statuses("job_1"))
    time.sleep(0.6)  # several rechecks: still held, nothing sent
    assert sim.engine.printed_total == 0 and sim.snapshot().formats_in_buffer == 0
    held = [b for b in harness.service.bodies("job_1") if b.get("status") == "held"]
    assert len(held) == 1 and held[0]["reason"] == "paper_out"  # said once, then kept alive
    sim.set_condition(paper_out=False)
    thread.join(30)
    assert harness.service.statuses("job_1") == ["held", "running", "sent", "confirmed"]
    assert sim.odometer == 102


def test_an_unreachable_printer_fails_after_retries(harness: Harness) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    run(harness, "job_1", port)
    assert 1.4 < time.monotonic() - started < 30  # retried (backoff) and then gave up
    final = harness.service.bodies("job_1")[-1]
    assert (final["status"], final["reason"], final["final"]) == ("failed", "unreachable", True)


def test_a_job_cancelled_while_held_never_prints(harness: Harness, sim: PrinterSimulator) -> None:
    sim.set_condition(head_open=True)
    thread = in_background(harness, "job_1", sim.port)
    wait_for(lambda: "held" in harness.service.statuses("job_1"))
    harness.service.cancel("job_1")
    thread.join(30)
    sim.set_condition(head_open=False)
    time.sleep(0.2)
    assert sim.engine.printed_total == 0 and sim.odometer == 100
    assert harness.journal.get("job_1").outcome == {"status": "cancelled", "final": True}  # type: ignore[union-attr]


def test_after_a_crash_once_sent_it_is_only_confirmed(
    harness: Harness, sim: PrinterSimulator
) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as conn:
        conn.sendall(LABEL)  # the first process sent it, then died
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    harness.journal.record("job_1", SENT)
    run(harness, "job_1", sim.port, claim=False)
    assert sim.engine.printed_total == 1 and sim.odometer == 102
    assert harness.service.statuses("job_1") == ["confirmed"]


def test_after_a_crash_mid_send_a_printed_job_is_not_sent_again(
    harness: Harness, sim: PrinterSimulator
) -> None:
    with socket.create_connection(("127.0.0.1", sim.port)) as conn:
        conn.sendall(LABEL)  # arrived, but the crash came before `sent` was written
    sim.wait_printed(1)
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    run(harness, "job_1", sim.port, claim=False)
    assert sim.engine.printed_total == 1
    assert harness.service.statuses("job_1") == ["sent", "confirmed"]
    assert any("not sent again" in t for t in harness.service.texts("job_1"))


def test_after_a_crash_before_the_bytes_arrived_it_is_sent_once(
    harness: Harness, sim: PrinterSimulator
) -> None:
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    run(harness, "job_1", sim.port, claim=False)
    assert sim.engine.printed_total == 1 and sim.odometer == 102
    assert harness.service.statuses("job_1")[-2:] == ["sent", "confirmed"]
    assert any("had not arrived" in t for t in harness.service.texts("job_1"))


def test_after_a_crash_labels_waiting_in_a_paused_printer_are_not_sent_again(
    harness: Harness, sim: PrinterSimulator
) -> None:
    sim.set_condition(paused=True)
    with socket.create_connection(("127.0.0.1", sim.port)) as conn:
        conn.sendall(LABEL)  # in the printer's buffer, not printed: the counter has not moved
    wait_for(lambda: sim.snapshot().formats_in_buffer == 1)
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    thread = threading.Thread(
        target=run, args=(harness, "job_1", sim.port), kwargs={"claim": False}, daemon=True
    )
    thread.start()
    wait_for(lambda: any("waiting for it" in t for t in harness.service.texts("job_1")))
    time.sleep(0.5)
    assert sim.snapshot().formats_in_buffer == 1  # nothing sent meanwhile
    sim.set_condition(paused=False)
    thread.join(30)
    assert sim.engine.printed_total == 1 and sim.odometer == 102
    assert harness.service.statuses("job_1")[-1] == "confirmed"


def test_after_a_crash_labels_that_print_between_the_two_reads_are_not_sent_again(
    harness: Harness, sim: PrinterSimulator
) -> None:
    """The race of the test above, forced: the paused printer finishes its buffer right after
    the first of the Runner's two reads (state, label counter), whichever it is. Read in the
    wrong order, the counter is still 100 and the printer then looks idle and empty."""
    sim.set_condition(paused=True)
    with socket.create_connection(("127.0.0.1", sim.port)) as conn:
        conn.sendall(LABEL)
    wait_for(lambda: sim.snapshot().formats_in_buffer == 1)
    queries: list[str] = []

    def finish_the_buffer(query: str) -> None:
        queries.append(query)
        if len(queries) == 1:
            sim.set_condition(paused=False)
            sim.wait_printed(1)

    sim.after_answer = finish_the_buffer
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    run(harness, "job_1", sim.port, claim=False)
    assert queries[0] in ("~HS", "getvar odometer.total_label_count")
    assert sim.engine.printed_total == 1 and sim.odometer == 102
    assert harness.service.statuses("job_1")[-1] == "confirmed"


def test_a_counter_that_does_not_move_ends_as_sent(harness: Harness, sim: PrinterSimulator) -> None:
    data = b"^XA^FO0,0^GFA,2,2,1,FF00^FS^XZ"
    ctx = harness.context("job_1", "raw", payload(sim.port, expected=5), data)
    jobs.execute(ctx, Printers(), Tuning(confirm_seconds=0.5, confirm_per_label_seconds=0))
    final = harness.service.bodies("job_1")[-1]
    assert (final["status"], final["final"]) == ("sent", True)
    assert "did not advance" in final["messages"][0]["text"]


def test_unknown_kinds_and_bad_payloads_fail(harness: Harness) -> None:
    jobs.execute(harness.context("job_1", "print-flow", {}), Printers(), FAST)
    assert harness.service.bodies("job_1")[-1]["reason"] == "unsupported_job"
    jobs.execute(harness.context("job_2", "raw", {"printer": {}}), Printers(), FAST)
    assert harness.service.bodies("job_2")[-1]["reason"] == "bad_printer"
    bad = {"printer": {"uri": "tcp://127.0.0.1:9"}}
    jobs.execute(harness.context("job_3", "raw", bad), Printers(), FAST)
    assert harness.service.bodies("job_3")[-1]["reason"] == "no_data"


def test_shutdown_leaves_a_held_job_in_the_journal(harness: Harness, sim: PrinterSimulator) -> None:
    sim.set_condition(paper_out=True)
    thread = in_background(harness, "job_1", sim.port)
    wait_for(lambda: "held" in harness.service.statuses("job_1"))
    harness.stop.set()
    thread.join(30)
    assert not thread.is_alive()
    record = harness.journal.get("job_1")
    assert record is not None and not record.finished  # resumed at the next start


def test_after_a_crash_an_empty_held_printer_gets_the_job_once_it_is_ready(
    harness: Harness, sim: PrinterSimulator
) -> None:
    sim.set_condition(paper_out=True)  # nothing in its buffer: the bytes never arrived
    harness.context("job_1", "raw", payload(sim.port), LABEL)
    harness.journal.record("job_1", STARTED, odometer=100, expected=2)
    thread = threading.Thread(
        target=run, args=(harness, "job_1", sim.port), kwargs={"claim": False}, daemon=True
    )
    thread.start()
    wait_for(lambda: "held" in harness.service.statuses("job_1"))
    sim.set_condition(paper_out=False)
    thread.join(30)
    assert sim.engine.printed_total == 1 and sim.odometer == 102
    assert harness.service.statuses("job_1") == ["held", "running", "sent", "confirmed"]


def test_print_jobs_of_the_print_pipeline_run_like_raw_jobs(
    harness: Harness, sim: PrinterSimulator
) -> None:
    job = {**payload(sim.port), "label_id": "lbl_1", "label_version": 3, "labels": 1, "copies": 2}
    jobs.execute(harness.context("job_1", "print", job, LABEL), Printers(), FAST)
    assert harness.service.statuses("job_1") == ["sent", "confirmed"]
    assert sim.odometer == 102


def test_confirming_does_not_wait_for_the_sent_report_but_keeps_the_order(
    harness: Harness, sim: PrinterSimulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(context, "REPORT_HOLD_SECONDS", 0.0)  # `sent` goes alone, at once
    harness.service.delays["sent"] = 0.5  # a slow round trip for `sent`
    run(harness, "job_1", sim.port)
    assert harness.service.statuses("job_1") == ["sent", "confirmed"]  # never the other way
    assert harness.service.requests("job_1") == 2


def test_a_sent_report_held_back_is_delivered_when_the_runner_stops(
    harness: Harness, sim: PrinterSimulator
) -> None:
    data = b"^XA^FO0,0^GFA,2,2,1,FF00^FS^XZ"  # one label, but five are expected: no confirmation
    ctx = harness.context("job_1", "raw", payload(sim.port, expected=5), data)
    thread = threading.Thread(target=jobs.execute, args=(ctx, Printers(), FAST), daemon=True)
    thread.start()
    wait_for(lambda: getattr(harness.journal.get("job_1"), "state", None) == SENT)
    harness.stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    # Delivered as the job was left, not after the hold (a stopping process would lose it).
    assert harness.service.statuses("job_1") == ["sent"]
    assert harness.journal.get("job_1").state == SENT  # type: ignore[union-attr]


def test_the_next_job_gets_the_printer_while_the_outcome_is_reported(
    harness: Harness, sim: PrinterSimulator
) -> None:
    harness.service.delays["confirmed"] = 1.0  # a slow round trip for the final report
    printers = Printers()  # one Runner: one printer lock for both jobs

    def execute(job_id: str) -> None:
        ctx = harness.context(job_id, "raw", payload(sim.port), LABEL)
        jobs.execute(ctx, printers, FAST)

    first = threading.Thread(target=execute, args=("job_1",), daemon=True)
    first.start()
    wait_for(lambda: (r := harness.journal.get("job_1")) is not None and r.state == DONE)
    second = threading.Thread(target=execute, args=("job_2",), daemon=True)
    second.start()
    wait_for(lambda: len(sim.printed) == 2)
    assert "confirmed" not in harness.service.statuses("job_1")  # still on its way
    first.join(30)
    second.join(30)
    assert harness.service.statuses("job_1") == ["sent", "confirmed"]
    assert harness.service.statuses("job_2") == ["sent", "confirmed"]


class Web:
    """A tiny HTTP server for presigned-URL downloads: /label answers LABEL, /moved redirects
    to /label, /huge says it is larger than any job, others 403/503. It is the service's
    storage, on loopback as in local mode (the service too)."""

    def __init__(self) -> None:
        import http.server

        calls: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                calls.append(self.path)
                if self.path == "/label":
                    self.send_response(200)
                    self.send_header("content-length", str(len(LABEL)))
                    self.end_headers()
                    self.wfile.write(LABEL)
                elif self.path == "/moved":
                    self.send_response(302)
                    self.send_header("location", "/label")
                    self.send_header("content-length", "0")
                    self.end_headers()
                elif self.path == "/huge":
                    self.send_response(200)
                    self.send_header("content-length", str(download.MAX_BYTES + 1))
                    self.end_headers()
                else:
                    self.send_response(403 if self.path == "/expired" else 503)
                    self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.calls = calls
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def web() -> Iterator[Web]:
    served = Web()
    reach.configure(reach.Reach(loopback_printers=True))
    reach.set_service("https://127.0.0.1:8443")  # local mode: the service on this machine
    reach.allow_storage(served.url)
    yield served
    reach.configure(None)
    served.server.shutdown()
    served.server.server_close()


def test_large_jobs_are_fetched_from_their_url_once(
    harness: Harness, sim: PrinterSimulator, web: Web
) -> None:
    job = {**payload(sim.port), "data_url": f"{web.url}/label"}
    jobs.execute(harness.context("job_1", "raw", job), Printers(), FAST)
    assert harness.service.statuses("job_1") == ["sent", "confirmed"] and sim.odometer == 102
    assert web.calls == ["/label"]


def test_an_expired_url_fails_the_job_without_printing(
    harness: Harness, sim: PrinterSimulator, web: Web
) -> None:
    job = {**payload(sim.port), "data_url": f"{web.url}/expired"}
    jobs.execute(harness.context("job_1", "raw", job), Printers(), FAST)
    final = harness.service.bodies("job_1")[-1]
    assert (final["status"], final["reason"]) == ("failed", "data_unavailable")
    assert "HTTP 403" in final["messages"][0]["text"] and sim.odometer == 100


def refused(harness: Harness, sim: PrinterSimulator, url: str, job_id: str = "job_1") -> str:
    """Run a job whose bytes are at `url`: it must fail as `data_refused`; the message."""
    job = {**payload(sim.port), "data_url": url}
    jobs.execute(harness.context(job_id, "raw", job), Printers(), FAST)
    final = harness.service.bodies(job_id)[-1]
    assert (final["status"], final["reason"]) == ("failed", "data_refused"), final
    assert sim.odometer == 100
    return str(final["messages"][0]["text"])


def test_job_bytes_come_only_from_the_services_storage(
    harness: Harness, sim: PrinterSimulator, web: Web
) -> None:
    other = Web()  # another server on this machine: not the storage the service named
    try:
        text = refused(harness, sim, f"{other.url}/label")
        assert f"origin {other.url} is not the service's storage ({web.url})" in text
        assert other.calls == []
    finally:
        other.server.shutdown()
        other.server.server_close()
    assert "redirect, never followed" in refused(harness, sim, f"{web.url}/moved", "job_2")
    assert web.calls == ["/moved"]  # /label never asked for
    assert "must not contain credentials" in refused(
        harness, sim, web.url.replace("//", "//user:pw@") + "/label", "job_3"
    )
    job = {**payload(sim.port), "data_url": f"{web.url}/huge"}
    jobs.execute(harness.context("job_4", "raw", job), Printers(), FAST)
    final = harness.service.bodies("job_4")[-1]
    assert final["reason"] == "data_unavailable" and "exceed" in final["messages"][0]["text"]


def test_plain_http_and_private_addresses_only_in_local_mode(
    harness: Harness, sim: PrinterSimulator, web: Web, monkeypatch: pytest.MonkeyPatch
) -> None:
    reach.set_service("https://agent.etikett.example")  # a deployed service
    assert "must be https://" in refused(harness, sim, f"{web.url}/label")
    # Its storage's name resolving into the site's network is refused on connect.
    real = socket.getaddrinfo

    def resolving(host: str, port: object, *args: object, **kwargs: object) -> object:
        if host == "assets.s3.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.9", 443))]
        return real(host, port, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    reach.allow_storage("https://assets.s3.example.com")
    text = refused(
        harness, sim, "https://assets.s3.example.com/jobs/j/data?X-Amz-Signature=1", "j2"
    )
    assert "10.0.0.9, a private address" in text
    reach.allow_storage(None)  # the configuration never arrived
    assert "has not named its storage" in refused(harness, sim, f"{web.url}/label", "job_3")
    assert web.calls == []
