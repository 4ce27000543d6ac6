"""Lint findings: one shape for flows (and label preflight), each pointing into the document."""

from typing import Any, Literal

from pydantic import BaseModel, Field

Severity = Literal["error", "warning"]


class Finding(BaseModel):
    code: str = Field(description="Stable code, e.g. `flow.cycle`.", examples=["flow.cel_invalid"])
    severity: Severity
    path: str = Field(
        description="JSON Pointer into the document.", examples=["/nodes/2/condition"]
    )
    node_id: str | None = None
    message: str
    params: dict[str, Any] = Field(default_factory=dict)


# Every code lint can report: the catalog postFlowLint's description and the list in
# docs/concepts/flows.md.
FLOW_FINDING_CODES: dict[str, str] = {
    "flow.no_trigger": "No trigger node: nothing ever starts the flow.",
    "flow.unknown_node_type": "A node's type is not in the registry.",
    "flow.field_invalid": "A node's fields do not fit its type (or a wire goes into a trigger).",
    "flow.cel_invalid": "A CEL expression does not compile, names something unknown, or nests "
    "comprehensions.",
    "flow.cel_name_unknown": "An expression reads a record field no record reaching the node "
    "has, a context parameter not set where the flow runs, or a field a Runner lacks (a "
    "warning; records and context are checked against the scope a lint request names).",
    "flow.cycle": "The wires form a cycle (an error that also stops dry runs and deployments).",
    "flow.fan_out": "A record may be copied to more branches, or pass more nodes, than the "
    "engine's budget of one record allows (a warning).",
    "flow.unreachable_node": "No trigger reaches the node (a warning).",
    "flow.path_refused": "A trigger.folder path, or an action.file path whose CEL is a "
    "constant, has a `..` segment, a drive or `:`, a network or device path, a NUL or control "
    "character, a leading `~` or a Windows device name, or a constant action.file path is "
    "absolute (an error; such a version is not saved). An absolute folder is allowed: the "
    "Runner decides whether it lies inside its allowed roots.",
    "flow.credential_origin_refused": "An action.http sends a secret to an origin the secret "
    "does not name (an error: not deployed, and no Runner gets the secret for it).",
    "flow.credential_unbound": "An action.http sends a secret that names no origins, so it "
    "would go wherever a flow sends it (a warning; give the secret `origins`).",
    "flow.label_not_found": "An action.print names a label that does not exist.",
    "flow.label_not_released": "The printed label has no released (or approved) version.",
    "flow.label_variable_unknown": "An action.print maps a variable the label does not declare "
    "(or computes itself), or misses a required one.",
}


# Error codes that make a version impossible to run at all (not just some of its records).
UNRUNNABLE = frozenset({"flow.cycle"})


def pointer(*parts: Any) -> str:
    """A JSON Pointer from its reference tokens (escaping `~` and `/`)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)
