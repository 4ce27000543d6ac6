"""The flow document, Node-RED style: a flat list of nodes with stable ids, a registry type each,
the type's own fields beside them, and `wires` to the next nodes; plus pinned samples.

The document model checks only what makes a document readable (ids, wires, sizes); whether a
node's fields fit its type, its CEL compiles and its graph makes sense is lint
(`etikett.flows.lint`), so a designer can save a draft that is still wrong and see why.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from etikett.dsl.label import IDENTIFIER, OBJECT_ID, Strict

NODE_TYPE = r"^[a-z][a-z0-9-]{0,63}(\.[a-z][a-z0-9-]{0,63})*$"
LABEL_REFERENCE = r"^lbl_[0-9A-Za-z]{1,40}(@[1-9][0-9]{0,8})?$"
HTTP_TRIGGER_PATH = r"^[a-z0-9][a-z0-9_-]{0,63}(/[a-z0-9][a-z0-9_-]{0,63}){0,7}$"
MAX_NODES = 200
# The budget of one record in the engine: node executions, and copies of the record that fan-out
# makes (the record itself counts). Lint warns (`flow.fan_out`) where a flow can exceed it.
MAX_NODE_EXECUTIONS = 1000
MAX_FAN_OUT = 100
MAX_SAMPLES = 100
CEL_MAX = 2000

Cel = Field(min_length=1, max_length=CEL_MAX)
Category = Literal["trigger", "logic", "action"]


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

    def fields(self) -> dict[str, Any]:
        """The type's own fields: everything but id, type, name and wires."""
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


# --- the registry: one model of fields per node type -----------------------------------------


class FolderTrigger(Strict):
    path: str = Field(
        min_length=1,
        max_length=1000,
        description="Folder on the Runner to watch (absolute, or inside the Runner's data folder).",
        examples=["/srv/labels/inbox"],
    )
    pattern: str = Field(
        default="*",
        min_length=1,
        max_length=200,
        description="Glob of the file names to take (hidden files never count); default `*`.",
        examples=["*.csv", "orders-*.jsonl"],
    )
    format: Literal["csv", "json", "jsonl"] = Field(
        default="csv",
        description="csv: a record per row (first row: field names); json: an array of objects "
        "or one object; jsonl: an object per line.",
        examples=["csv"],
    )
    delimiter: str = Field(
        default=",",
        min_length=1,
        max_length=1,
        description="The CSV field separator, one character (CSV only); default `,`.",
        examples=[";", "\t"],
    )


class HttpTrigger(Strict):
    path: str = Field(
        pattern=HTTP_TRIGGER_PATH,
        description="The Runner accepts POST /flows/<path> on its local HTTP port.",
        examples=["orders/new"],
    )


class ScheduleTrigger(Strict):
    every_s: int = Field(ge=1, le=604_800, description="Seconds between ticks.", examples=[300])


class SetNode(Strict):
    values: dict[str, str] = Field(
        min_length=1,
        max_length=50,
        description="Field name → CEL expression; the record's field is set to its value.",
        examples=[{"sscc": "record.sscc.trim()", "copies": "int(record.qty)"}],
    )


class FilterNode(Strict):
    condition: str = Field(
        min_length=1,
        max_length=CEL_MAX,
        description="CEL; the record passes on only when it is true.",
        examples=['record.country == "DE"'],
    )


class SwitchCase(Strict):
    """One case of a logic.switch: a condition and where the record goes when it holds."""

    when: str = Field(
        min_length=1,
        max_length=CEL_MAX,
        description="CEL condition over `record`, `context` and `runner`; must give a bool.",
        examples=["record.weight_kg > 30.0", 'record.country in ["AT", "CH"]'],
    )
    wires: list[str] = Field(
        max_length=100,
        description="Ids of the nodes the record goes to when `when` is the first true case.",
        examples=[["print_pallet"]],
    )


