"""The MCP resources come from the code that defines them; the minimal flow document keeps its
node ids and wires."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from etikett.mcp import resources
from etikett_engine.dsl import flow, flow_registry, label


def test_every_resource_is_json_read_once() -> None:
    assert [spec.uri for spec in resources.RESOURCES] == [
        "svc://registry/labels",
        "svc://registry/flows",
        "svc://schema/label",
        "svc://schema/flow",
        "svc://schema/form",
        "svc://openapi",
    ]
    for spec in resources.RESOURCES:
        assert json.loads(resources.text(spec.uri))
        assert resources.text(spec.uri) is resources.text(spec.uri)
    with pytest.raises(KeyError):
        resources.text("svc://nothing")


def test_label_registry_is_derived_from_the_label_models() -> None:
    registry = json.loads(resources.text("svc://registry/labels"))
    types = [entry["type"] for entry in registry["object_types"]]
    assert types == [
        model.model_fields["type"].annotation.__args__[0] for model in label.OBJECT_TYPES
    ]
    text = next(e["fields"] for e in registry["object_types"] if e["type"] == "text")
    assert set(text) == set(label.TextObject.model_fields)
    assert text["content"]["required"] is False and text["x_mm"]["required"] is True
    assert registry["variable_types"] == ["string", "integer", "number", "date", "boolean"]


def test_flow_schema_is_2020_12_with_open_node_fields() -> None:
    schema = flow.json_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "svc://schema/flow"
    node = schema["$defs"]["FlowNode"]
    assert node["additionalProperties"] is True and set(node["required"]) == {"id", "type"}
    assert schema["additionalProperties"] is False
    assert {item["type"] for item in flow_registry.registry()["items"]} >= {
        "trigger.folder",
        "action.print",
    }


def test_flow_documents_keep_node_ids_and_wires() -> None:
    document = flow.FlowDocument.model_validate(
        {
            "nodes": [
                {"id": "in", "type": "inject", "wires": ["print"], "payload": {"a": 1}},
                {"id": "print", "type": "print.label"},
            ],
            "samples": [{"a": 1}],
        }
    )
    dumped = document.model_dump(exclude_none=True)
    assert dumped["nodes"][0] == {
        "id": "in",
        "type": "inject",
        "wires": ["print"],
        "payload": {"a": 1},
    }
    for malformed, path in (
        ({"nodes": [{"id": "a", "type": "x", "wires": ["b"]}]}, "/nodes/0/wires/0"),
        ({"nodes": [{"id": "a", "type": "x"}, {"id": "a", "type": "y"}]}, "/nodes/1/id"),
    ):
        assert [p for p, _ in flow.malformations(flow.FlowDocument.model_validate(malformed))] == [
            path
        ]
    for broken in (
        {"nodes": [{"id": "a", "type": "Not A Type"}]},
        {"nodes": [], "extra": 1},
    ):
        with pytest.raises(ValueError):
            flow.FlowDocument.model_validate(broken)
