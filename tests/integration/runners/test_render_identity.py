"""One renderer: a Runner renders a label to the very bytes the service does.

The engine's wheel, built as the installer ships it (`make -C engine wheel`), and the Runner's
package are installed into a folder of their own, then run with `python -S` (the service's
package and the editable engine are nowhere to import, the third-party libraries come from this
environment as a site's pip would install them). There the Runner's on-site renderer renders
every Vorlage on every preset it fits at 203, 300 and 600 dpi (the matrix of
tests/unit/catalog/test_vorlagen_preflight.py); the preview PNG and the ZPL, TSPL and EPL jobs
equal, byte for byte, what the service's print path (`PrintWork.encode`) and previews
(`render_checked`, as `previews.preview` draws) produce in this process: 60 cases × PNG, ZPL,
TSPL and EPL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from unit.catalog.test_vorlagen_preflight import CASES, IDS, _on

from etikett.catalog.vorlagen import sample_values
from etikett.domain.printing.print_work import PrintWork
from etikett_engine.render import LANGUAGES, to_png
from etikett_engine.render.preflight import render_checked
from etikett_engine.render.values import resolve_variables

REPO = Path(__file__).parents[3]
NOW = dt.datetime(2025, 5, 20, 7, 30, 12, 345000, tzinfo=dt.UTC)

ON_SITE = r"""
import hashlib, importlib.util, json, sys
from datetime import datetime
sys.path[:0] = [sys.argv[1]]
sys.path.append(sys.argv[2])
import etikett_engine
from etikett_runner.rendering import render_label

cases = json.load(sys.stdin)
digests = {}
for case in cases:
    now = datetime.fromisoformat(case["now"])
    jobs = {
        language: render_label(
            case["document"], case["record"], {}, language=language, copies=2, now=now
        )
        for language in case["languages"]
    }
    digest = {k: hashlib.sha256(v.job).hexdigest() for k, v in jobs.items()}
    digest["png"] = hashlib.sha256(jobs["zpl"].png).hexdigest()
    digests[case["id"]] = digest
print(json.dumps({
    "digests": digests,
    "engine": etikett_engine.__file__,
    "service": importlib.util.find_spec("etikett") is not None,
}))
"""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _service(document: Any, record: dict[str, Any]) -> dict[str, str]:
    digest = {
        language: _sha(
            PrintWork(
                document=document,
                records=[record],
                serials=[{}],
                copies=2,
                language=language,
                now=NOW,
            ).encode()
        )
        for language in LANGUAGES
    }
    values = resolve_variables(document, record, use_samples=False, now=NOW, counters={})
    # As a preview draws it, but strict: an object left out (a CEL evaluation over its time
    # budget on a loaded machine) raises here instead of passing for a different raster.
    image, findings = render_checked(document, values, counters={}, now=NOW, lenient=False)
    assert [f for f in findings if f.severity == "error"] == []
    digest["png"] = _sha(to_png(image))
    return digest


def test_the_runner_renders_the_service_s_bytes_over_the_vorlagen_matrix(tmp_path: Path) -> None:
    wheels, site = tmp_path / "packages", tmp_path / "site"
    make = ["make", "-s", "-C", str(REPO / "engine"), "wheel", f"PYTHON={sys.executable}"]
    built = subprocess.run(
        [*make, f"OUT={wheels}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("etikett_engine-*.whl")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip += ["--no-deps", "--no-index", "--no-build-isolation", "--target", str(site)]
    installed = subprocess.run(
        [*pip, str(wheel), str(REPO / "runner")], capture_output=True, text=True, timeout=300
    )
    assert installed.returncode == 0, installed.stderr

    cases, expected = [], {}
    for (vorlage, size, dpi), case_id in zip(CASES, IDS, strict=True):
        document = _on(vorlage, size, dpi)
        record = json.loads(json.dumps(sample_values(vorlage), default=str))
        expected[case_id] = _service(document, record)
        cases.append(
            {
                "id": case_id,
                "document": document.model_dump(mode="json", exclude_none=True),
                "record": record,
                "languages": list(LANGUAGES),
                "now": NOW.isoformat(),
            }
        )
    ran = subprocess.run(
        [sys.executable, "-S", "-c", ON_SITE, str(site), sysconfig.get_paths()["purelib"]],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["service"] is False
    assert Path(answer["engine"]).is_relative_to(site)  # the shipped wheel, not the source
    assert len(expected) == len(CASES) >= 60
    different = [k for k in expected if answer["digests"].get(k) != expected[k]]
    assert different == [], [(k, expected[k], answer["digests"].get(k)) for k in different]
