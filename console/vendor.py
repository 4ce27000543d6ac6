"""The console's vendored browser libraries: fetch them at their pinned versions, or check them.

`console/vendor.json` names each package, its exact version, the npm registry's integrity of its
tarball, and which of its files the console serves (each library's browser bundle and licence).
The files are committed under `console/static/vendor/<name>/`, so neither `make dev`, `make test`
nor a deployed console ever fetches anything; this script is how they got there.

    python console/vendor.py            # fetch every package with `npm pack`, verify, copy, record
    python console/vendor.py --check    # offline: the files on disk are the recorded ones

Adding a library: an entry in vendor.json (package, version, integrity from `npm view
<package>@<version> dist.integrity`, licence, global, what it is for, files), then run this.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "vendor.json"
VENDOR = HERE / "static" / "vendor"


def load() -> dict[str, Any]:
    return dict(json.loads(MANIFEST.read_text(encoding="utf-8")))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(name: str, entry: dict[str, Any], workdir: Path) -> dict[str, str]:
    """Pack the pinned tarball, check npm's integrity, copy the listed files; their sha256s."""
    spec = f"{entry['package']}@{entry['version']}"
    out = subprocess.run(
        ["npm", "pack", spec, "--silent", "--pack-destination", str(workdir)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tarball = workdir / out.splitlines()[-1]
    algorithm, _, expected = str(entry["integrity"]).partition("-")
    digest = base64.b64encode(hashlib.new(algorithm, tarball.read_bytes()).digest()).decode()
    if digest != expected:
        raise SystemExit(f"{spec}: the tarball's {algorithm} is not the pinned integrity")
    target = VENDOR / name
    target.mkdir(parents=True, exist_ok=True)
    recorded: dict[str, str] = {}
    with tarfile.open(tarball) as archive:
        for source, destination in entry["files"].items():
            member = archive.extractfile(f"package/{source}")
            if member is None:
                raise SystemExit(f"{spec}: no file {source}")
            data = member.read()
            (target / destination).write_bytes(data)
            recorded[destination] = sha256(data)
    return recorded


def check(manifest: dict[str, Any]) -> list[str]:
    """What differs between the manifest and the files on disk (nothing: an empty list)."""
    problems: list[str] = []
    for name, entry in manifest["packages"].items():
        if not any(Path(f).name.upper().startswith("LICENSE") for f in entry["files"].values()):
            problems.append(f"{name}: no licence file is vendored")
        recorded = entry.get("sha256") or {}
        for destination in entry["files"].values():
            path = VENDOR / name / destination
            if not path.is_file():
                problems.append(f"{name}: {destination} is missing")
            elif recorded.get(destination) != sha256(path.read_bytes()):
                problems.append(f"{name}: {destination} is not the recorded file")
    known = set(manifest["packages"])
    if VENDOR.is_dir():
        problems += [
            f"{path.name}: vendored but not in vendor.json"
            for path in VENDOR.iterdir()
            if path.is_dir() and path.name not in known
        ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check the files offline")
    args = parser.parse_args(argv)
    manifest = load()
    if not args.check:
        with tempfile.TemporaryDirectory() as workdir:
            for name, entry in manifest["packages"].items():
                entry["sha256"] = fetch(name, entry, Path(workdir))
                print(f"{name}: {entry['package']}@{entry['version']}")
        MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    problems = check(manifest)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
