"""The flow registry: every node type a flow document may use, with a pydantic model of its own
fields (whose JSON Schema `getFlowRegistry` and svc://registry/flows publish), what it does, where
its records go, and which of its fields hold CEL. The engine and lint look types up in
`NODE_SPECS`; the document itself is `etikett_engine.dsl.flow`.

The published schemas say what kind of value a string is, so an editor can offer the right
control without knowing node types: `format` is `cel` (an expression), `label-reference`,
`printer-alias`, `credential-ref` or `node-id` (a wire's target, drawn rather than typed)."""

import copy
import functools
from typing import Annotated, Any, Literal

from pydantic import Field

from etikett_engine.dsl.flow import CEL_MAX, NODE_TYPE
from etikett_engine.dsl.strict import IDENTIFIER, Strict

LABEL_REFERENCE = r"^lbl_[0-9A-Za-z]{1,40}(@[1-9][0-9]{0,8})?$"
CREDENTIAL_REF = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # as createCredential's `ref`
HTTP_TRIGGER_PATH = r"^[a-z0-9][a-z0-9_-]{0,63}(/[a-z0-9][a-z0-9_-]{0,63}){0,7}$"

Category = Literal["trigger", "logic", "action"]
NodeId = Annotated[str, Field(json_schema_extra={"format": "node-id"})]


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
    secret: str | None = Field(
        default=None,
        pattern=CREDENTIAL_REF,
        description="Ref of a `secret` credential (createCredential) that every request must "
        "carry, as `Authorization: Bearer <secret>` or `X-Etikett-Trigger-Secret: <secret>`; "
        "the Runners that run the flow receive it. Without it, anything that can reach the "
        "Runner's port may start the flow.",
        examples=["erp-trigger"],
        json_schema_extra={"format": "credential-ref"},
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
    wires: list[NodeId] = Field(
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
    otherwise: list[NodeId] | None = Field(
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
        json_schema_extra={"format": "label-reference"},
    )
    printer: str = Field(
        min_length=1,
        max_length=100,
        pattern=IDENTIFIER,
        description="A printer alias; each deployment assigns a printer to it.",
        examples=["shipping"],
        json_schema_extra={"format": "printer-alias"},
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
        json_schema_extra={"format": "credential-ref"},
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
        for pattern in CEL_FIELDS.get(self.type, ()):
            _mark_cel(schema, schema, tuple(pattern.split("/")))
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
            "array of objects, `Content-Type: application/json`) and answers 202 with the run "
            "id; never from a web page (a request with `Origin` is refused), and with `secret` "
            "only from callers that send it.",
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


def _mark_cel(root: dict[str, Any], node: dict[str, Any], rest: tuple[str, ...]) -> None:
    """`format: cel` on the string schemas a CEL_FIELDS pattern names (through $refs, nullable
    `anyOf`s, map values and list items), so the published schema says which strings are CEL."""
    while "$ref" in node:
        node = root["$defs"][str(node["$ref"]).rsplit("/", 1)[1]]
    for option in node.get("anyOf", []):
        if option.get("type") != "null":
            _mark_cel(root, option, rest)
    if not rest:
        if node.get("type") == "string":
            node["format"] = "cel"
        return
    head, tail = rest[0], rest[1:]
    if head == "*":
        for key in ("additionalProperties", "items"):
            if isinstance(node.get(key), dict):
                _mark_cel(root, node[key], tail)
    elif head in node.get("properties", {}):
        _mark_cel(root, node["properties"][head], tail)


def registry() -> dict[str, Any]:
    """`getFlowRegistry` and svc://registry/flows: every node type with its fields' schema (a
    copy of it: callers may change theirs)."""
    return copy.deepcopy(_registry())


@functools.cache
def _registry() -> dict[str, Any]:
    return {"items": [spec.entry().model_dump(mode="json") for spec in NODE_SPECS.values()]}
