"""The flow document, Node-RED style: a flat list of nodes with stable ids, a registry type each,
the type's own fields beside them, and `wires` to the next nodes; plus pinned samples. The
node types and their fields are the flow registry (`etikett_engine.dsl.flow_registry`).

The document model checks only what makes a document readable (ids, wires, sizes); whether a
node's fields fit its type, its CEL compiles and its graph makes sense is lint
(`etikett_engine.flows.lint`), so a designer can save a draft that is still wrong and see why.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from etikett_engine.dsl.strict import OBJECT_ID, Strict

NODE_TYPE = r"^[a-z][a-z0-9-]{0,63}(\.[a-z][a-z0-9-]{0,63})*$"
MAX_NODES = 200
# The budget of one record in the engine: node executions, and copies of the record that fan-out
# makes (the record itself counts). Lint warns (`flow.fan_out`) where a flow can exceed it.
MAX_NODE_EXECUTIONS = 1000
MAX_FAN_OUT = 100
MAX_SAMPLES = 100
CEL_MAX = 2000
# Where the editor may draw a node: far beyond any canvas, near enough to keep numbers sane.
CANVAS_LIMIT = 1_000_000


class NodeUi(Strict):
    """Where the console's flow editor draws a node. Only people's editors read it: the engine,
    lint and Runners ignore it, so moving a node changes nothing a run does."""

    x: float = Field(ge=-CANVAS_LIMIT, le=CANVAS_LIMIT, description="Left edge, canvas units.")
    y: float = Field(ge=-CANVAS_LIMIT, le=CANVAS_LIMIT, description="Top edge, canvas units.")


class FlowNode(BaseModel):
    """One node. Fields beyond these come from its type's entry in the flow registry."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str = Field(pattern=OBJECT_ID, description="Stable id; every patch must keep it.")
    type: str = Field(pattern=NODE_TYPE, description="A node type of the flow registry.")
    name: str | None = Field(default=None, max_length=200, description="A label for people.")
    wires: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="Ids of the nodes this node's output goes to (logic.switch: see its cases).",
    )
    ui: NodeUi | None = Field(
        default=None,
        description="Where the flow editor draws the node ({x, y}); runs never read it.",
        examples=[{"x": 240, "y": 120}],
    )

    def fields(self) -> dict[str, Any]:
        """The type's own fields: everything but id, type, name, wires and ui."""
        return dict(self.model_extra or {})


class FlowDocument(Strict):
    """What a flow is: its nodes and how they are wired, plus pinned sample records."""

    nodes: list[FlowNode] = Field(default_factory=list, max_length=MAX_NODES)
    samples: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=MAX_SAMPLES,
        description="Pinned sample records: what postFlowDryRun runs on when given none.",
    )
    description: str | None = Field(default=None, max_length=2000)


def malformations(document: FlowDocument) -> list[tuple[str, str]]:
    """(JSON Pointer, message) for every id used twice and every wire to no node: a document
    with any of these cannot be saved or run."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for index, node in enumerate(document.nodes):
        if node.id in seen:
            found.append((f"/nodes/{index}/id", f"the id {node.id!r} is used twice"))
        seen.add(node.id)
    for index, node in enumerate(document.nodes):
        for wire, target in enumerate(node.wires):
            if target not in seen:
                found.append((f"/nodes/{index}/wires/{wire}", f"{target!r} names no node"))
        for path, target in _case_wires(node):
            if target not in seen:
                where = path.replace("[", "/").replace("].", "/").replace("]", "")
                found.append((f"/nodes/{index}/{where}", f"{target!r} names no node"))
    return found


def _case_wires(node: FlowNode) -> list[tuple[str, Any]]:
    """The wires a logic.switch keeps in its cases and `otherwise` (as written, maybe malformed)."""
    found: list[tuple[str, Any]] = []
    extra = node.model_extra or {}
    cases = extra.get("cases")
    if isinstance(cases, list):
        for c, case in enumerate(cases):
            wires = case.get("wires") if isinstance(case, dict) else None
            if isinstance(wires, list):
                found += [(f"cases[{c}].wires[{w}]", t) for w, t in enumerate(wires)]
    otherwise = extra.get("otherwise")
    if isinstance(otherwise, list):
        found += [(f"otherwise[{w}]", t) for w, t in enumerate(otherwise)]
    return found


def targets(node: FlowNode) -> list[str]:
    """Every node this node can pass a record to."""
    found = list(node.wires)
    found += [t for _, t in _case_wires(node) if isinstance(t, str)]
    return found


def alternatives(node: FlowNode) -> list[list[str]]:
    """The groups of targets a record goes to, exactly one group per record: a switch's cases
    and `otherwise` (one of them), any other node's `wires` (all of them)."""
    if node.type != "logic.switch":
        return [list(node.wires)]
    extra = node.model_extra or {}
    groups: list[list[str]] = []
    cases = extra.get("cases")
    for case in cases if isinstance(cases, list) else []:
        wires = case.get("wires") if isinstance(case, dict) else None
        if isinstance(wires, list):
            groups.append([t for t in wires if isinstance(t, str)])
    otherwise = extra.get("otherwise")
    if isinstance(otherwise, list):
        groups.append([t for t in otherwise if isinstance(t, str)])
    return groups


def json_schema() -> dict[str, Any]:
    schema = FlowDocument.model_json_schema(ref_template="#/$defs/{model}")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "svc://schema/flow"
    schema["description"] = (
        "A flow: `nodes` (each with a stable `id`, a registry `type`, the type's own fields "
        "beside them and `wires` to the next nodes) and pinned `samples`. Node types and their "
        "fields: svc://registry/flows (getFlowRegistry)."
    )
    return schema
