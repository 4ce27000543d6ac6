"""Where a data stream's time goes, local mode: the phases of one `POST /print` of many records,
from the request to the last label at the printer simulator.

    .venv/bin/python bench/stream_phases.py [--records 1000] [--rounds 3]

For each stream (after a first, untimed one of 200 records), seconds from sending the request:
- `answer`: the 202 (records checked, serials taken, the job and one archive entry per record
  written, the work stored and queued for the print-render function);
- `rendered`: the job leaves `rendering` (the print-render function has encoded every label and
  handed the job to the Runner's queue), polled every 20 ms;
- `first` / `last`: the first and the last label decoded by the simulator (the Runner claims,
  fetches the job's data and sends it).

It also renders the same records in this process (`PrintWork.encode`, CPU time): what rendering
alone costs per label, without local mode's processes beside it. The medians of the rounds are
printed; `make bench` checks the stream's total against its goal (bench/goals.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from print_bench import PrintRig  # noqa: E402

POLL_SECONDS = 0.02
PHASES = ("answer", "rendered", "first", "last")


def records(count: int, offset: int) -> list[dict[str, str]]:
    return [{"name": f"Nr. {offset + i}"} for i in range(count)]


def stream(rig: PrintRig, count: int, offset: int) -> dict[str, float]:
    """One stream's phases, in seconds from the request."""
    before = rig.printed()
    started = time.perf_counter()
    response = rig.api.post(
        "/print",
        json={"label_id": rig.small["id"], "printer": "sim", "data": records(count, offset)},
    )
    assert response.status_code == 202, response.text
    found = {"answer": time.perf_counter() - started}
    job = f"/jobs/{response.json()['job_id']}"
    while rig.printed() - before < count:
        moment = time.perf_counter() - started
        if moment > 600:
            raise TimeoutError(f"{count} records not printed within 600 s")
        if "first" not in found and rig.printed() > before:
            found["first"] = moment
        if "rendered" not in found and rig.api.get(job).json()["status"] != "rendering":
            found["rendered"] = time.perf_counter() - started
        time.sleep(POLL_SECONDS)
    found["last"] = time.perf_counter() - started
    found.setdefault("first", found["last"])
    found.setdefault("rendered", found["first"])
    return found


def render_cpu_ms(rig: PrintRig, count: int) -> float:
    """CPU ms per label of `PrintWork.encode` of the small label's records in this process."""
    from etikett.domain.printing.print_work import PrintWork
    from etikett_engine.dsl.label import LabelDocument

    version = rig.api.get(f"/labels/{rig.small['id']}/document").json()
    document = LabelDocument.model_validate(version.get("document", version))

    def work(offset: int) -> PrintWork:
        """Texts and serials no label has shown yet: nothing comes from the ink cache."""
        return PrintWork(
            document=document,
            records=records(count, offset),
            serials=[{"serial": f"{offset + i:08d}"} for i in range(count)],
            copies=1,
            language="zpl",
            now=datetime.now(UTC),
        )

    work(10**7).encode()  # fonts and the barcode library loaded
    timed = work(2 * 10**7)
    started = time.process_time()
    timed.encode()
    return (time.process_time() - started) / count * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args(argv)
    count = arguments.records
    rounds: list[dict[str, float]] = []
    with PrintRig() as rig:
        stream(rig, 200, 0)  # the small label's first stream: fonts, barcode, warm functions
        for index in range(arguments.rounds):
            phases = stream(rig, count, (index + 1) * 100_000)
            rounds.append(phases)
            shown = "  ".join(f"{name} {phases[name]:.2f}" for name in PHASES)
            print(f"round {index + 1}: {shown} s", flush=True)
        cpu = render_cpu_ms(rig, count)
    median: dict[str, Any] = {name: statistics.median(r[name] for r in rounds) for name in PHASES}
    print(f"\n{count}-record stream (50 x 25 mm, text + Code 128 serial), median of {len(rounds)}:")
    print(f"  request → answer            {median['answer']:.2f} s")
    print(f"  answer → rendered, queued   {median['rendered'] - median['answer']:.2f} s")
    print(f"  rendered → first label      {median['first'] - median['rendered']:.2f} s")
    print(f"  first → last label          {median['last'] - median['first']:.2f} s")
    print(f"  in all {median['last']:.2f} s = {count / median['last']:.0f} labels/s")
    print(f"  rendering alone in one process: {cpu:.2f} ms CPU per label")
    return 0


if __name__ == "__main__":
    sys.exit(main())
