"""Render benchmarks: preview latency, ZPL Z64 packing against zebrafy, peak memory at 600 dpi.

    .venv/bin/python bench/render_bench.py                 # everything, a table at the end
    .venv/bin/python bench/render_bench.py --repeat 200

1. Preview of a GS1 logistics label (4 x 6 in, 203 dpi: sender and address blocks, a GS1-128 SSCC,
   a GS1 DataMatrix, frame and rule): render + 1-bit PNG, in process, median. "cold" forgets the
   encoded barcodes before each run (fonts stay loaded, as in a warm Lambda); "warm" keeps them.
2. ZPL ^GFA Z64 of the same 4 x 6 in raster: ours against zebrafy's ZebrafyImage on the same PIL
   image (checked to inflate to the same rows), interleaved, medians of CPU time and the ratio
   (goal: zebrafy takes at least 5x as long).
3. A fresh process that imports the renderer and renders + packs a 4 x 6 in label at 600 dpi:
   its wall time and peak RSS (ru_maxrss).

Exit status 0 when every measurement ran (a budget FAIL is a finding, not an error).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PREVIEW_BUDGET_MS = 30.0
PREVIEW_WARM_GOAL_MS = 1.0  # ARCHITECTURE.md: whole preview, warm, in process
Z64_GOAL = 5.0  # zebrafy's time / ours, same raster
RSS_BUDGET_MB = 150.0
MARKER = "RENDER-BENCH "


def logistics_label(dpi: int) -> Any:
    """The same label the render tests use (tests/unit/render/samples.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from unit.render.samples import logistics_label as sample

    return sample(dpi)


def median_ms(
    action: Callable[[], Any],
    repeat: int,
    warmup: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeat):
        start = clock()
        action()
        samples.append((clock() - start) * 1000)
    return statistics.median(samples)


def bench_preview(repeat: int) -> dict[str, float]:
    from etikett_engine.render import clear_caches, render, to_png

    document = logistics_label(203)

    def cold() -> None:
        clear_caches()
        to_png(render(document, {}))

    def warm() -> None:
        to_png(render(document, {}))

    return {
        "cold": median_ms(cold, repeat),
        "warm": median_ms(warm, repeat),
        # The same by the CPU time it used: on a shared machine the wall clock adds the time the
        # process waited for a core.
        "warm_cpu": median_ms(warm, repeat, clock=time.process_time),
    }


def z64_rows(job: str) -> bytes:
    """The rows a ZPL job's Z64 graphic field inflates to (its CRC checked)."""
    import base64
    import binascii
    import zlib

    found = re.search(r":Z64:([^:]+):([0-9A-F]{4})", job)
    if found is None or f"{binascii.crc_hqx(found[1].encode(), 0):04X}" != found[2]:
        raise ValueError("no Z64 field with a valid CRC")
    return zlib.decompress(base64.b64decode(found[1]))


def bench_zpl(repeat: int) -> dict[str, Any]:
    """Ours and zebrafy's Z64 of the same raster, interleaved (one run of each per round, CPU
    time, so that a busy machine slows both alike); the decoded rows must be the same."""
    from zebrafy import ZebrafyImage

    from etikett_engine.render import encode_zpl, render

    image = render(logistics_label(203), {})

    def ours() -> str:
        return encode_zpl(image).decode("ascii")

    def zebrafy() -> str:
        return str(ZebrafyImage(image, format="Z64", complete_zpl=True).to_zpl())

    same = z64_rows(ours()) == z64_rows(zebrafy())
    samples: dict[str, list[float]] = {"ours": [], "zebrafy": []}
    for _ in range(5):
        ours(), zebrafy()
    for _ in range(repeat):
        for name, action in (("ours", ours), ("zebrafy", zebrafy)):
            start = time.process_time()
            action()
            samples[name].append((time.process_time() - start) * 1000)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {
        **medians,
        "ratio": medians["zebrafy"] / medians["ours"],
        "same_data": same,
        "acs": median_ms(lambda: encode_zpl(image, compression="acs"), max(5, repeat // 4)),
    }


def child_600dpi() -> None:
    start = time.perf_counter()
    from etikett_engine.render import encode_zpl, render, to_png

    image = render(logistics_label(600), {})
    png = to_png(image)
    job = encode_zpl(image)
    elapsed = (time.perf_counter() - start) * 1000
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        MARKER
        + json.dumps(
            {
                "ms": elapsed,
                "peak_mb": peak_kb / 1024,
                "size": image.size,
                "png": len(png),
                "zpl": len(job),
            }
        )
    )


def bench_600dpi() -> dict[str, Any]:
    baseline = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, etikett_engine.dsl.label; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    out = subprocess.run(
        [sys.executable, __file__, "--child-600dpi"], capture_output=True, text=True, check=True
    )
    line = next(line for line in out.stdout.splitlines() if line.startswith(MARKER))
    result: dict[str, Any] = json.loads(line[len(MARKER) :])
    result["baseline_mb"] = int(baseline.stdout.strip()) / 1024
    return result


def verdict(ok: bool) -> str:
    return "ok" if ok else "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--child-600dpi", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_600dpi:
        child_600dpi()
        return 0

    preview = bench_preview(args.repeat)
    zpl = bench_zpl(args.repeat)
    big = bench_600dpi()

    rows = [
        (
            "preview 4x6 in @203, render + PNG, cold caches",
            f"{preview['cold']:.2f} ms",
            f"< {PREVIEW_BUDGET_MS:.0f} ms",
            verdict(preview["cold"] < PREVIEW_BUDGET_MS),
        ),
        (
            "preview 4x6 in @203, render + PNG, warm",
            f"{preview['warm']:.2f} ms",
            f"<= {PREVIEW_WARM_GOAL_MS:.0f} ms",
            verdict(preview["warm"] <= PREVIEW_WARM_GOAL_MS),
        ),
        ("ZPL ^GFA Z64 4x6 in @203, ours", f"{zpl['ours']:.2f} ms", "", ""),
        ("ZPL ^GFA ACS 4x6 in @203, ours", f"{zpl['acs']:.2f} ms", "", ""),
    ]
    rows += [
        ("ZPL ^GFA Z64 4x6 in @203, zebrafy", f"{zpl['zebrafy']:.2f} ms", "", ""),
        (
            "zebrafy / ours (decoded rows the same: " + ("yes" if zpl["same_data"] else "NO") + ")",
            f"{zpl['ratio']:.2f}x",
            f">= {Z64_GOAL:.0f}x",
            verdict(zpl["ratio"] >= Z64_GOAL and zpl["same_data"]),
        ),
    ]
    rows += [
        (
            f"fresh process: import + render + PNG + ZPL @600 ({big['size'][0]}x{big['size'][1]})",
            f"{big['ms']:.0f} ms",
            "",
            "",
        ),
        (
            "fresh process @600 dpi: peak RSS",
            f"{big['peak_mb']:.1f} MB",
            f"< {RSS_BUDGET_MB:.0f} MB",
            verdict(big["peak_mb"] < RSS_BUDGET_MB),
        ),
        ("  (python + label model alone)", f"{big['baseline_mb']:.1f} MB", "", ""),
    ]
    widths = [max(len(str(row[i])) for row in rows) for i in range(4)]
    header = ("measurement", "result", "target", "")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print(f"render benchmarks ({args.repeat} runs each, medians; Python {sys.version.split()[0]})")
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))
    sys.exit(main())
