"""The shared layer as `sam build` makes it (`shared/Makefile`): the OpenAPI document is built
there, once, and the MCP function's cold start reads it instead of loading every group's routes;
a function's cold start loads no other aggregate's request and answer models, and no renderer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from etikett.api import openapi

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def layer(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    artifacts = tmp_path_factory.mktemp("shared-layer")
    env = {**os.environ, "ARTIFACTS_DIR": str(artifacts), "PATH": f"{BIN}:{os.environ['PATH']}"}
    subprocess.run(
        ["make", "-s", "-C", str(repo / "shared"), "build-SharedLayer"],
        check=True,
        capture_output=True,
        env=env,
        timeout=300,
    )
    return artifacts / "python"


def import_entry(repo: Path, layer: Path, group: str, before: str = "", after: str = "") -> Any:
    """Imports `functions/<group>/app.py` in a fresh interpreter laid out as on Lambda (the
    function's folder and the layer, then the dependencies; not the source), running `before`
    and `after` around it; answers what `after` printed last, as JSON."""
    folder = repo / "functions" / group
    child = f"""
import importlib.util, json, sys
sys.path[:0] = [{str(folder)!r}, {str(layer)!r}]
sys.path.append({sysconfig.get_paths()["purelib"]!r})
{before}
spec = importlib.util.spec_from_file_location("app", {str(folder / "app.py")!r})
app = importlib.util.module_from_spec(spec)
spec.loader.exec_module(app)
{after}
"""
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_REGION": "eu-central-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    result = subprocess.run(
        [sys.executable, "-S", "-B", "-c", child],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_layer_carries_the_document_the_routers_describe(layer: Path) -> None:
    built = json.loads((layer / "etikett" / "api" / openapi.BUILT.name).read_text())
    assert built == openapi.describe()
    assert not (layer / "etikett" / "local").exists()


def test_the_mcp_cold_start_reads_the_built_document_and_loads_no_group(
    repo: Path, layer: Path
) -> None:
    after = """
from etikett.mcp import catalog
import etikett
print(json.dumps({
    "package": etikett.__file__,
    "tools": sorted(catalog.catalog().tools),
    "groups": sorted(
        m for m in sys.modules
        if m.startswith(("etikett.api.", "etikett.mcp.")) and m.count(".") == 2
    ),
}))
"""
    loaded = import_entry(repo, layer, "mcp", after=after)
    assert loaded["package"].startswith(str(layer))
    live = {
        operation["operationId"]
        for item in openapi.document()["paths"].values()
        for operation in item.values()
        if operation.get("x-etikett-mcp")
    }
    assert set(loaded["tools"]) == live
    # Only the mcp group's own router and the modules every function shares.
    assert "etikett.api.labels" not in loaded["groups"]
    assert "etikett.api.printing" not in loaded["groups"]
    assert "etikett.mcp.routes" in loaded["groups"]


# Modules of request and answer models a function's routes never use; the function needs only
# lookups of those aggregates (`*_records`, `runner_context`, `counter_values`). The Runner
# agent's claims and reports need no label model either (its flows' counters load it when asked).
NOT_LOADED = {
    "printing": {
        "etikett.domain.labels.labels",
        "etikett.domain.labels.label_versions",
        "etikett.domain.printers.printers",
        "etikett.domain.runners.runners",
        "etikett.domain.counters.counters",
        "etikett.domain.audit.audit_entries",
    },
    "runner_agent": {
        "etikett.domain.printers.printers",
        "etikett.domain.runners.runners",
        "etikett.domain.deployments.models",
        "etikett.domain.audit.audit_entries",
        "etikett_engine.dsl.label",
    },
    "printers": {"etikett.domain.runners.runners", "etikett.domain.audit.audit_entries"},
    "runners": {"etikett.domain.printers.printers", "etikett.domain.audit.audit_entries"},
}


@pytest.mark.parametrize("group", sorted(NOT_LOADED))
def test_a_function_s_cold_start_loads_no_other_aggregate_s_api_models(
    repo: Path, layer: Path, group: str
) -> None:
    after = (
        "print(json.dumps(sorted(m for m in sys.modules"
        ' if m.startswith(("etikett.", "etikett_engine.")))))'
    )
    loaded = set(import_entry(repo, layer, group, after=after))
    assert f"etikett.api.{group}" in loaded
    assert not loaded & NOT_LOADED[group], sorted(loaded & NOT_LOADED[group])


ENTRIES = sorted(
    path.parent.name for path in (Path(__file__).parents[3] / "functions").glob("*/app.py")
)


@pytest.mark.parametrize("group", ENTRIES)
def test_an_entry_loads_first_only_libraries_it_would_load_anyway(
    repo: Path, layer: Path, group: str
) -> None:
    # `coldstart.libraries` changes when the entry's libraries load, never which: with it doing
    # nothing, the entry's import still loads every package it names.
    before = """
from etikett import coldstart
named = []
coldstart.libraries = lambda *packages: named.extend(packages)
"""
    # The renderer lives in the engine (`etikett_engine.render`), which the shared layer carries to
    # every function, Pillow only in the render layer: no entry loads either at cold start (the
    # functions that render import it inside the operations that render).
    after = """
print(json.dumps({
    "named": named,
    "unused": [p for p in named if p not in sys.modules],
    "renderer": sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("PIL", "zint", "fontpkg", "isal", "numpy")
        or m.startswith("etikett_engine.render")
    ),
}))
"""
    loaded = import_entry(repo, layer, group, before=before, after=after)
    assert loaded["named"], "the entry names the libraries it loads first"
    assert loaded["unused"] == []
    assert loaded["renderer"] == []
