"""Every lint code, with its JSON Pointer, node id and params."""

from __future__ import annotations

import re
from typing import Any

from etikett_engine.dsl import flow_registry
from etikett_engine.dsl.flow import MAX_FAN_OUT, MAX_NODE_EXECUTIONS, FlowDocument
from etikett_engine.flows.findings import FLOW_FINDING_CODES, Finding
from etikett_engine.flows.lint import LabelFacts, lint

TRIGGER = {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["log"]}
LOG = {"id": "log", "type": "action.log", "message": "'ok'"}


class Labels:
    def __init__(self, facts: dict[tuple[str, int | None], LabelFacts]) -> None:
        self.known = facts
        self.asked: list[tuple[str, int | None]] = []

    def facts(self, label_id: str, version: int | None) -> LabelFacts | None:
        self.asked.append((label_id, version))
        return self.known.get((label_id, version))


def _lint(*nodes: dict[str, Any], labels: Labels | None = None) -> list[Finding]:
    return lint(FlowDocument.model_validate({"nodes": list(nodes)}), labels)


def _only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def test_a_sound_flow_has_no_findings() -> None:
    assert _lint(TRIGGER, LOG) == []


def test_no_trigger() -> None:
    (finding,) = _lint(LOG)
    assert (finding.code, finding.severity, finding.path) == ("flow.no_trigger", "error", "/nodes")


def test_unknown_node_type() -> None:
    (finding,) = _only(
        _lint(TRIGGER, LOG, {"id": "x", "type": "logic.magic"}), "flow.unknown_node_type"
    )
    assert (finding.path, finding.node_id) == ("/nodes/2/type", "x")
    assert "logic.set" in finding.params["known"]


def test_field_invalid_points_at_the_field() -> None:
    findings = _lint(
        {**TRIGGER, "path": "Not A Path"},
        {**LOG, "level": "loud", "colour": "red"},
    )
    paths = {f.path for f in _only(findings, "flow.field_invalid")}
    assert paths == {"/nodes/0/path", "/nodes/1/level", "/nodes/1/colour"}


def test_wires_into_a_trigger_and_switch_wires_are_invalid() -> None:
    findings = _lint(
        {**TRIGGER, "wires": ["sw"]},
        {
            "id": "sw",
            "type": "logic.switch",
            "cases": [{"when": "true", "wires": ["in"]}],
            "wires": ["log"],
        },
        LOG,
    )
    messages = [f.message for f in _only(findings, "flow.field_invalid")]
    assert any("trigger" in m for m in messages) and any("switch" in m for m in messages)


def test_duplicate_http_paths() -> None:
    findings = _lint(TRIGGER, {**TRIGGER, "id": "in2"}, LOG)
    (finding,) = _only(findings, "flow.field_invalid")
    assert finding.node_id == "in2" and finding.params["node"] == "in"


def test_http_action_url_must_be_https_or_loopback() -> None:
    node = {"id": "h", "type": "action.http", "url": "http://10.0.0.5/x"}
    (finding,) = _lint({**TRIGGER, "wires": ["h"]}, node)
    assert (finding.code, finding.path) == ("flow.field_invalid", "/nodes/1/url")
    assert _lint({**TRIGGER, "wires": ["h"]}, {**node, "url": "http://127.0.0.1:9000/x"}) == []


def test_cel_invalid_names_the_expression_path() -> None:
    findings = _lint(
        {**TRIGGER, "wires": ["set"]},
        {"id": "set", "type": "logic.set", "values": {"a": "record.x +", "b": "nope(1)"}},
    )
    cel = _only(findings, "flow.cel_invalid")
    assert [f.path for f in cel] == ["/nodes/1/values/a", "/nodes/1/values/b"]
    assert "unknown function" in cel[1].message
    undeclared = _lint(
        {**TRIGGER, "wires": ["f"]}, {"id": "f", "type": "logic.filter", "condition": "qty > 1"}
    )
    assert "undeclared name 'qty'" in undeclared[0].message


def test_nested_comprehensions_are_refused_before_they_run() -> None:
    condition = "record.a.all(x, record.b.exists(y, x == y))"
    (finding,) = _lint(
        {**TRIGGER, "wires": ["f"]}, {"id": "f", "type": "logic.filter", "condition": condition}
    )
    assert finding.code == "flow.cel_invalid" and "nest" in finding.message
    single = "record.a.exists(x, x == 1)"
    assert (
        _lint({**TRIGGER, "wires": ["f"]}, {"id": "f", "type": "logic.filter", "condition": single})
        == []
    )


