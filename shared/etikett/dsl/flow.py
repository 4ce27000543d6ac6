"""The flow document, Node-RED style: a flat list of nodes with stable ids, a registry type each and
`wires` to the next nodes. Minimal for now: node fields stay open until the flow registry defines
them per type (`NODE_TYPES` is empty until flows exist)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from etikett.dsl.label import OBJECT_ID, Strict

NODE_TYPE = r"^[a-z][a-z0-9-]{0,63}(\.[a-z][a-z0-9-]{0,63})*$"


class FlowNode(BaseModel):
    """One node. Fields beyond these come from its type's entry in the flow registry."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str = Field(pattern=OBJECT_ID, description="Stable id; every patch must keep it.")
    type: str = Field(pattern=NODE_TYPE, description="A node type of the flow registry.")
    name: str | None = Field(default=None, max_length=200, description="A label for people.")
    wires: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="Ids of the nodes this node's output goes to.",
    )


class FlowDocument(Strict):
    """What a flow is: its nodes and how they are wired, plus its inputs and pinned samples."""

    nodes: list[FlowNode] = Field(default_factory=list, max_length=1000)
    inputs: Any = Field(default=None, description="What the flow takes in when it runs.")
    samples: Any = Field(default=None, description="Pinned sample inputs for dry runs.")

    @model_validator(mode="after")
    def _ids_and_wires(self) -> FlowDocument:
        seen: set[str] = set()
        for index, node in enumerate(self.nodes):
            if node.id in seen:
                raise ValueError(f"nodes[{index}].id {node.id!r} is used twice")
            seen.add(node.id)
        for index, node in enumerate(self.nodes):
            for wire, target in enumerate(node.wires):
                if target not in seen:
                    raise ValueError(f"nodes[{index}].wires[{wire}] {target!r} names no node")
        return self


class NodeType(Strict):
    """A registry entry: what a node of this type does and which fields it takes."""

    type: str = Field(pattern=NODE_TYPE)
    category: str
    description: str
    fields: dict[str, Any] = Field(description="JSON Schema of the node's own fields.")
    outputs: int = Field(default=1, ge=0, description="How many outputs can be wired.")


# The flow registry: empty until the flows group defines node types.
NODE_TYPES: tuple[NodeType, ...] = ()


def registry() -> dict[str, Any]:
    return {"node_types": [node.model_dump(mode="json") for node in NODE_TYPES]}


def json_schema() -> dict[str, Any]:
    schema = FlowDocument.model_json_schema(ref_template="#/$defs/{model}")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "svc://schema/flow"
    return schema
