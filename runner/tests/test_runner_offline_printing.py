"""Printing on site while the service is away: whether a batch may (the signed policy, its
bounds, labels that cannot print offline, values left), the labels it prints at a real printer
simulator with values from reserved blocks, and a restart mid-batch that prints nothing twice
and takes no value twice. Counter blocks are reserved only for bundles that allow it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.bundles import SiteBundles
from etikett_runner.connectivity import Connectivity
from etikett_runner.counter_blocks import CounterBlocks
from etikett_runner.counter_reserve import CounterReserve
from etikett_runner.flow_runs import Batch, PendingRun, RunJournal
from etikett_runner.offline_printing import OfflinePrinter, refusal
from etikett_runner.offline_prints import OfflinePrints
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.printers import Printers, PrinterTarget
from etikett_runner.roots import AllowedRoots
from etikett_runner.run_sender import RunSender
from etikett_runner.targets import Address
from etikett_runner.transport import ServerAway
from etikett_runner.tuning import Tuning
from runner_fakes import FakeChannel

LABEL = "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5"
DOCUMENT = {
    "size": {"width_mm": 50, "height_mm": 25},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string"}],
    "objects": [
        {
            "id": "code",
            "type": "barcode",
            "symbology": "code128",
            "x_mm": 2,
            "y_mm": 4,
            "height_mm": 12,
            "expression": "string(counters.serial)",
        },
    ],
}
POLICY = {"allowed": True, "max_hours": 8, "max_labels": 1000, "counter_block_size": 8}


def bundle(**policy: Any) -> dict[str, Any]:
    return {
        "deployment_id": "dep_1",
        "runner_id": "run_1",
        "printers": {"ship": "Zebra"},
        "labels": [{"reference": LABEL, "label_id": LABEL, "version": 1, "document": DOCUMENT}],
        "not_offline": ["lbl_DRAFT has no released version"],
        "offline": {**POLICY, **policy},
    }


def test_the_decision_follows_the_signed_policy_and_its_bounds() -> None:
    def why(payload: dict[str, Any] | None, label: str = LABEL, **kw: Any) -> str | None:
        args = {"away_seconds": 60.0, "unsynced_labels": 0, **kw}
        return refusal(payload, label, 10, **args)

    assert why(bundle()) is None
    assert why(None) == "its deployment has no signed bundle on this Runner"
    assert why({**bundle(), "offline": None}) == "its deployment does not allow offline printing"
    assert why(bundle(allowed=False)) == "its deployment does not allow offline printing"
    assert "longer than 8 h" in str(why(bundle(), away_seconds=8 * 3600 + 1))
    assert why(bundle(), away_seconds=8 * 3600) is None
    assert why(bundle(), unsynced_labels=990) is None  # 990 + 10 labels: at the bound
    assert "990 labels printed offline" in str(why(bundle(max_labels=999), unsynced_labels=990))
    assert why(bundle(), "lbl_DRAFT") == "the label cannot print offline: " + (
        "lbl_DRAFT has no released version"
    )
    assert "lbl_OTHER@2 is not in its bundle" in str(why(bundle(), "lbl_OTHER@2"))


class Site:
    """A sender with offline printing against a fake service, a real printer simulator."""

    def __init__(self, root: Path, simulator: PrinterSimulator, channel: FakeChannel) -> None:
        self.root = root
        self.channel = channel
        self.blocks = CounterBlocks(root)
        self.prints = OfflinePrints(root)
        printers = Printers()
        address = Address("127.0.0.1", simulator.port)
        printers.configure([PrinterTarget(address, "zpl", "prn_1", "Zebra", 203)])
        stop = threading.Event()
        self.connectivity = Connectivity(stop)
        self.offline = OfflinePrinter(
            SiteBundles(root), self.blocks, self.prints, printers, self.connectivity, Tuning()
        )
        journal = RunJournal(root / "flow-runs")
        self.sender = RunSender(
            channel,  # type: ignore[arg-type]
            journal,
            self.connectivity,
            lambda removed: None,
            AllowedRoots.of(root),
            offline=self.offline,
        )


class BlockService:
    def __init__(self) -> None:
        self.next = 1
        self.asked: list[dict[str, Any]] = []

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(body)
        block = {**body, "first": self.next, "step": 1, "period": "", "reset": "never"}
        self.next += body["size"]
        return {**block, "format": "000000"}


@pytest.fixture
def simulator() -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0) as running:
        yield running


def run_of(run_id: str, names: list[str]) -> PendingRun:
    batch = Batch("ship", LABEL, 1, [{"name": n} for n in names], list(range(len(names))), "k")
    return PendingRun(
        id=run_id,
        deployment_id="dep_1",
        flow_id="flw_1",
        version=1,
        trigger_node="in",
        source="orders.csv",
        started_at="2026-11-27T00:00:00+00:00",
        records=len(names),
        batches=[batch],
    )


def printed_serials(simulator: PrinterSimulator) -> list[str]:
    import zxingcpp

    codes = [zxingcpp.read_barcodes(p.image.convert("L")) for p in simulator.printed]
    return [c[0].text if c else "?" for c in codes]


RUNS = ["frn_01M88H6PARY91YC74M6WPY1TQ9", "frn_01M88H6PARY91YC74M6WPY1TR0"]


def test_away_it_prints_from_reserved_blocks_and_the_report_waits(
    tmp_path: Path, simulator: PrinterSimulator
) -> None:
    channel = FakeChannel()
    site = Site(tmp_path, simulator, channel)
    service = BlockService()
    reserve = CounterReserve(site.blocks, service.ask)
    assert reserve.refill([bundle(allowed=False)]) == 0 and service.asked == []  # never offline
    assert reserve.refill([bundle()]) == 1
    assert service.asked[0]["counter"] == "serial" and service.asked[0]["size"] == 8
    assert reserve.refill([bundle()]) == 0  # 8 left: above the low-water mark (2)
    site.offline.use({"dep_1": bundle(max_labels=5)})

    channel.away = True
    first = run_of(RUNS[0], ["A", "B", "C"])
    site.sender.submit(first)
    assert not site.sender.deliver(first, threading.Event())  # printed; the report waits
    batch = first.batches[0]
    assert batch.settled and batch.offline_outcome == "sent" and channel.prints == []
    simulator.wait_printed(3)
    assert printed_serials(simulator) == ["000001", "000002", "000003"]
    journaled = site.prints.unsynced()
    assert [p.id for p in journaled] == [batch.offline_print]
    assert journaled[0].outcome == "sent" and journaled[0].printer_id == "prn_1"
    assert [r.counter_values for r in journaled[0].records] == [{"serial": v} for v in (1, 2, 3)]
    assert [r.serials["serial"] for r in journaled[0].records] == ["000001", "000002", "000003"]

    # Three more would pass the bound of 5 unsynced labels: they wait for the service.
    second = run_of(RUNS[1], ["D", "E", "F"])
    site.sender.submit(second)
    assert not site.sender.deliver(second, threading.Event())
    assert not second.batches[0].settled and simulator.engine.printed_total == 3

    channel.away = False  # back: the waiting one goes through the service, both reported
    site.connectivity.succeeded()
    assert site.sender.deliver(first, threading.Event())
    assert site.sender.deliver(second, threading.Event())
    assert [p["records"] for p in channel.prints] == [[{"name": n} for n in "DEF"]]
    assert channel.runs[0]["trace"]["prints"][0]["offline_print"] == batch.offline_print
    assert "offline_print" not in channel.runs[1]["trace"]["prints"][0]
    assert simulator.engine.printed_total == 3


def test_without_values_left_records_wait_and_a_restart_never_prints_twice(
    tmp_path: Path, simulator: PrinterSimulator
) -> None:
    channel = FakeChannel()
    channel.away = True
    site = Site(tmp_path, simulator, channel)
    site.offline.use({"dep_1": bundle()})
    run = run_of(RUNS[0], ["A", "B"])
    site.sender.submit(run)
    assert not site.sender.deliver(run, threading.Event())  # no block reserved: waits
    assert simulator.engine.printed_total == 0 and run.batches[0].offline_print is None

    CounterReserve(site.blocks, BlockService().ask).refill([bundle()])
    # The Runner dies after the print was journaled, before the printer answered.
    original = site.prints.settle

    def crash(*args: Any, **kwargs: Any) -> None:
        raise SystemExit("killed")

    site.prints.settle = crash  # type: ignore[method-assign]
    with pytest.raises(SystemExit):
        site.sender.deliver(run, threading.Event())
    site.prints.settle = original  # type: ignore[method-assign]
    simulator.wait_printed(2)

    again = Site(tmp_path, simulator, channel)  # a new process: the journals decide
    again.offline.use({"dep_1": bundle()})
    assert again.sender.load() == 1
    assert not again.sender.deliver(again.sender._queue[0], threading.Event())
    resumed = again.sender._queue[0].batches[0]
    assert resumed.offline_outcome == "unknown" and "not sent again" in str(resumed.error)
    [journaled] = again.prints.unsynced()
    assert journaled.id == resumed.offline_print and journaled.outcome is None
    assert simulator.engine.printed_total == 2  # not sent a second time

    # The next batch takes the values after those journaled: none twice.
    later = run_of(RUNS[1], ["C"])
    again.sender.submit(later)
    assert not again.sender.deliver(later, threading.Event())
    simulator.wait_printed(3)
    assert printed_serials(simulator) == ["000001", "000002", "000003"]


def test_values_kept_for_a_print_never_journaled_do_not_hold_it_once_the_service_is_back(
    tmp_path: Path, simulator: PrinterSimulator
) -> None:
    channel = FakeChannel()
    channel.away = True
    site = Site(tmp_path, simulator, channel)
    site.offline.use({"dep_1": bundle()})
    CounterReserve(site.blocks, BlockService().ask).refill([bundle()])
    run = run_of(RUNS[0], ["A", "B"])
    site.sender.submit(run)

    def crash(*args: Any, **kwargs: Any) -> None:
        raise SystemExit("killed")  # after the values were kept, before the print's journal

    site.prints.record = crash  # type: ignore[method-assign]
    with pytest.raises(SystemExit):
        site.sender.deliver(run, threading.Event())

    channel.away = False
    again = Site(tmp_path, simulator, channel)
    assert again.sender.load() == 1
    kept = again.sender._queue[0]
    assert kept.batches[0].offline_values is not None and again.prints.unsynced() == []
    assert again.sender.deliver(kept, threading.Event())  # through the service: values a gap
    assert len(channel.prints) == 1 and simulator.engine.printed_total == 0
    assert again.blocks.take("serial", "") == 3  # the two kept are never taken again


def test_a_print_request_that_may_have_reached_the_service_never_prints_offline(
    tmp_path: Path, simulator: PrinterSimulator
) -> None:
    """A lost answer (a timeout, a 5xx) may hide a job the service made: that batch waits for
    the service, even after a restart; a refused connection means nothing arrived."""
    channel = FakeChannel()
    site = Site(tmp_path, simulator, channel)
    site.offline.use({"dep_1": bundle()})
    CounterReserve(site.blocks, BlockService().ask).refill([bundle()])

    def lost(body: dict[str, Any]) -> Any:
        raise ServerAway("504 from /flow-prints")  # it may have been acted on

    channel.print_answers = [lost]
    run = run_of(RUNS[0], ["A"])
    site.sender.submit(run)
    assert not site.sender.deliver(run, threading.Event())
    channel.away = True
    site.connectivity.failed()
    assert not site.sender.deliver(run, threading.Event())  # known away: still not on site
    assert simulator.engine.printed_total == 0 and site.prints.unsynced() == []

    restarted = Site(tmp_path, simulator, channel)  # its journal says a request went out
    restarted.offline.use({"dep_1": bundle()})
    restarted.sender.load()
    (loaded,) = restarted.sender._queue
    assert not restarted.sender.deliver(loaded, threading.Event())
    assert simulator.engine.printed_total == 0

    later = run_of(RUNS[1], ["B"])  # refused connections: nothing of it at the service
    restarted.sender.submit(later)
    assert not restarted.sender.deliver(later, threading.Event())
    simulator.wait_printed(1)
    assert later.batches[0].offline_outcome == "sent" and not later.batches[0].at_service


def test_a_daily_counter_gets_a_block_for_the_new_day(tmp_path: Path) -> None:
    import datetime as dt

    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    periods = ["2020-01-01", today]

    def ask(body: dict[str, Any]) -> dict[str, Any]:
        grant = {"first": 1, "step": 1, "period": periods.pop(0), "reset": "daily"}
        return {**body, **grant, "format": None}

    blocks = CounterBlocks(tmp_path)
    reserve = CounterReserve(blocks, ask)
    assert reserve.refill([bundle()]) == 1  # granted before midnight, say
    assert reserve.refill([bundle()]) == 1  # the old day's 8 values do not count today
    assert reserve.refill([bundle()]) == 0
    assert blocks.left("serial", today) == 8 and blocks.left("serial") == 16
