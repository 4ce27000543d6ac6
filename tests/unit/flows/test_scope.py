"""What expressions can see at each node (record fields over every path, context, the Runner),
lint's `flow.cel_name_unknown` from it, and the editor's node positions (`ui`), which lint, the
engine and the published schema accept and runs ignore."""

from __future__ import annotations

from typing import Any

import pytest

from etikett_engine.cel import CelInvalid
from etikett_engine.cel.fields import field_reads
from etikett_engine.dsl.flow import FlowDocument, json_schema
from etikett_engine.flows.effects import DryRun
from etikett_engine.flows.engine import FlowProgram
from etikett_engine.flows.findings import Finding
from etikett_engine.flows.lint import lint
from etikett_engine.flows.scope import Scope, record_fields

INBOX = {"id": "in", "type": "trigger.folder", "path": "in", "wires": ["set"]}
SET = {"id": "set", "type": "logic.set", "values": {"n": "int(record.qty)"}, "wires": ["route"]}
ROUTE = {
    "id": "route",
    "type": "logic.switch",
    "cases": [{"when": "record.n > 0", "wires": ["ship"]}],
    "otherwise": ["note"],
}
SHIP = {
    "id": "ship",
    "type": "action.print",
    "label": "lbl_1",
    "printer": "main",
    "variables": {"name": "record.name"},
    "wires": ["note"],
}
NOTE = {"id": "note", "type": "action.log", "message": "record.name"}


def _document(*nodes: dict[str, Any]) -> FlowDocument:
    return FlowDocument.model_validate({"nodes": list(nodes)})


def _unknown(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.params["name"]) for f in findings if f.code == "flow.cel_name_unknown"]


def test_field_reads_name_each_field_with_its_position_and_guard() -> None:
    reads = field_reads(
        'has(record.a) && record.a > 0 && record["b c"] == context.hall && "d" in record '
        "&& record.d && [1].map(record, record.x) == [] && runner.name != ''",
        ["record", "context", "runner"],
    )
    assert [(r.root, r.field, r.guarded) for r in reads] == [
        ("record", "a", True),
        ("record", "a", True),
        ("record", "b c", False),
        ("context", "hall", False),
        ("record", "d", True),
        ("runner", "name", False),
    ]  # `record` bound by map() is the macro's own name, not the record
    assert (reads[0].line, reads[0].column) == (1, 12)
    with pytest.raises(CelInvalid):
        field_reads("record.", ["record"])


def test_record_fields_follow_every_path_and_what_nodes_add() -> None:
    document = _document(INBOX, SET, ROUTE, SHIP, NOTE)
    seen = record_fields(document, frozenset({"qty", "name"}))
    assert seen["in"] == seen["set"] == {"qty", "name"}
    assert seen["route"] == seen["ship"] == {"qty", "name", "n"}
    # note is reached from the switch (without `print`) and from ship (with it): either may come
    assert seen["note"] == {"qty", "name", "n", "print"}
    assert record_fields(document, None)["note"] is None  # unknown entering: unknown everywhere
    tick = {"id": "tick", "type": "trigger.schedule", "every_s": 5, "wires": ["set"]}
    assert record_fields(_document(tick, {**SET, "wires": []}), None)["set"] == frozenset()
    loop = _document({**INBOX, "wires": ["a"]}, {**SET, "id": "a", "wires": ["a"]})
    assert record_fields(loop, frozenset({"qty"}))["a"] == {"qty", "n"}  # a cycle ends too


def test_lint_names_fields_no_record_context_or_runner_has() -> None:
    document = _document(
        INBOX,
        {**SET, "values": {"n": "int(record.qtty)", "hall": "context.hal + runner.host"}},
        ROUTE,
        SHIP,
        {**NOTE, "message": 'record.print.label + (has(record.extra) ? record.extra : "")'},
    )
    scope = Scope(record=frozenset({"qty", "name"}), context=frozenset({"hall"}))
    findings = lint(document, scope=scope)
    assert _unknown(findings) == [
        ("/nodes/1/values/n", "record.qtty"),
        ("/nodes/1/values/hall", "context.hal"),
        ("/nodes/1/values/hall", "runner.host"),
    ]  # note reads record.print: a path through ship gives it; record.extra is guarded
    (first,) = [f for f in findings if f.params.get("name") == "record.qtty"]
    assert first.severity == "warning" and first.node_id == "set"
    assert first.params["known"] == ["name", "qty"] and first.params["column"] == 12
    # Without a scope only what is certain is checked: the Runner's fields.
    assert _unknown(lint(document)) == [("/nodes/1/values/hall", "runner.host")]


def test_after_a_schedule_the_record_holds_only_what_nodes_set() -> None:
    tick = {"id": "tick", "type": "trigger.schedule", "every_s": 60, "wires": ["say"]}
    say = {"id": "say", "type": "action.log", "message": "'tick ' + record.count"}
    assert _unknown(lint(_document(tick, say))) == [("/nodes/1/message", "record.count")]


def test_node_positions_are_accepted_everywhere_and_change_no_run() -> None:
    plain = [{**INBOX, "wires": ["note"]}, {**NOTE, "message": "'ok'"}]
    placed = [{**node, "ui": {"x": 40 * i, "y": 12.5}} for i, node in enumerate(plain)]
    document = _document(*placed)
    assert document.nodes[0].ui is not None and document.nodes[0].fields() == {"path": "in"}
    assert lint(document) == lint(_document(*plain)) == []
    runs = [
        FlowProgram.compile({"nodes": nodes}).run([{"a": 1}], "in", DryRun())
        for nodes in (plain, placed)
    ]
    assert runs[0] == runs[1] and runs[0].outcome == "succeeded"
    ui = json_schema()["$defs"]["FlowNode"]["properties"]["ui"]
    assert "NodeUi" in str(ui)
    for bad in ({"x": 1}, {"x": 1, "y": 2, "z": 3}, {"x": 1e9, "y": 0}):
        with pytest.raises(ValueError):
            _document({**INBOX, "ui": bad})
