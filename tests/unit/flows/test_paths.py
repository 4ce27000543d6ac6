"""Paths a flow names on a Runner (issue 23, item 2): what escapes on any machine is refused
with a lint finding `flow.path_refused`; an absolute path is left to the Runner, which alone
knows the roots its site allowed."""

from __future__ import annotations

from typing import Any

import pytest

from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.flows import paths
from etikett_engine.flows.lint import lint

REFUSED = {
    "..": "`..`",
    "../": "`..`",
    "in/../../state": "`..`",
    "in\\..\\key.pem": "`..`",
    "/srv/labels/../../home": "`..`",
    "in/.../x": "`..`",  # Windows: `...` and `.. ` are `..`
    "in/.. /x": "`..`",
    "C:\\labels": "drive",
    "c:labels": "drive",
    "in/orders.csv:secret": "`:`",
    "\\\\server\\share\\in": "network",
    "//server/share": "network",
    "\\\\?\\C:\\x": "network",
    "in\0/x": "NUL",
    "in\n": "control",
    "~/labels": "home",
    "~root/x": "home",
    "out/NUL": "device",
    "out/com1.txt": "device",
    "CON": "device",
    "   ": "blanks",
}
ALLOWED = [
    "/srv/labels/in",  # absolute: the Runner decides
    "in",
    "./in",
    "in/done",
    "in/.hidden-ok",
    "printed/2026-11-27.txt",
    "a..b/c",  # not a segment of its own
    "console/x",
    "nulls/x",
]


@pytest.mark.parametrize(("path", "why"), REFUSED.items())
def test_escaping_paths_are_refused_with_the_reason(path: str, why: str) -> None:
    reason = paths.refusal(path)
    assert reason is not None and why in reason, (path, reason)


@pytest.mark.parametrize("path", ALLOWED)
def test_other_paths_pass(path: str) -> None:
    assert paths.refusal(path) is None


def _document(*nodes: dict[str, Any]) -> FlowDocument:
    return FlowDocument.model_validate({"nodes": list(nodes)})


def _folder(path: str) -> dict[str, Any]:
    return {"id": "in", "type": "trigger.folder", "path": path, "wires": ["out"]}


def _file(path: str) -> dict[str, Any]:
    return {"id": "out", "type": "action.file", "path": path, "content": "record"}


def test_lint_reports_a_folder_trigger_path_as_an_error_at_its_pointer() -> None:
    (finding,) = [f for f in lint(_document(_folder(".."), _file('"x.txt"'))) if f.code]
    assert (finding.code, finding.severity, finding.path, finding.node_id) == (
        "flow.path_refused",
        "error",
        "/nodes/0/path",
        "in",
    )
    assert finding.params == {"value": "..", "reason": paths.refusal("..")}
    assert "inside the folders its site allowed" in finding.message


@pytest.mark.parametrize(
    "source",
    [
        '"../key.pem"',
        '"../" + "key.pem"',
        "'C:/x'",
        "'..' + '/' + 'state/key.pem'",
        '"/etc/cron.d/x"',  # written inside the data folder only: never absolute
    ],
)
def test_a_constant_file_path_is_checked_by_its_value(source: str) -> None:
    found = paths.findings(_document(_folder("in"), _file(source)))
    assert [(f.code, f.path) for f in found] == [("flow.path_refused", "/nodes/1/path")]


@pytest.mark.parametrize(
    "source", ['"printed/" + record.order_id + ".txt"', "context.folder", '"out/ok.txt"']
)
def test_a_path_that_depends_on_the_record_is_left_to_the_runner(source: str) -> None:
    # (an absolute folder trigger path too: only the Runner knows its roots)
    assert paths.findings(_document(_folder("/srv/in"), _file(source))) == []
