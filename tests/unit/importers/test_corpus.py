"""The import corpus (tests/fixtures/import/corpus): every file, ours and public, imported or
refused with a code, in bounded time; each label's preview compared with its own renderer's
picture of the same file (Labelary's where a public file ships it, zebrash for other ZPL, gLabels 3
for gLabels): barcodes decoded from both with zxing-cpp, ink regions overlapping, error findings
counted on labels whose reference picture is not clipped. Prints the figures;
docs/concepts/import.md records them."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import zxingcpp
from PIL import Image, ImageFilter

from etikett.importers.formats import convert
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import EtikettError
from etikett_engine.render import resolve_variables
from etikett_engine.render.preflight import render_checked

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "import" / "corpus"
REFERENCE = CORPUS / "reference"
PUBLIC = CORPUS / "public"
RENDERED = CORPUS / "rendered"
ZEBRA_DAY = PUBLIC / "site" / "zebra_day" / "etc" / "label_styles"
LABELARY = PUBLIC / "node_modules" / "labelary" / "test" / "files"
SECONDS_PER_FILE = 10  # an import that takes longer counts as a hang
# zebra-day's templates carry `{name}` placeholders that it fills before printing; these are the
# values a printer would receive.
TEMPLATE_VALUES = {"uid_barcode": "ZD00012345", "alt_a": "ALT A", "alt_b": "ALT B"}


@dataclass
class Sample:
    """One corpus file: where it comes from, what the printer receives, its reference picture."""

    name: str
    data: bytes
    picture: Path | None = None  # a picture its own renderer made (Labelary's, gLabels')
    zebrash: bool = False  # rendered with zebrash here


def _filled(text: str) -> bytes:
    values = lambda m: TEMPLATE_VALUES.get(m[1], m[1].replace("_", " ").upper())  # noqa: E731
    return re.sub(r"\{(\w+)\}", values, text).encode("latin-1")


def _samples() -> list[Sample]:
    if (
        not (REFERENCE / "node_modules" / "zpl-renderer-js").is_dir()
        or shutil.which("node") is None
    ):
        pytest.skip("the reference renderer is not installed: run `make corpus`")
    if not ZEBRA_DAY.is_dir() or not LABELARY.is_dir():
        pytest.skip("the public corpus files are not installed: run `make corpus`")
    samples = [
        Sample(f"ours/{p.name}", p.read_bytes(), zebrash=True)
        for p in sorted((CORPUS / "carriers").glob("*.zpl"))
    ]
    for path in sorted((CORPUS / "glabels").glob("*.glabels")):
        picture = RENDERED / (path.stem.replace("-v4", "-v3") + ".png")
        if not picture.is_file():
            pytest.skip(f"gLabels' picture of {path.name} is missing: run `make corpus`")
        samples.append(Sample(f"ours/{path.name}", path.read_bytes(), picture))
    samples += [
        Sample(f"zebra-day/{p.name}", _filled(p.read_text("latin-1")), zebrash=True)
        for p in sorted(ZEBRA_DAY.glob("*.zpl"))
    ]
    samples.append(
        Sample(
            "labelary/test_zpl_label.zpl",
            (LABELARY / "test_zpl_label.zpl").read_bytes(),
            LABELARY / "test_new_label.png",
        )
    )
    return samples


def _zebrash(jobs: list[dict[str, Any]]) -> list[Image.Image | None]:
    done = subprocess.run(
        ["node", "render.mjs"],
        input=json.dumps(jobs).encode(),
        cwd=REFERENCE,
        capture_output=True,
        timeout=300,
        check=True,
    )
    return [
        None if isinstance(answer, dict) else Image.open(io.BytesIO(base64.b64decode(answer)))
        for answer in json.loads(done.stdout)
    ]


def _mono(image: Image.Image) -> Image.Image:
    return image.convert("L").point(lambda v: 0 if v < 128 else 255)


def _codes(image: Image.Image) -> list[str]:
    """The data of every symbol read (two symbols of the same data are two)."""
    return [r.text for r in zxingcpp.read_barcodes(image.convert("L")) if r.text]


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


def _clipped(picture: Image.Image, *, length_given: bool) -> bool:
    """Ink on the picture's outermost dots: something runs off the label. A ZPL label without
    ^LL is as long as its content, so its last row of ink is no sign of clipping."""
    box = Image.eval(picture.convert("L"), lambda v: 255 - v).getbbox()
    return box is not None and (
        box[0] == 0
        or box[1] == 0
        or box[2] == picture.width
        or (length_given and box[3] == picture.height)
    )


@dataclass
class Label:
    sample: Sample
    document: LabelDocument
    preview: Image.Image
    errors: int
    barcodes: int
    reference: Image.Image | None = None


def test_the_corpus_imports_like_its_reference_pictures() -> None:
    samples = _samples()
    refused: dict[str, str] = {}
    failed: list[str] = []  # what would be a 5xx
    slow: list[str] = []
    labels: list[Label] = []
    for sample in samples:
        started = time.monotonic()
        try:
            conversion = convert(sample.name, sample.data, dpi=203, max_expanded=8 << 20)
        except EtikettError as error:
            assert error.status < 500 and error.code.startswith("import."), (sample.name, error)
            refused[sample.name] = str(error.code)
            continue
        except Exception as error:  # a 5xx: counted, and asserted none below
            failed.append(f"{sample.name}: {error!r}")
            continue
        for index, label in enumerate(conversion.labels):
            document = LabelDocument.model_validate(label.document)
            values = resolve_variables(document, {}, use_samples=True)
            image, findings = render_checked(document, values, lenient=True)
            errors = sum(1 for f in findings if f.severity == "error")
            barcodes = sum(1 for o in document.objects if o.type == "barcode")
            if index == 0:  # the references picture a file's first label
                labels.append(Label(sample, document, image, errors, barcodes))
            else:
                labels.append(Label(Sample(sample.name, b""), document, image, errors, barcodes))
        if time.monotonic() - started > SECONDS_PER_FILE:
            slow.append(sample.name)
    by_zebrash = [label for label in labels if label.sample.zebrash]
    jobs = [
        {
            "zpl": label.sample.data.decode("latin-1"),
            "width_mm": label.document.size.width_mm,
            "height_mm": label.document.size.height_mm,
            "dpmm": 8,
        }
        for label in by_zebrash
    ]
    for label, picture in zip(by_zebrash, _zebrash(jobs), strict=True):
        if picture is not None and b"^POI" in label.sample.data.upper():
            picture = picture.rotate(
                180
            )  # zebrash ignores ^POI, which printers and Labelary honour
        label.reference = picture
    for label in labels:
        if label.sample.picture is not None:
            label.reference = Image.open(label.sample.picture)
    with_data = decoded = readable = same = with_errors = unclipped = 0
    overlaps: list[float] = []
    differing: list[str] = []
    for label in labels:
        read = _codes(label.preview)
        ours = set(read)
        with_data += label.barcodes
        decoded += min(label.barcodes, len(read))
        if label.reference is None:
            continue
        reference = _mono(label.reference)
        theirs = set(_codes(reference))
        readable += len(theirs)
        same += len(theirs & ours)
        differing += [f"{label.sample.name}: {code!r}" for code in sorted(theirs - ours)]
        overlaps.append(_overlap(label.preview, reference))
        data = label.sample.data.upper()
        length_given = b"^LL" in data or not data.lstrip().startswith((b"^", b"~"))
        if not _clipped(reference, length_given=length_given):
            unclipped += 1
            with_errors += label.errors > 0
    decode_rate = decoded / with_data if with_data else 1.0
    same_rate = same / readable if readable else 1.0
    error_rate = with_errors / unclipped if unclipped else 0.0
    overlap = sum(overlaps) / len(overlaps) if overlaps else 0.0
    public = sum(1 for s in samples if not s.name.startswith("ours/"))
    print(
        f"\nimport corpus: {len(samples)} files ({public} public), {len(labels)} labels, "
        f"{len(refused)} refused {sorted(set(refused.values()))}, {len(failed)} 5xx, "
        f"{len(slow)} hangs; barcodes decoded in our preview {decoded}/{with_data} "
        f"({decode_rate:.0%}); reference barcodes read the same {same}/{readable} "
        f"({same_rate:.0%}); labels with error findings {with_errors}/{unclipped} unclipped "
        f"({error_rate:.0%}); reference ink covered {overlap:.0%} over {len(overlaps)} pictures"
        + (f"; not read the same: {differing}" if differing else "")
    )
    assert failed == []
    assert slow == []
    assert decode_rate >= 0.97
    assert same_rate >= 0.95
    assert error_rate <= 0.10
    assert overlap >= 0.7  # faces differ from the printer's; regions, not glyphs, must meet
