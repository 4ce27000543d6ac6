"""Lint of a flow document: what is well-formed but wrong, each finding with its JSON Pointer.

Structural checks need nothing but the document. Label references (`action.print`) are checked
against a `LabelCatalog` the caller supplies, the secrets `action.http` sends against a
`SecretCatalog`: the service reads its tables, a test a dict.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from pydantic import ValidationError

from etikett_engine.dsl.flow import (
    FlowDocument,
    FlowNode,
    targets,
)
from etikett_engine.dsl.flow_registry import (
    CEL_FIELDS,
    NODE_SPECS,
    HttpAction,
    HttpTrigger,
    PrintNode,
)
from etikett_engine.flows import lint_graph as graph
from etikett_engine.flows import paths, secret_origins
from etikett_engine.flows.findings import Finding, pointer
from etikett_engine.flows.scope import Scope, name_findings, record_fields
from etikett_engine.flows.secret_origins import SecretCatalog

CEL_NAMES = ("record", "context", "runner")
MAX_MACRO_DEPTH = 1  # a comprehension, but never one inside another: cost stays linear


@dataclass(frozen=True)
class LabelFacts:
    """What lint needs to know of a referenced label version."""

    label_id: str
    version: int | None  # the version a print would use; None: no released version
    approved: bool
    entered: frozenset[str] = field(default_factory=frozenset)
    required: frozenset[str] = field(default_factory=frozenset)  # entered, required, no default
    computed: frozenset[str] = field(default_factory=frozenset)


class LabelCatalog(Protocol):
    def facts(self, label_id: str, version: int | None) -> LabelFacts | None:
        """None when there is no such label (or no such version)."""


def cel_sources(node: FlowNode) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path inside the node, source) of every CEL expression the node's fields hold."""
    fields = node.fields()
    for pattern in CEL_FIELDS.get(node.type, ()):
        yield from _walk(fields, tuple(pattern.split("/")), ())


def _walk(value: Any, rest: tuple[str, ...], path: tuple[Any, ...]) -> Iterator[Any]:
    if not rest:
        if isinstance(value, str):
            yield path, value
        return
    head, tail = rest[0], rest[1:]
    if head == "*":
        if isinstance(value, dict):
            for key, item in value.items():
                yield from _walk(item, tail, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from _walk(item, tail, (*path, index))
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], tail, (*path, head))


def check_expression(source: str) -> str | None:
    """Why `source` cannot run in a flow, or None."""
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett_engine.cel import CelInvalid, check, macro_depth

    try:
        check(source, extra_names=CEL_NAMES)
        depth = macro_depth(source)
    except CelInvalid as error:
        return str(error.params.get("message") or error.detail)
    if depth > MAX_MACRO_DEPTH:
        return (
            f"comprehensions nest {depth} deep; at most {MAX_MACRO_DEPTH} "
            "(a map inside a map multiplies the work per record)"
        )
    return None


def lint(
    document: FlowDocument,
    labels: LabelCatalog | None = None,
    secrets: SecretCatalog | None = None,
    scope: Scope | None = None,
) -> list[Finding]:
    """Every finding. Expressions are checked against the Runner's fields, and with a `scope`
    also against the record fields and context parameters it names (`flow.cel_name_unknown`);
    a schedule's records are empty, so what follows one is always checked. With `secrets`, what
    `action.http` sends is checked against each secret's origins."""
    findings: list[Finding] = []
    scope = scope or Scope()
    entering = record_fields(document, scope.record)
    nodes = document.nodes
    by_id = {node.id: node for node in nodes}
    triggers = [n for n in nodes if _category(n) == "trigger"]
    if not triggers:
        findings.append(
            Finding(
                code="flow.no_trigger",
                severity="error",
                path="/nodes",
                message="The flow has no trigger node (trigger.folder, trigger.http or "
                "trigger.schedule), so nothing ever starts it.",
                params={},
            )
        )
    http_paths: dict[str, str] = {}
    for index, node in enumerate(nodes):
        findings += _node_findings(index, node, by_id, http_paths, labels)
        if node.id in entering:  # an unreachable node's expressions see nothing in particular
            sources = cel_sources(node)
            here = pointer("nodes", index)
            findings += name_findings(here, node, sources, entering[node.id], scope.context)
    cycles = graph.cycles(nodes)
    findings += cycles
    if not cycles:  # a cycle is unbounded anyway, and reported as such
        findings += graph.fan_out(nodes, triggers)
    findings += graph.unreachable(nodes, triggers)
    if secrets is not None:
        findings += secret_origins.findings(document, secrets)
    return findings


def _category(node: FlowNode) -> str | None:
    spec = NODE_SPECS.get(node.type)
    return spec.category if spec else None


