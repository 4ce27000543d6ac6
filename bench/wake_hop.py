"""The wake's own hop (issue 29): what a print to a sleeping Runner costs more than a print to the
same Runner while it polls its queue. One simulated Runner of `bench/fleet.py` (real mutual TLS,
its own queue, local mode's MQTT broker) is printed to alternately while it polls (0.3 s after
its last print) and while it sleeps (after its promise to poll is over), against `etikett dev`.
Its promise is 3 s and its long polls 2 s here, so that it falls asleep within seconds; the
service then wakes it for every print (a promise shorter than the service's 30 s margin), which
a polling Runner ignores.

    .venv/bin/python bench/wake_hop.py [--samples 10]

Reported per state, p50 from sending `POST /print`: the service's answer, the wake reaching the
Runner, the Runner's receive starting, and the Runner holding the claimed job; the hop is the
difference of the holds. Every print is to the same printer, so the service's caches are warm in
both states (the fleet bench shows a Runner's first print after idling, caches and all)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

import fleet  # noqa: E402 - after the path

PROMISE_SECONDS = 3  # ETIKETT_RUNNER_AWAKE_SECONDS
RECEIVE_WAIT = 2  # the simulated Runner's long poll
ASLEEP_AFTER = PROMISE_SECONDS + RECEIVE_WAIT + 1.5  # its promise and last poll are over
STATES = ("awake", "asleep")


async def measure(samples: int) -> dict[str, list[dict[str, float]]]:
    import httpx

    from support.server import DevServer

    work = Path(tempfile.mkdtemp(prefix="etikett-wake-hop-"))
    server = DevServer(work / "home", env={"ETIKETT_RUNNER_AWAKE_SECONDS": str(PROMISE_SECONDS)})
    server.start()
    stop = asyncio.Event()
    rows: dict[str, list[dict[str, float]]] = {state: [] for state in STATES}
    try:
        api, label_id, group_id = fleet.prepare(server)
        runner, printers = await fleet.add_runner(
            api, server, group_id, "hop", 1, fleet.Counts(), work
        )
        runner.receive_wait = RECEIVE_WAIT
        running = asyncio.create_task(runner.run("wake", stop))
        await runner.polling.wait()
        client = httpx.AsyncClient(base_url=f"{server.url}/api/v1", timeout=60, trust_env=False)
        client.headers["Authorization"] = api.headers["Authorization"]
        for index in range(2 * samples + 2):  # the first two warm up
            state = STATES[index % 2]
            await asyncio.sleep(ASLEEP_AFTER if state == "asleep" else 0.3)
            row = await _print(client, runner, label_id)
            if index >= 2:
                rows[state].append(row)
        await client.aclose()
        stop.set()
        await runner.close()
        running.cancel()
        for printer in printers:
            printer.close()
    finally:
        server.stop()
    return rows


async def _print(client: Any, runner: fleet.SimulatedRunner, label_id: str) -> dict[str, float]:
    assert runner.wake is not None
    sent = time.perf_counter()
    answer = await client.post("/print", json={"label_id": label_id, "printer": "hop-0"})
    answered = time.perf_counter()
    if answer.status_code != 202:
        raise RuntimeError(f"print: {answer.status_code} {answer.text[:200]}")
    job_id = answer.json()["job_id"]
    while job_id not in runner.held:
        await asyncio.sleep(0.001)

    def since(moment: float) -> float:  # NaN: it did not happen during this print
        return (moment - sent) * 1000 if moment >= sent else float("nan")

    return {
        "answered": since(answered),
        "woken": since(runner.wake.woken_at),
        "looked": since(runner.looked[job_id]),
        "holds": since(runner.held[job_id]),
    }


def _p50(rows: list[dict[str, float]], key: str) -> float:
    values = [row[key] for row in rows if row[key] == row[key]]
    return statistics.median(values) if values else float("nan")


def report(rows: dict[str, list[dict[str, float]]]) -> float:
    print("p50 ms from sending POST /print   answered   woken   receive starts   holds the job")
    for state in STATES:
        got = rows[state]
        print(
            f"  {state:6} ({len(got)} prints)        {_p50(got, 'answered'):8.1f} "
            f"{_p50(got, 'woken'):7.1f} {_p50(got, 'looked'):16.1f} {_p50(got, 'holds'):15.1f}"
        )
    hop = _p50(rows["asleep"], "holds") - _p50(rows["awake"], "holds")
    print(f"  the wake's hop (asleep - awake, holds): {hop:.1f} ms")
    print("  (awake, the receive that found the job started before the print: none shown)")
    return hop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10, help="prints in each state")
    args = parser.parse_args(argv)
    report(asyncio.run(measure(args.samples)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