class SwitchNode(Strict):
    cases: list[SwitchCase] = Field(
        min_length=1,
        max_length=50,
        description="The record goes along the first case whose `when` is true.",
        examples=[[{"when": "record.weight_kg > 30.0", "wires": ["print_pallet"]}]],
    )
    otherwise: list[str] | None = Field(
        default=None,
        max_length=100,
        description="Ids of the nodes a record goes to when no case matches; without it such "
        "a record's path ends at the switch.",
        examples=[["print_parcel"]],
    )


class PrintNode(Strict):
    label: str = Field(
        pattern=LABEL_REFERENCE,
        description="lbl_… (the released version) or lbl_…@N (an approved version N).",
        examples=["lbl_01J0000000000000000000000"],
    )
    printer: str = Field(
        min_length=1,
        max_length=100,
        pattern=IDENTIFIER,
        description="A printer alias; each deployment assigns a printer to it.",
        examples=["shipping"],
    )
    copies: str | None = Field(
        default=None,
        min_length=1,
        max_length=CEL_MAX,
        description="CEL giving the copies (1–1000); default 1.",
        examples=["int(record.qty)"],
    )
    variables: dict[str, str] = Field(
        default_factory=dict,
        max_length=200,
        description="Label variable → CEL expression giving its value.",
        examples=[{"sscc": "record.sscc", "ship_to": "record.name"}],
    )


class HttpAction(Strict):
    url: str = Field(
        min_length=1,
        max_length=2000,
        description="https:// URL (http:// only to loopback).",
        examples=["https://erp.example.com/api/labels/printed"],
    )
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = Field(
        default="POST",
        description="The HTTP method; default POST.",
        examples=["POST", "PUT"],
    )
    body: str | None = Field(
        default=None,
        min_length=1,
        max_length=CEL_MAX,
        description="CEL giving the JSON body (any JSON value); without it no body is sent.",
        examples=["record", '{"order": record.order_id, "printed": true}'],
    )
    credential: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Ref of a `secret` credential (createCredential), sent as "
        "`Authorization: Bearer <secret>`; the Runners that run the flow receive it.",
        examples=["erp-token"],
    )


class FileAction(Strict):
    path: str = Field(
        min_length=1,
        max_length=CEL_MAX,
        description="CEL giving a relative path inside the Runner's data folder.",
        examples=['"printed/" + record.order_id + ".txt"'],
    )
    content: str = Field(
        min_length=1,
        max_length=CEL_MAX,
        description="CEL giving the file's text (any other value is written as JSON).",
        examples=['record.order_id + ";" + record.sscc', "record"],
    )


class LogAction(Strict):
    message: str = Field(
        min_length=1,
        max_length=CEL_MAX,
        description="CEL giving the message (a non-string value is shown as text).",
        examples=['"printed " + record.sscc', "record"],
    )
    level: Literal["debug", "info", "warning", "error"] = Field(
        default="info",
        description="How the message counts in the run and the Runner's log; default info.",
        examples=["info", "warning"],
    )


class NodeType(Strict):
    """A registry entry: what a node of this type does and which fields it takes."""

    type: str = Field(pattern=NODE_TYPE, examples=["logic.filter"])
    category: Category = Field(examples=["logic"])
    description: str = Field(
        examples=["Passes the record on only when `condition` is true; otherwise its path ends."]
    )
    fields: dict[str, Any] = Field(
        description="JSON Schema (2020-12) of the node's own fields, each with a description "
        "and examples; they stand in the node beside `id`, `type`, `name` and `wires`.",
        examples=[
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["condition"],
                "properties": {
                    "condition": {
                        "type": "string",
                        "description": "CEL; the record passes on only when it is true.",
                        "examples": ['record.country == "DE"'],
                    }
                },
            }
        ],
    )
    outputs: str = Field(description="Where its records go.", examples=["Its `wires`."])


class FlowRegistry(Strict):
    """Every node type a flow document may use (`getFlowRegistry`, svc://registry/flows)."""

    items: list[NodeType]


