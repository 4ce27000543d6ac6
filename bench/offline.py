"""Offline printing on the Runner: a record dropped as a file in a watched folder → the label's
bytes at the printer simulator, with the service away.

In this process: the Runner's flow host (`etikett_runner.flow_host`) runs a folder flow from a
bundle signed with an Ed25519 key it pinned (verified as on a site), its agent channel points at
a closed loopback port (each call to the service is refused, as with the service stopped), its
counter blocks are reserved up front, and a printer simulator listens on loopback. Each round
drops one CSV file of one record (written aside, then renamed in) and waits until the simulator
has received the label; the time from the rename to the simulator's `received_at`. The label is
4 × 6 in at 203 dpi with a text, a Code 128 serial, a GS1-128 and a DataMatrix (three barcodes).
Files are looked at every `--folder-seconds` (a file counts once it stood still between two
looks), so that interval is part of the figure.

    .venv/bin/python bench/offline.py                      # 40 files after 3 warm-up files
    .venv/bin/python bench/offline.py --files 100 --folder-seconds 0.005
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import socket
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

GOAL_P50_MS = 30.0
LABEL = "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5"
DOCUMENT: dict[str, Any] = {
    "size": {"width_mm": 101.6, "height_mm": 152.4},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string"}],
    "objects": [
        {"id": "to", "type": "text", "x_mm": 6, "y_mm": 6, "size_pt": 18, "expression": "name"},
        {
            "id": "serial",
            "type": "barcode",
            "symbology": "code128",
            "x_mm": 6,
            "y_mm": 20,
            "height_mm": 20,
            "expression": "string(counters.bench_serial)",
        },
        {
            "id": "gtin",
            "type": "barcode",
            "symbology": "gs1-128",
            "x_mm": 6,
            "y_mm": 50,
            "height_mm": 25,
            "expression": "'(01)09521234543213(21)' + string(counters.bench_serial)",
        },
        {
            "id": "matrix",
            "type": "barcode",
            "symbology": "datamatrix",
            "x_mm": 6,
            "y_mm": 90,
            "height_mm": 30,
            "expression": "'SERIAL ' + string(counters.bench_serial) + ' ' + name",
        },
    ],
}
FLOW = {
    "nodes": [
        {"id": "in", "type": "trigger.folder", "path": "in", "wires": ["p"]},
        {
            "id": "p",
            "type": "action.print",
            "label": LABEL,
            "printer": "main",
            "variables": {"name": "record.name"},
        },
    ]
}


class StoppedService:
    """The agent channel of a Runner whose service is stopped: every call goes through the
    Runner's transport to a loopback port nobody listens on (ServerAway)."""

    def __init__(self) -> None:
        from etikett_runner.transport import call

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.url = f"http://127.0.0.1:{probe.getsockname()[1]}"  # closed once left
        self._client = httpx.Client(trust_env=False, timeout=2.0)
        self._call = call

    def _refused(self, path: str, body: Any = None) -> Any:
        return self._call(self._client, "POST", self.url + path, json=body)

    def config(self) -> dict[str, Any]:
        return dict(self._refused("/config"))

    def flows(self) -> list[dict[str, Any]]:
        return list(self._refused("/flows"))

    def deployment_status(self, deployment_id: str, body: dict[str, Any]) -> None:
        self._refused("/status", body)

    def flow_print(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._refused("/flow-prints", body))

    def flow_run(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._refused("/flow-runs", body))

    def counter_block(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._refused("/counter-blocks", body))