def _node_findings(
    index: int,
    node: FlowNode,
    by_id: dict[str, FlowNode],
    http_paths: dict[str, str],
    labels: LabelCatalog | None,
) -> list[Finding]:
    here = pointer("nodes", index)
    spec = NODE_SPECS.get(node.type)
    if spec is None:
        return [
            Finding(
                code="flow.unknown_node_type",
                severity="error",
                path=here + "/type",
                node_id=node.id,
                message=f"{node.type!r} is not a node type; getFlowRegistry lists them.",
                params={"type": node.type, "known": sorted(NODE_SPECS)},
            )
        ]
    found: list[Finding] = []
    try:
        fields = spec.model.model_validate(node.fields())
    except ValidationError as error:
        for item in error.errors(include_url=False):
            found.append(
                Finding(
                    code="flow.field_invalid",
                    severity="error",
                    path=here + pointer(*item["loc"]),
                    node_id=node.id,
                    message=f"{'.'.join(map(str, item['loc'])) or 'fields'}: {item['msg']}",
                    params={"type": node.type, "field": ".".join(map(str, item["loc"]))},
                )
            )
        fields = None
    for wire, target in enumerate(targets(node)):
        if _category(by_id[target]) == "trigger":
            found.append(
                Finding(
                    code="flow.field_invalid",
                    severity="error",
                    path=here + f"/wires/{wire}",
                    node_id=node.id,
                    message=f"Wired to the trigger {target!r}; a trigger starts a flow and "
                    "takes no input.",
                    params={"target": target},
                )
            )
    if node.type == "logic.switch" and node.wires:
        found.append(
            Finding(
                code="flow.field_invalid",
                severity="error",
                path=here + "/wires",
                node_id=node.id,
                message="A switch sends records along its cases' wires and `otherwise`; its own "
                "`wires` would never be used.",
                params={},
            )
        )
    for path, source in cel_sources(node):
        problem = check_expression(source)
        if problem is not None:
            found.append(
                Finding(
                    code="flow.cel_invalid",
                    severity="error",
                    path=here + pointer(*path),
                    node_id=node.id,
                    message=f"CEL: {problem}",
                    params={"expression": source[:200], "reason": problem},
                )
            )
    found += paths.node_findings(index, node)
    if isinstance(fields, HttpTrigger):
        other = http_paths.setdefault(fields.path, node.id)
        if other != node.id:
            found.append(
                Finding(
                    code="flow.field_invalid",
                    severity="error",
                    path=here + "/path",
                    node_id=node.id,
                    message=f"The HTTP path is taken by node {other!r}.",
                    params={"path": fields.path, "node": other},
                )
            )
    if isinstance(fields, HttpAction):
        problem = _url_problem(fields.url)
        if problem:
            found.append(
                Finding(
                    code="flow.field_invalid",
                    severity="error",
                    path=here + "/url",
                    node_id=node.id,
                    message=problem,
                    params={"url": fields.url},
                )
            )
    if isinstance(fields, PrintNode) and labels is not None:
        found += _label_findings(here, node, fields.label, fields.variables, labels)
    return found


def _url_problem(url: str) -> str | None:

    try:
        parts = urlsplit(url)
    except ValueError:
        return "The URL is malformed."
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1"):
        return None
    return "The URL must be https:// (plain http:// only to loopback)."


def _label_findings(
    here: str, node: FlowNode, reference: str, variables: dict[str, str], labels: LabelCatalog
) -> list[Finding]:
    label_id, _, number = reference.partition("@")
    version = int(number) if number else None
    facts = labels.facts(label_id, version)
    if facts is None:
        return [
            Finding(
                code="flow.label_not_found",
                severity="error",
                path=here + "/label",
                node_id=node.id,
                message=f"No label {reference}.",
                params={"label": reference},
            )
        ]
    found: list[Finding] = []
    if facts.version is None or not facts.approved:
        what = (
            f"version {version} of {label_id} is not approved"
            if version is not None
            else f"{label_id} has no released version"
        )
        found.append(
            Finding(
                code="flow.label_not_released",
                severity="error",
                path=here + "/label",
                node_id=node.id,
                message=f"{what.capitalize()}; the flow could not print it.",
                params={"label": reference},
            )
        )
    if facts.version is None:
        return found
    for name in variables:
        if name in facts.computed:
            reason = "is computed by the label's own expression and cannot be given"
        elif name not in facts.entered:
            reason = "is not a variable of the label"
        else:
            continue
        found.append(
            Finding(
                code="flow.label_variable_unknown",
                severity="error",
                path=here + pointer("variables", name),
                node_id=node.id,
                message=f"{name!r} {reason} ({label_id}@{facts.version}).",
                params={"label": reference, "variable": name, "version": facts.version},
            )
        )
    for name in sorted(facts.required - set(variables)):
        found.append(
            Finding(
                code="flow.label_variable_unknown",
                severity="error",
                path=here + "/variables",
                node_id=node.id,
                message=f"The label's required variable {name!r} is not mapped "
                f"({label_id}@{facts.version}).",
                params={
                    "label": reference,
                    "variable": name,
                    "version": facts.version,
                    "missing": True,
                },
            )
        )
    return found
