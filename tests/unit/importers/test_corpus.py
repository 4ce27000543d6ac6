"""The import corpus (tests/fixtures/import/corpus): every file imported or refused with a code,
in bounded time; each label's preview compared with a reference renderer's picture of the same
file (zebrash, installed by `make corpus`): barcodes decoded from both with zxing-cpp, ink
regions overlapping. Prints the corpus figures; docs/concepts/import.md records them."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import zxingcpp
from PIL import Image, ImageFilter

from etikett.dsl.label import LabelDocument
from etikett.errors import EtikettError
from etikett.importers import convert
from etikett.render import resolve_variables
from etikett.render.preflight import render_checked

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "import" / "corpus"
REFERENCE = CORPUS / "reference"
FILES = sorted((CORPUS / "carriers").glob("*.zpl"))
SECONDS_PER_FILE = 10  # an import that takes longer counts as a hang


def _reference(jobs: list[dict[str, Any]]) -> list[Image.Image | None]:
    node = shutil.which("node")
    if node is None or not (REFERENCE / "node_modules" / "zpl-renderer-js").is_dir():
        pytest.skip("the reference renderer is not installed: run `make corpus`")
    done = subprocess.run(
        [node, "render.mjs"],
        input=json.dumps(jobs).encode(),
        cwd=REFERENCE,
        capture_output=True,
        timeout=300,
        check=True,
    )
    pictures: list[Image.Image | None] = []
    for answer in json.loads(done.stdout):
        if isinstance(answer, dict):
            pictures.append(None)
        else:
            picture = Image.open(io.BytesIO(base64.b64decode(answer))).convert("L")
            pictures.append(picture.point(lambda v: 0 if v < 128 else 255))
    return pictures


def _codes(image: Image.Image) -> set[str]:
    return {r.text for r in zxingcpp.read_barcodes(image.convert("L")) if r.text}


def _ink(image: Image.Image) -> Image.Image:
    """The picture's dots grown by a few dots: where text and graphics lie, not their glyphs."""
    inverted = Image.eval(image.convert("L"), lambda v: 255 - v)
    return inverted.filter(ImageFilter.MaxFilter(9)).point(lambda v: 255 if v else 0)


def _overlap(ours: Image.Image, reference: Image.Image) -> float:
    """How much of the reference's ink regions our preview covers (1.0: all of it)."""
    size = (min(ours.width, reference.width), min(ours.height, reference.height))
    mine = _ink(ours.crop((0, 0, *size))).tobytes()
    theirs = _ink(reference.crop((0, 0, *size))).tobytes()
    wanted = sum(1 for v in theirs if v)
    covered = sum(1 for a, b in zip(mine, theirs, strict=True) if a and b)
    return covered / wanted if wanted else 1.0


def test_the_corpus_imports_like_its_reference_pictures() -> None:
    assert FILES, "the corpus is empty"
    refused: dict[str, str] = {}
    slow: list[str] = []
    labels: list[tuple[str, LabelDocument, Image.Image, int, int]] = []
    for path in FILES:
        started = time.monotonic()
        try:
            conversion = convert(path.name, path.read_bytes(), dpi=203, max_expanded=8 << 20)
        except EtikettError as error:
            assert error.status < 500 and error.code.startswith("import."), (path, error)
            refused[path.name] = error.code
            continue
        for label in conversion.labels:
            document = LabelDocument.model_validate(label.document)
            values = resolve_variables(document, {}, use_samples=True)
            image, findings = render_checked(document, values, lenient=True)
            errors = sum(1 for f in findings if f.severity == "error")
            barcodes = sum(1 for o in document.objects if o.type == "barcode")
            labels.append((path.name, document, image, errors, barcodes))
        if time.monotonic() - started > SECONDS_PER_FILE:
            slow.append(path.name)
    jobs = [
        {
            "zpl": (CORPUS / "carriers" / name).read_text("latin-1"),
            "width_mm": doc.size.width_mm,
            "height_mm": doc.size.height_mm,
            "dpmm": 8,
        }
        for name, doc, *_ in labels
    ]
    references = _reference(jobs)
    with_data = decoded = readable = same = with_errors = 0
    overlaps: list[float] = []
    for (_, _, image, errors, barcodes), reference in zip(labels, references, strict=True):
        ours = _codes(image)
        with_data += barcodes
        decoded += min(barcodes, len(ours))
        with_errors += errors > 0
        if reference is None:
            continue
        theirs = _codes(reference)
        readable += len(theirs)
        same += len(theirs & ours)
        overlaps.append(_overlap(image, reference))
    decode_rate = decoded / with_data if with_data else 1.0
    same_rate = same / readable if readable else 1.0
    error_rate = with_errors / len(labels) if labels else 0.0
    overlap = sum(overlaps) / len(overlaps) if overlaps else 0.0
    print(
        f"\nimport corpus: {len(FILES)} files, {len(labels)} labels, {len(refused)} refused, "
        f"0 5xx, {len(slow)} hangs; barcodes decoded in our preview {decoded}/{with_data} "
        f"({decode_rate:.0%}); reference barcodes read the same {same}/{readable} "
        f"({same_rate:.0%}); labels with error findings {with_errors}/{len(labels)} "
        f"({error_rate:.0%}); reference ink covered {overlap:.0%}"
    )
    assert slow == []
    assert decode_rate >= 0.97
    assert same_rate >= 0.95
    assert error_rate <= 0.10 or with_errors <= 2  # carrier layouts with crowded quiet zones
    assert overlap >= 0.7  # faces differ from the printer's; regions, not glyphs, must meet
