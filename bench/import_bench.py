"""Import and preflight, in process: the two budgets of the import/preflight issue.

    .venv/bin/python bench/import_bench.py [--repeat 200]

1. Import of a 200-object ZPL format (texts, fields, boxes, lines, Code 128, GS1-128, QR): the
   conversion to a label document plus its validation (schema and CEL), as postImport does before
   it stores anything. Budget: median ≤ 20 ms.
2. Preflight on a preview: a warm preview (resolve the samples, render, pack the PNG) with and
   without the checks, for every Vorlage. Budget: ≤ 10 % more, for each Vorlage (the 4 × 6 in
   GS1 logistic label is the preview budget's label in ARCHITECTURE; the small labels have the
   smallest previews, so the checks' fixed cost weighs most there).

Nothing leaves the process; prints one table.
"""

from __future__ import annotations

import argparse
import statistics
import time


def zpl_format(objects: int = 200) -> bytes:
    """A 4 × 6 in format with `objects` fields, cycling through the kinds an import meets."""
    lines = ["^XA", "^PW812", "^LL1218", "^CI28", "^BY2,3,60"]
    for index in range(objects):
        x, y = 20 + (index % 4) * 190, 20 + (index // 4) * 23
        kind = index % 8
        if kind == 0:
            lines.append(f"^FO{x},{y}^A0N,20,20^FDText {index}^FS")
        elif kind == 1:
            lines.append(f'^FO{x},{y}^A0N,20,20^FN{index}"Field {index}"^FDValue {index}^FS')
        elif kind == 2:
            lines.append(f"^FO{x},{y}^GB150,20,2^FS")
        elif kind == 3:
            lines.append(f"^FO{x},{y}^GB150,2,2^FS")
        elif kind == 4:
            lines.append(f"^FO{x},{y}^BCN,20,N,N,N^FDA{index:05d}^FS")
        elif kind == 5:
            lines.append(f"^FO{x},{y}^BCN,20,N,N,N^FD>;>80104012345000016>810L{index}^FS")
        elif kind == 6:
            lines.append(f"^FO{x},{y}^BQN,2,1^FDQA,{index}^FS")
        else:
            lines.append(f"^FO{x},{y}^GE40,20,2^FS")
    lines.append("^XZ")
    return "\n".join(lines).encode()


def import_times(repeat: int) -> tuple[list[float], int]:
    from etikett.domain.labels.label_versions import validate_label
    from etikett.importers.formats import convert

    data = zpl_format(200)
    count = 0
    times = []
    for index in range(repeat + 5):
        started = time.perf_counter()
        conversion = convert("bench.zpl", data, dpi=203, max_expanded=8 << 20)
        document = validate_label(conversion.labels[0].document)
        elapsed = (time.perf_counter() - started) * 1000
        count = len(document.objects)
        if index >= 5:
            times.append(elapsed)
    return times, count


def preview_overhead(repeat: int) -> list[tuple[str, float, float]]:
    from etikett.catalog.vorlagen import sample_values, vorlagen
    from etikett_engine.render import render, resolve_variables, to_png
    from etikett_engine.render.preflight import render_checked

    rows = []
    for vorlage in vorlagen():
        document = vorlage.label()
        samples = sample_values(vorlage)

        def plain(document=document, samples=samples) -> None:
            values = resolve_variables(document, samples, use_samples=True)
            to_png(render(document, values))

        def checked(document=document, samples=samples) -> None:
            values = resolve_variables(document, samples, use_samples=True)
            image, _ = render_checked(document, values)
            to_png(image)

        for _ in range(5):
            plain()
            checked()
        best_plain = best_checked = float("inf")
        for _ in range(3):  # the quietest of three rounds: the machine is shared
            plain_times, checked_times = [], []
            for _ in range(repeat):  # interleaved, so a busy moment slows both alike
                started = time.process_time()
                plain()
                plain_times.append((time.process_time() - started) * 1000)
                started = time.process_time()
                checked()
                checked_times.append((time.process_time() - started) * 1000)
            best_plain = min(best_plain, statistics.median(plain_times))
            best_checked = min(best_checked, statistics.median(checked_times))
        rows.append((vorlage.id, best_plain, best_checked))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    times, count = import_times(args.repeat)
    median = statistics.median(times)
    p90 = sorted(times)[int(len(times) * 0.9) - 1]
    print(f"import of a {count}-object ZPL format (convert + validate), in process:")
    verdict = "ok" if median <= 20 else "FAIL"
    print(f"  median {median:.1f} ms, p90 {p90:.1f} ms  (budget ≤ 20 ms: {verdict})")
    print()
    print(f"preview (resolve, render, PNG), warm, CPU ms: best of 3 medians of {args.repeat}")
    print(f"  {'Vorlage':<22} {'plain ms':>9} {'checked ms':>11} {'added':>7}")
    failed = 0
    for name, plain, checked in preview_overhead(args.repeat):
        added = (checked / plain - 1) * 100
        verdict = "PASS" if added <= 10 else "FAIL"
        failed += verdict == "FAIL"
        print(f"  {name:<22} {plain:>9.2f} {checked:>11.2f} {added:>6.1f}% {verdict}")
    print("  budget: preflight adds ≤ 10 % to the preview of every Vorlage")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
