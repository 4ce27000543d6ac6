"""Component names in the OpenAPI document stay as published when models move between packages:
the engine's models (moved from `etikett` to `etikett_engine`) keep the module-qualified names
pydantic gave them where two models share a name."""

from __future__ import annotations

from typing import Any

import pytest

from etikett.api import openapi


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(value) for value in node))
    return set()


def test_the_engine_s_models_keep_their_published_names_and_every_ref_resolves() -> None:
    document = openapi.build()
    schemas = document["components"]["schemas"]
    assert "etikett__flows__findings__Finding" in schemas  # flows' Finding, beside discovery's
    assert "etikett__domain__discovery__Finding" in schemas
    assert not [name for name in schemas if name.startswith("etikett_engine")]
    prefix = "#/components/schemas/"
    components = {ref for ref in _refs(document) if ref.startswith(prefix)}
    assert prefix + "etikett__flows__findings__Finding" in components
    dangling = {ref for ref in components if ref.removeprefix(prefix) not in schemas}
    assert dangling == set()


def test_renaming_keeps_the_order_and_the_refs() -> None:
    spec: dict[str, Any] = {
        "paths": {"/x": {"get": {"schema": {"$ref": "#/components/schemas/etikett_engine__a__B"}}}},
        "components": {
            "schemas": {
                "A": {"items": {"$ref": "#/components/schemas/etikett_engine__a__B"}},
                "etikett_engine__a__B": {"type": "object"},
                "C": {"$ref": "#/components/schemas/A"},
            }
        },
    }
    openapi._published_names(spec)
    assert list(spec["components"]["schemas"]) == ["A", "etikett__a__B", "C"]
    assert spec["components"]["schemas"]["A"]["items"]["$ref"].endswith("/etikett__a__B")
    assert spec["paths"]["/x"]["get"]["schema"]["$ref"].endswith("/etikett__a__B")
    assert spec["components"]["schemas"]["C"]["$ref"].endswith("/A")


def test_a_rename_onto_a_name_in_use_is_refused() -> None:
    schemas = {"etikett__a__B": {}, "etikett_engine__a__B": {}}
    with pytest.raises(ValueError, match="named twice"):
        openapi._published_names({"components": {"schemas": schemas}})