class NodeSpec:
    """A node type as the engine and lint see it: its fields model and its CEL fields."""

    def __init__(
        self,
        type_: str,
        category: Category,
        model: type[Strict],
        description: str,
        outputs: str,
    ) -> None:
        self.type = type_
        self.category = category
        self.model = model
        self.description = description
        self.outputs = outputs

    def entry(self) -> NodeType:
        schema = self.model.model_json_schema(ref_template="#/$defs/{model}")
        schema.pop("title", None)
        return NodeType(
            type=self.type,
            category=self.category,
            description=self.description,
            fields=schema,
            outputs=self.outputs,
        )


_WIRES = "Its `wires`, with the record."
NODE_SPECS: dict[str, NodeSpec] = {
    spec.type: spec
    for spec in (
        NodeSpec(
            "trigger.folder",
            "trigger",
            FolderTrigger,
            "Every file that appears in `path` on the Runner becomes records (a CSV row, a JSON "
            "array element or object, a JSONL line). A processed file moves to `path/done/`, a "
            "failed one to `path/failed/` with a reason file; no file is read twice.",
            "Its `wires`, one record at a time; `record` holds the row's fields.",
        ),
        NodeSpec(
            "trigger.http",
            "trigger",
            HttpTrigger,
            "The Runner accepts `POST /flows/<path>` on its local HTTP port (a JSON object or an "
            "array of objects) and answers 202 with the run id.",
            "Its `wires`, one record per posted object.",
        ),
        NodeSpec(
            "trigger.schedule",
            "trigger",
            ScheduleTrigger,
            "One empty record every `every_s` seconds.",
            "Its `wires`, with an empty record.",
        ),
        NodeSpec(
            "logic.set",
            "logic",
            SetNode,
            "Sets fields of the record, each to the value of a CEL expression over `record`, "
            "`context` and `runner` (all expressions see the record as it came in).",
            _WIRES,
        ),
        NodeSpec(
            "logic.filter",
            "logic",
            FilterNode,
            "Passes the record on only when `condition` is true; otherwise its path ends here.",
            _WIRES + " Nothing when the condition is false.",
        ),
        NodeSpec(
            "logic.switch",
            "logic",
            SwitchNode,
            "Sends the record along the first case whose `when` is true, else along `otherwise` "
            "(if given). A switch has no `wires` of its own.",
            "The `wires` of the first matching case, or `otherwise`.",
        ),
        NodeSpec(
            "action.print",
            "action",
            PrintNode,
            "One print per record through the ordinary print path (job, archive entries, "
            "counters), idempotent per run, node and record. `variables` map label variables to "
            "CEL; `printer` is an alias that each deployment assigns.",
            _WIRES + " `record.print` gets {label, version, printer, copies, job_id}.",
        ),
        NodeSpec(
            "action.http",
            "action",
            HttpAction,
            "An HTTPS request (or plain HTTP to loopback); its status and JSON answer are added "
            "to the record as `record.http` = {status, body}.",
            _WIRES,
        ),
        NodeSpec(
            "action.file",
            "action",
            FileAction,
            "Writes a text file inside the Runner's data folder, never outside it.",
            _WIRES,
        ),
        NodeSpec(
            "action.log",
            "action",
            LogAction,
            "Adds a message to the run.",
            _WIRES,
        ),
    )
}

# The fields of each type that hold CEL, as JSON pointer tails ("*" = every key or item).
CEL_FIELDS: dict[str, tuple[str, ...]] = {
    "logic.set": ("values/*",),
    "logic.filter": ("condition",),
    "logic.switch": ("cases/*/when",),
    "action.print": ("copies", "variables/*"),
    "action.http": ("body",),
    "action.file": ("path", "content"),
    "action.log": ("message",),
}


def registry() -> dict[str, Any]:
    """`getFlowRegistry` and svc://registry/flows: every node type with its fields' schema."""
    return {"items": [spec.entry().model_dump(mode="json") for spec in NODE_SPECS.values()]}


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