def test_cycles_are_reported_with_their_nodes() -> None:
    findings = _lint(
        {**TRIGGER, "wires": ["a"]},
        {"id": "a", "type": "action.log", "message": "'a'", "wires": ["b"]},
        {"id": "b", "type": "action.log", "message": "'b'", "wires": ["a"]},
    )
    (cycle,) = _only(findings, "flow.cycle")
    assert cycle.params["cycle"] == ["a", "b", "a"] and cycle.path == "/nodes/2/wires"


def _levels(count: int, width: int = 2) -> list[dict[str, Any]]:
    """`count` levels of `width` log nodes, each wired to every node of the next level."""
    nodes: list[dict[str, Any]] = [{**TRIGGER, "wires": [f"l0n{i}" for i in range(width)]}]
    for level in range(count):
        following = [f"l{level + 1}n{i}" for i in range(width)] if level + 1 < count else []
        nodes += [
            {"id": f"l{level}n{i}", "type": "action.log", "message": "'x'", "wires": following}
            for i in range(width)
        ]
    return nodes


def test_fan_out_beyond_the_budget_of_a_record_is_a_warning() -> None:
    (finding,) = _lint(*_levels(30))
    assert (finding.code, finding.severity, finding.node_id) == ("flow.fan_out", "warning", "in")
    assert finding.path == "/nodes/0/wires"
    assert finding.params["copies"] == 2**30 and finding.params["limit"] == MAX_FAN_OUT
    assert str(MAX_NODE_EXECUTIONS) in finding.message or str(MAX_FAN_OUT) in finding.message
    # Six levels of two: 64 copies of a record, within the budget.
    assert _lint(*_levels(6)) == []


def test_a_switch_counts_only_its_widest_case() -> None:
    """A switch sends a record along one case, so its cases do not add up."""
    many = [f"t{i}" for i in range(60)]
    nodes = [
        {**TRIGGER, "wires": ["sw"]},
        {
            "id": "sw",
            "type": "logic.switch",
            "cases": [{"when": "record.a", "wires": many}, {"when": "record.b", "wires": many}],
            "otherwise": many,
        },
        *({"id": t, "type": "action.log", "message": "'x'"} for t in many),
    ]
    assert _lint(*nodes) == []
    # Two set nodes wired to the same 60 nodes: every record goes both ways, 120 copies.
    both = [
        {**TRIGGER, "wires": ["s1", "s2"]},
        {"id": "s1", "type": "logic.set", "values": {"a": "1"}, "wires": many},
        {"id": "s2", "type": "logic.set", "values": {"a": "2"}, "wires": many},
        *nodes[2:],
    ]
    (finding,) = _lint(*both)
    assert finding.code == "flow.fan_out" and finding.params["copies"] == 120


def test_a_cycle_is_no_fan_out_finding_too() -> None:
    findings = _lint(
        {**TRIGGER, "wires": ["a"]},
        {"id": "a", "type": "action.log", "message": "'a'", "wires": ["b"]},
        {"id": "b", "type": "action.log", "message": "'b'", "wires": ["a"]},
    )
    assert [f.code for f in findings] == ["flow.cycle"]


def test_unreachable_nodes_are_a_warning() -> None:
    (finding,) = _lint(TRIGGER, LOG, {"id": "lost", "type": "action.log", "message": "'x'"})
    assert (finding.code, finding.severity, finding.node_id) == (
        "flow.unreachable_node",
        "warning",
        "lost",
    )


def _print(label: str, variables: dict[str, str]) -> dict[str, Any]:
    return {
        "id": "p",
        "type": "action.print",
        "label": label,
        "printer": "dock",
        "variables": variables,
    }


RELEASED = LabelFacts(
    label_id="lbl_1",
    version=4,
    approved=True,
    entered=frozenset({"name", "note"}),
    required=frozenset({"name"}),
    computed=frozenset({"sscc"}),
)


def test_label_references() -> None:
    labels = Labels(
        {
            ("lbl_1", None): RELEASED,
            ("lbl_2", None): LabelFacts(label_id="lbl_2", version=None, approved=False),
            ("lbl_1", 2): LabelFacts(label_id="lbl_1", version=2, approved=False),
        }
    )
    trigger = {**TRIGGER, "wires": ["p"]}
    assert _lint(trigger, _print("lbl_1", {"name": "record.n"}), labels=labels) == []
    (missing,) = _lint(trigger, _print("lbl_9", {}), labels=labels)
    assert (missing.code, missing.path) == ("flow.label_not_found", "/nodes/1/label")
    (unreleased,) = _lint(trigger, _print("lbl_2", {}), labels=labels)
    assert unreleased.code == "flow.label_not_released"
    draft = _lint(trigger, _print("lbl_1@2", {}), labels=labels)
    assert "flow.label_not_released" in {f.code for f in draft}
    variables = _lint(trigger, _print("lbl_1", {"colour": "'red'", "sscc": "'1'"}), labels=labels)
    unknown = _only(variables, "flow.label_variable_unknown")
    assert {f.path for f in unknown} == {
        "/nodes/1/variables/colour",
        "/nodes/1/variables/sscc",
        "/nodes/1/variables",
    }
    assert [f.params["variable"] for f in unknown if f.params.get("missing")] == ["name"]