def signed_spec() -> tuple[dict[str, Any], str]:
    """The deployed flow as the service answers it, with its bundle signed by a fresh key (and
    that key's public PEM, to pin)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    payload = {
        "format": 1,
        "deployment_id": "dep_bench",
        "runner_id": "run_bench",
        "flow_id": "flw_bench",
        "version": 1,
        "document": FLOW,
        "context": {},
        "printers": {"main": "Bench Zebra"},
        "labels": [{"reference": LABEL, "label_id": LABEL, "version": 1, "document": DOCUMENT}],
        "not_offline": [],
        "offline": {
            "allowed": True,
            "max_hours": 8,
            "max_labels": 100_000,
            "counter_block_size": 10_000,
        },
    }
    data = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    bundle = {
        "payload": base64.b64encode(data).decode(),
        "signature": base64.b64encode(key.sign(data)).decode(),
    }
    spec = {k: payload[k] for k in ("deployment_id", "flow_id", "version", "document")}
    spec.update(context={}, printers=payload["printers"], bundle=bundle)
    return spec, public.decode()


def measure(files: int, warmup: int = 3, folder_seconds: float = 0.01) -> list[float]:
    """Milliseconds from each file renamed into the folder to its label at the simulator."""
    from etikett_runner import reach
    from etikett_runner.connectivity import Connectivity
    from etikett_runner.flow_host import FlowHost
    from etikett_runner.printer_sim import PrinterSimulator
    from etikett_runner.printers import Printers, PrinterTarget
    from etikett_runner.targets import Address
    from etikett_runner.tuning import Tuning

    logging.getLogger("etikett_runner").setLevel(logging.ERROR)
    reach.configure(reach.Reach(loopback_printers=True))  # the simulator is on loopback
    timings: list[float] = []
    with tempfile.TemporaryDirectory(prefix="etikett-offline-") as folder:
        root = Path(folder)
        state, data = root / "state", root / "data"
        state.mkdir(mode=0o700)
        (data / "in").mkdir(parents=True)
        with PrinterSimulator(port=0, dpi=203) as simulator:
            stop = threading.Event()
            printers = Printers()
            address = Address("127.0.0.1", simulator.port)
            printers.configure([PrinterTarget(address, "zpl", "prn_bench", "Bench Zebra", 203)])
            channel = StoppedService()
            host = FlowHost(
                channel,  # type: ignore[arg-type]
                state,
                data,
                Connectivity(stop),
                lambda removed: None,
                tuning=Tuning(folder_seconds=folder_seconds, flows_seconds=3600),
                printers=printers,
            )
            spec, public = signed_spec()
            host.identity = {"id": "run_bench", "name": "bench", "group_id": "rgp_bench"}
            host.bundles.pin(public)
            granted = {"first": 1, "step": 1, "period": "", "reset": "never", "format": None}
            host.counter_blocks.refill("bench_serial", 10_000, 1, lambda body: {**body, **granted})
            host.apply([spec])  # verified, started: the folder is watched
            sender = threading.Thread(target=host.sender.run, args=(stop,), daemon=True)
            sender.start()
            try:
                for number in range(warmup + files):
                    before = simulator.engine.printed_total
                    aside = data / "in" / f".order-{number}.part"
                    aside.write_text(f"name\nCustomer {number}\n")
                    dropped = datetime.now(UTC)
                    aside.rename(data / "in" / f"order-{number}.csv")
                    (label,) = simulator.wait_printed(before + 1, timeout=30)[-1:]
                    if number >= warmup:
                        timings.append((label.received_at - dropped).total_seconds() * 1000)
            finally:
                stop.set()
                for flow in host.running.values():
                    flow.close()
                sender.join(10)
    return timings


def render_ms(repeat: int = 20) -> float:
    """p50 of rendering the label's job alone (`rendering.render_label`, no preview), warm."""
    from etikett_runner.rendering import render_label

    times = []
    for number in range(repeat + 2):
        started = time.perf_counter()
        render_label(
            DOCUMENT,
            {"name": f"Customer {number}"},
            {"bench_serial": number + 1},
            language="zpl",
            copies=1,
            now=datetime.now(UTC),
            preview=False,
        )
        if number >= 2:
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--folder-seconds", type=float, default=0.01)
    arguments = parser.parse_args(argv)
    timings = measure(arguments.files, folder_seconds=arguments.folder_seconds)
    p50 = statistics.median(timings)
    p95 = statistics.quantiles(timings, n=20)[18] if len(timings) > 1 else p50
    verdict = "PASS" if p50 <= GOAL_P50_MS else "FAIL"
    print(
        f"offline: file dropped → label at the simulator, {len(timings)} files, folder looked "
        f"at every {arguments.folder_seconds * 1000:.0f} ms: p50 {p50:.1f} ms, p95 {p95:.1f} "
        f"ms, min {min(timings):.1f}, max {max(timings):.1f} (goal p50 ≤ {GOAL_P50_MS:.0f} ms: "
        f"{verdict}); rendering the label alone: p50 {render_ms():.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
