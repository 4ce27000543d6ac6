"""getSchema: the label, flow and form document schemas, one source for REST, the MCP resources
and the OpenAPI document's components, with what forms need to be generated from them."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from etikett_engine.dsl.schemas import COMPONENTS, schema
from etikett_engine.render.barcode import SPECS
from etikett_engine.render.fonts import PACKAGES
from support.client import Api, problem


def inline(node: Any, definitions: dict[str, Any], prefix: str) -> Any:
    """`node` with every reference `prefix<name>` replaced by the definition it names."""
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(prefix):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            target = inline(definitions[reference[len(prefix) :]], definitions, prefix)
            return {**target, **inline(rest, definitions, prefix)}
        return {k: inline(v, definitions, prefix) for k, v in node.items()}
    if isinstance(node, list):
        return [inline(item, definitions, prefix) for item in node]
    return node


@pytest.fixture(scope="module")
def reader(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


@pytest.mark.parametrize("kind", ["label", "flow", "form"])
def test_one_schema_for_rest_and_the_openapi_components(
    reader: Api, anonymous: Api, kind: str
) -> None:
    response = reader.get(f"/schemas/{kind}")
    assert response.status_code == 200, response.text
    published = response.json()
    assert published == schema(kind)
    assert published["$id"] == f"svc://schema/{kind}"
    Draft202012Validator.check_schema(published)

    components = anonymous.get("/openapi.json").json()["components"]["schemas"]
    as_component = inline(components[COMPONENTS[kind]], components, "#/components/schemas/")
    definitions = published.pop("$defs", {})
    for key in ("$id", "$schema"):
        published.pop(key)
    assert as_component == inline(published, definitions, "#/$defs/")


def test_forms_find_units_groups_choices_and_cel_in_the_label_schema(reader: Api) -> None:
    label = reader.get("/schemas/label").json()
    parts = label["$defs"]
    x = parts["TextObject"]["properties"]["x_mm"]
    assert (x["title"], x["x-unit"], x["x-group"]) == ("X", "mm", "Position")
    assert parts["TextObject"]["properties"]["size_pt"]["x-unit"] == "pt"
    assert parts["BarcodeObject"]["properties"]["module_width_dots"]["x-unit"] == "dots"
    assert parts["TextObject"]["properties"]["expression"]["x-cel"] is True
    assert parts["Variable"]["properties"]["expression"]["x-cel"] is True
    assert parts["TextObject"]["title"] == "Text" and parts["BarcodeObject"]["title"] == "Barcode"
    # Choices are what the renderer has: its fonts and its symbologies, each with a name.
    assert parts["TextObject"]["properties"]["font"]["enum"] == list(PACKAGES)
    symbology = parts["BarcodeObject"]["properties"]["symbology"]
    assert symbology["enum"] == list(SPECS)
    assert len(symbology["x-enum-titles"]) == len(symbology["enum"])
    assert symbology["x-enum-titles"][symbology["enum"].index("gs1-128")] == "GS1-128"
    image = parts["ImageObject"]["properties"]["content_base64"]
    assert image["contentEncoding"] == "base64" and "image/png" in image["x-accept"]


def test_an_unknown_kind_is_refused(reader: Api) -> None:
    body = problem(reader.get("/schemas/printer"), 422, "request.invalid")
    assert body["params"]["fields"][0]["field"] == "path.kind"


def test_the_layout_operation_takes_the_published_label_document(anonymous: Api) -> None:
    document = anonymous.get("/openapi.json").json()
    body = document["components"]["schemas"]["LayoutRequest"]["properties"]["document"]
    assert body["allOf"] == [{"$ref": "#/components/schemas/LabelDocument"}]