def test_every_code_lint_reports_is_catalogued() -> None:
    reported: set[str] = set()
    labels = Labels({("lbl_2", None): LabelFacts(label_id="lbl_2", version=None, approved=False)})
    for nodes in (
        [LOG],
        [TRIGGER, LOG, {"id": "x", "type": "logic.magic"}, {"id": "y", "type": "action.log"}],
        [
            {**TRIGGER, "wires": ["a"]},
            {"id": "a", "type": "action.log", "message": "1 +", "wires": ["a"]},
        ],
        [
            {**TRIGGER, "wires": ["p", "q"]},
            _print("lbl_9", {}),
            {**_print("lbl_2", {"z": "1"}), "id": "q"},
        ],
        _levels(8),
        [{**TRIGGER, "wires": ["r"]}, {"id": "r", "type": "action.log", "message": "runner.host"}],
        [{"id": "f", "type": "trigger.folder", "path": "..", "wires": ["log"]}, LOG],
    ):
        reported |= {f.code for f in _lint(*nodes, labels=labels)}
    # The secrets' codes need a SecretCatalog: tests/unit/flows/test_secret_origins.py.
    secrets = {"flow.credential_origin_refused", "flow.credential_unbound"}
    assert reported == set(FLOW_FINDING_CODES) - {"flow.label_variable_unknown"} - secrets
    assert secrets <= set(FLOW_FINDING_CODES)
    assert "flow.label_variable_unknown" in {
        f.code
        for f in _lint(
            {**TRIGGER, "wires": ["p"]},
            _print("lbl_1", {}),
            labels=Labels({("lbl_1", None): RELEASED}),
        )
    }


def test_the_registry_examples_make_sound_nodes() -> None:
    """A node built from the first example of each of its type's fields lints clean: the
    examples an agent authors from are themselves valid (CEL included)."""
    from etikett_engine.dsl.flow import targets
    from etikett_engine.dsl.flow_registry import NODE_SPECS

    for spec in NODE_SPECS.values():
        schema = spec.entry().fields
        fields = {name: field["examples"][0] for name, field in schema["properties"].items()}
        node: dict[str, Any] = {"id": "n", "type": spec.type, **fields}
        if spec.type == "trigger.http":
            node["path"] = "examples"
        parsed = FlowDocument.model_validate({"nodes": [node]}).nodes[0]
        ends = [{"id": t, "type": "action.log", "message": "'end'"} for t in targets(parsed)]
        nodes = [node, *ends]
        if spec.category != "trigger":
            nodes.insert(0, {**TRIGGER, "wires": ["n"]})
        found = [f for f in _lint(*nodes) if f.node_id == "n"]
        assert found == [], (spec.type, found)


def test_the_registry_says_which_strings_are_cel_references_or_wires() -> None:
    """Each field lint and the engine treat as CEL is `format: cel` in the published schema,
    and references an editor picks (labels, printer aliases, credentials, wire targets) say so:
    an editor builds its controls from the schema alone."""
    import json

    from etikett_engine.dsl.flow_registry import CEL_FIELDS, registry

    formats: dict[str, list[str]] = {}
    for entry in registry()["items"]:
        text = json.dumps(entry["fields"])
        formats[entry["type"]] = [f for f in re.findall(r'"format": "([a-z-]+)"', text)]
    for node_type, patterns in CEL_FIELDS.items():
        assert formats[node_type].count("cel") == len(patterns), (node_type, formats[node_type])
    assert formats["action.print"].count("label-reference") == 1
    assert formats["action.print"].count("printer-alias") == 1
    assert formats["action.http"].count("credential-ref") == 1
    assert formats["trigger.http"] == ["credential-ref"]  # its `secret`
    assert formats["logic.switch"].count("node-id") == 2  # a case's wires and `otherwise`
    assert not any(formats[t] for t in ("trigger.folder", "trigger.schedule"))


def test_each_caller_gets_its_own_copy_of_the_registry() -> None:
    first = flow_registry.registry()
    first["items"][0]["fields"]["properties"].clear()  # a caller changing its answer
    second = flow_registry.registry()
    assert second["items"][0]["fields"]["properties"]
    assert second == flow_registry.registry() and second is not flow_registry.registry()
