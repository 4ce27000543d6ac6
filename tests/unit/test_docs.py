"""The documentation (README.md and the MkDocs site under docs/): the site builds strictly, no
internal link is broken, and every JSON example validates against the schema it names — the
published label, flow and form schemas (a flow's nodes also against their type's fields in the
node registry), or an operation's request body or answer in the OpenAPI document.

A JSON example names its schema in an HTML comment on the line before its fence (not shown on
the page): `<!-- schema: label -->`, `<!-- schema: node -->` (one node of a flow),
`<!-- schema: postPrint -->` (an operationId: its request body), `<!-- schema: postImport:201 -->`
(that operation's answer with this status), or `<!-- schema: none (why) -->`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# The generated reference pages exist only in a build.
GENERATED = {"reference/api.md", "reference/flow-nodes.md", "reference/problem-codes.md"}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
MARKER = re.compile(r"<!-- schema: (\S+)(?: [^>]*)? -->\s*$")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def _slug(heading: str) -> str:
    """The anchor MkDocs' toc gives a heading (and GitHub's, for these headings)."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(page: Path) -> list[str]:
    """Relative links of `page` whose file (or heading anchor) does not exist."""
    text = FENCE.sub("", page.read_text())  # code is not prose: `[...](...)` there is code
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("//"):
            continue  # another site: not ours to check offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        relative = resolved.relative_to(DOCS).as_posix() if resolved.is_relative_to(DOCS) else ""
        if relative in GENERATED:
            continue
        if not resolved.exists():
            broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    return broken


def json_examples(page: Path) -> list[tuple[int, str | None, str]]:
    """(line, schema named before it or None, text) of every ```json block of `page`."""
    text = page.read_text()
    examples = []
    for match in FENCE.finditer(text):
        if match.group(1) != "json":
            continue
        line = text[: match.start()].count("\n") + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        examples.append((line, marker.group(1) if marker else None, match.group(2)))
    return examples


@cache
def _openapi() -> dict[str, Any]:
    from etikett.api.openapi import build

    return build()


def schema_for(name: str) -> dict[str, Any]:
    if name in ("label", "flow", "form"):
        module = __import__(f"etikett_engine.dsl.{name}", fromlist=["json_schema"])
        schema: dict[str, Any] = module.json_schema()
        return schema
    operation_id, _, status = name.partition(":")
    document = _openapi()
    for item in document["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                part = operation["responses"][status] if status else operation["requestBody"]
                body = part["content"]["application/json"]["schema"]
                # The body's $refs point into the document's components.
                return {**body, "components": document["components"]}
    raise AssertionError(f"no schema or operation named {name!r}")


@cache
def _node_fields() -> dict[str, dict[str, Any]]:
    from etikett_engine.dsl.flow_registry import registry

    return {entry["type"]: entry["fields"] for entry in registry()["items"]}


def node_errors(node: Any) -> list[str]:
    """Why `node` is no valid node of a flow document: the document's own node schema, then its
    type's fields as the node registry publishes them (beside `id`, `type`, `name`, `wires`)."""
    flow = schema_for("flow")
    errors = [e.message for e in Draft202012Validator(flow).iter_errors({"nodes": [node]})]
    if errors or not isinstance(node, dict):
        return errors
    fields = _node_fields().get(node["type"])
    if fields is None:
        return [f"{node['type']!r} is no node type of the registry"]
    own = {k: v for k, v in node.items() if k not in ("id", "type", "name", "wires")}
    return [e.message for e in Draft202012Validator(fields).iter_errors(own)]


def example_errors(name: str, value: Any) -> list[str]:
    if name == "node":
        return node_errors(value)
    errors = [e.message for e in Draft202012Validator(schema_for(name)).iter_errors(value)]
    if name == "flow" and not errors:
        errors = [error for node in value.get("nodes", []) for error in node_errors(node)]
    return sorted(errors)


def test_no_internal_link_is_broken() -> None:
    broken = [problem for page in pages() for problem in broken_links(page)]
    assert broken == []


def test_the_link_check_finds_a_broken_link(tmp_path: Path) -> None:
    page = DOCS / "concepts" / "labels.md"
    copy = page.parent / ".link-check-probe.md"
    copy.write_text("[gone](no-such-page.md) [anchor](labels.md#no-such-heading) [ok](labels.md)")
    try:
        assert broken_links(copy) == [
            "docs/concepts/.link-check-probe.md: no-such-page.md (no such file)",
            "docs/concepts/.link-check-probe.md: labels.md#no-such-heading (no such heading)",
        ]
    finally:
        copy.unlink()


@pytest.mark.parametrize(
    "page", [p for p in pages() if json_examples(p)], ids=lambda p: str(p.relative_to(REPO))
)
def test_json_examples_validate_against_the_published_schemas(page: Path) -> None:
    for line, name, text in json_examples(page):
        where = f"{page.relative_to(REPO)}:{line}"
        assert name is not None, f"{where}: a JSON example names no schema (<!-- schema: … -->)"
        value = json.loads(text)  # every example is JSON, marked or not
        if name == "none":
            continue
        errors = example_errors(name, value)
        assert not errors, f"{where}: not a valid {name}: {errors[:5]}"


def test_a_json_example_that_does_not_fit_its_schema_is_caught() -> None:
    assert example_errors("postPrint", {"label_id": "lbl_x", "printer": 3})
    assert not example_errors("postPrint", {"label_id": "lbl_x", "printer": "p"})
    answer = {"source": {"name": "a.zpl", "format": "zpl"}, "report": []}
    made = {"label_id": "lbl_x", "version": 1, "name": "a", "fidelity": "exact", "warnings": 0}
    assert not example_errors("postImport:201", {**answer, "documents": [made]})
    assert example_errors("postImport:201", {**answer, "documents": [{**made, "fidelity": "ok"}]})


def test_a_node_is_checked_against_its_type_in_the_registry() -> None:
    trigger = {"id": "web", "type": "trigger.http", "path": "orders", "wires": ["print"]}
    assert not example_errors("node", {**trigger, "secret": "erp-in"})
    assert example_errors("node", {**trigger, "secret": "no spaces allowed"})
    assert example_errors("node", {**trigger, "sercet": "erp-in"})  # no such field
    assert example_errors("node", {**trigger, "type": "trigger.mqtt"})
    # Inside a flow too: the flow's own schema leaves a node's fields to the registry.
    assert example_errors("flow", {"nodes": [{**trigger, "path": "/Orders"}]})


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`make docs`: a page missing from the nav, a link MkDocs cannot resolve, or a reference
    page that cannot be generated fails the build."""
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    api = (tmp_path / "reference" / "api" / "index.html").read_text()
    # Generated from the OpenAPI document, not hand-copied: every operation is there.
    for operation_id in ("postPrint", "createLabelFromVorlage", "listFlowRuns"):
        assert operation_id in api
    nodes = (tmp_path / "reference" / "flow-nodes" / "index.html").read_text()
    assert "trigger.folder" in nodes and "action.print" in nodes
