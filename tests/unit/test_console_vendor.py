"""The console's vendored libraries are the pinned ones, each with its licence, and the page loads
them on first use (lib/vendor.js) rather than preloading them as modules."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_vendored_file_is_the_recorded_one_with_its_licence() -> None:
    vendor = _module(REPO / "console" / "vendor.py", "console_vendor")
    assert vendor.check(vendor.load()) == []


def test_the_loader_knows_each_library_by_its_file_and_global() -> None:
    manifest = json.loads((REPO / "console" / "vendor.json").read_text())["packages"]
    loader = (REPO / "console" / "static" / "lib" / "vendor.js").read_text()
    known = dict(
        (name, (file, glob))
        for name, file, glob in re.findall(r'"?([\w-]+)"?: \["([^"]+)", "(\w+)"\]', loader)
    )
    assert known == {
        name: (next(f for f in entry["files"].values() if f.endswith(".js")), entry["global"])
        for name, entry in manifest.items()
    }


def test_the_page_does_not_preload_vendored_scripts() -> None:
    console = _module(REPO / "console" / "app.py", "console_app_vendor")
    page = console.CONSOLE.page.decode()
    assert "modulepreload" in page
    assert "/vendor/" not in page
    assert any(name.startswith("vendor/") for name in console.CONSOLE.files)
