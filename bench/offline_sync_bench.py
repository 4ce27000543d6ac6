"""The sync rate of offline prints, local mode: a Runner's journal of prints made while the
service was away, uploaded by the Runner's own uploader (`etikett_runner.offline_sync`, over its
mutual-TLS agent channel) to `etikett dev`, which archives each print exactly once.

    .venv/bin/python bench/offline_sync_bench.py [--labels 2000] [--records 1 10]

For each `--records` size: `--labels` archive entries journaled as prints of that many records
(each label a value of a reserved counter block), then timed from the first upload to the
journal empty: archive entries per second (goal ≥ 500), and the processor time the service's
processes (`etikett dev`, its agent channel, local AWS, local workers) spent meanwhile, which a
busy machine changes less than the rate. Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

GOAL_RATE = 500.0  # archive entries a second


def _service_cpu(pid: int) -> dict[str, float]:
    """Processor seconds (user and system) of `etikett dev` (`pid`) and of its child processes
    (the agent channel, local AWS, local workers: the event sources' pollers and functions),
    read from /proc
    (Linux; nothing elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    used: dict[str, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        own, parent = int(stat.parent.name), int(fields[1])
        if pid in (own, parent):
            name = "etikett dev" if own == pid else _child_name(stat.parent / "cmdline")
            used[name] = used.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return used


# `etikett dev`'s children by the module they run (children.py); the others are local AWS.
_CHILDREN = {
    b"etikett.local.workers": "local workers",
    b"etikett.local.agent_gateway": "agent channel",
    b"etikett.local.broker": "MQTT broker",
}


def _child_name(cmdline: Path) -> str:
    try:
        command = cmdline.read_bytes()
    except OSError:
        command = b""
    return next((name for module, name in _CHILDREN.items() if module in command), "local AWS")


def _site(admin: Any, server: Any, folder: Path) -> dict[str, Any]:
    from support.client import unique
    from support.offline_site import deploy, enroll, label_with_counter, printer_of

    counter = unique("lot").replace("-", "_")
    made = admin.post("/counters", json={"name": counter, "start": 1, "format": "000000"})
    assert made.status_code == 201, made.text
    label = label_with_counter(admin, counter)
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    runner_id, agent, site = enroll(admin, server, folder, group)
    printer = printer_of(admin, runner_id)
    return {
        "counter": counter,
        "label": label,
        "printer": printer,
        "deployment": deploy(admin, label, group, printer["id"]),
        "agent": agent,
        "site": site,
    }


def measure(labels: int, records: list[int]) -> dict[int, float]:
    """Archive entries a second, by records per print."""
    with tempfile.TemporaryDirectory(prefix="etikett-offline-sync-bench-") as folder:
        return _measure(Path(folder), labels, records)


def _measure(work: Path, labels: int, records: list[int]) -> dict[int, float]:
    from etikett_runner.channel import AgentChannel
    from etikett_runner.connectivity import Connectivity
    from etikett_runner.offline_prints import OfflinePrints
    from etikett_runner.offline_sync import OfflineSync

    from support.client import PASSWORD, Api
    from support.offline_site import offline_print, reserve
    from support.server import DevServer

    server = DevServer(work / "home")
    server.start()
    rates: dict[int, float] = {}
    try:
        anonymous = Api(server.url)
        setup = anonymous.post("/auth/setup", json={"username": "bench", "password": PASSWORD})
        assert setup.status_code == 201, setup.text
        admin = anonymous.as_token(setup.json()["token"])
        hall = _site(admin, server, work)
        folder = hall["site"].folder
        channel = AgentChannel(
            server.agent_url, folder / "cert.pem", folder / "key.pem", [server.ca_file]
        )
        try:
            for size in records:
                block = reserve(hall["agent"], hall["counter"], labels)
                state = work / f"state-{size}"
                state.mkdir()
                journal = OfflinePrints(state)
                first = block["first"]
                for start in range(first, first + labels, size):
                    taken = offline_print(
                        hall, list(range(start, min(start + size, first + labels)))
                    )
                    taken.outcome = "sent"
                    journal.record(taken)
                uploader = OfflineSync(
                    channel, journal, state, Connectivity(threading.Event()), lambda _: None
                )
                assert server.process is not None
                cpu_before = _service_cpu(server.process.pid)
                started = time.perf_counter()
                assert uploader.sync(), "the service did not take the upload"
                elapsed = time.perf_counter() - started
                cpu = {
                    name: used - cpu_before.get(name, 0.0)
                    for name, used in _service_cpu(server.process.pid).items()
                }
                assert journal.unsynced() == [] and uploader.refused() == []
                rates[size] = labels / elapsed
                spent = ", ".join(
                    f"{name} {used / labels * 1000:.2f} s" for name, used in sorted(cpu.items())
                )
                print(
                    f"  {labels} labels as prints of {size} record(s): {elapsed:.2f} s, "
                    f"{labels / elapsed:.0f} entries/s; processor time per 1,000 entries: "
                    f"{spent or 'not measured'}",
                    file=sys.stderr,
                )
        finally:
            channel.close()
    finally:
        server.stop()
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--labels", type=int, default=2000)
    parser.add_argument("--records", type=int, nargs="+", default=[1, 10])
    arguments = parser.parse_args(argv)
    rates = measure(arguments.labels, arguments.records)
    for size, rate in rates.items():
        verdict = "PASS" if rate >= GOAL_RATE else "FAIL"
        print(f"offline sync, prints of {size} record(s): {rate:.0f} entries/s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
