"""Every function's policy in template.yaml covers the tables, queues, buckets and keys its code
uses (issue 23, item 9): what the code uses is derived from the code (tests/support/
code_reach.py walks it from each function's entry and routes), the resources from the settings
the template gives the functions, so neither side is a list kept by hand.

RunnerAgentFunction once lacked the credentials table and key: a deployed flow that needs a
secret would have failed on AWS, and local mode (moto, no IAM) could not tell.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from etikett.api.groups import GROUPS
from etikett.local.template import _CfnLoader
from support.code_reach import Code, Key
from support.server import REPO

# Settings that name a resource the code hands to AWS without calling it, with why no grant on
# it is needed.
NAMED_NOT_CALLED = {
    "runner_dlq_arn": "the redrive target CreateQueue gets for a Runner's queue; SQS checks no "
    "permission of the caller on it",
}
# Where the walk reaches more than runs (it follows every method of a class it reaches, and both
# sides of every `if`), each with why it never runs there; a reason that no longer holds (the
# walk stops finding the use) fails `test_every_exception_is_still_needed`.
NEVER_RUNS = {
    ("RunnerAgentFunction", "users_table"): "Access.__call__ reads tokens; the agent channel's "
    "RunnerCertificateAccess overrides it and reads the client certificate only",
    ("RunnerAgentFunction", "tokens_table"): "as users_table",
    ("McpFunction", "runner_queue_role_arn"): "the walk reaches the agent channel's routes, "
    "which are no MCP tools (not_in_mcp): only the agent function hands out queue credentials",
    ("McpFunction", "runner_wake_policy"): "as runner_queue_role_arn: only the agent function "
    "registers a Runner's certificate for wakes, when the Runner asks for its queue access",
    ("PrintRendererFunction", "audit_table"): "UnitOfWork writes an audit entry only when "
    "given one; the renderer's units of work have none",
    ("WebhookSenderFunction", "audit_table"): "as the renderer: a delivery's unit of work "
    "audits nothing",
}


@cache
def template() -> dict[str, Any]:
    return dict(yaml.load((REPO / "template.yaml").read_text(), Loader=_CfnLoader))


def functions() -> dict[str, dict[str, Any]]:
    return {
        name: resource["Properties"]
        for name, resource in template()["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def resources_of(function: dict[str, Any]) -> dict[str, str]:
    """Setting -> what it names: a resource's logical id, or a `Fn::Sub` pattern (the Runners'
    queues, by prefix); from the template's environment (Globals and the function's own)."""
    document = template()
    variables = {
        **document["Globals"]["Function"]["Environment"]["Variables"],
        **(function.get("Environment") or {}).get("Variables", {}),
    }
    named = {}
    for variable, value in variables.items():
        if not variable.startswith("ETIKETT_") or not isinstance(value, dict):
            continue
        setting = variable.removeprefix("ETIKETT_").lower()
        if "Ref" in value and value["Ref"] in document["Resources"]:
            named[setting] = value["Ref"]
        elif "Fn::GetAtt" in value:
            named[setting] = value["Fn::GetAtt"][0]
        elif "Fn::Sub" in value and "AWS::StackName" in str(value["Fn::Sub"]):
            named[setting] = f"{value['Fn::Sub']}-*"
    return named


def grants_of(function: dict[str, Any]) -> str:
    """Everything the function's policies (or its explicit role's) say, as text to search for a
    resource's reference."""
    policies: Any = function.get("Policies") or []
    role = function.get("Role")
    if role is not None:
        policies = template()["Resources"][role["Fn::GetAtt"][0]]["Properties"]["Policies"]
    return repr(policies)


def granted(grants: str, resource: str) -> bool:
    if resource.endswith("-*"):  # a Sub pattern: the statement names it as it is
        return resource in grants
    return any(
        reference in grants
        for reference in (
            repr({"Ref": resource}),
            repr({"Fn::GetAtt": [resource, "Arn"]}),
            repr({"Fn::GetAtt": [resource, "QueueName"]}),
            "${" + resource + ".Arn}",
            "${" + resource + "}",
        )
    )


@cache
def code() -> Code:
    settings = {s for f in functions().values() for s in resources_of(f)}
    return Code(REPO / "shared", settings)


def roots(function: dict[str, Any]) -> list[Key]:
    """The function's entry (all of it), its group's routes (each endpoint) and, for the MCP
    endpoint, the routes of every group whose operations are tools."""
    folder = REPO / function["CodeUri"].rstrip("/")
    entry = f"entry:{folder.name}"
    tree = _parse(folder / "app.py")
    known = code()
    module = known.modules.get(entry) or known.add(entry, tree)
    found: list[Key] = [("mod", entry), *(("def", entry, name) for name in module.top)]
    groups = {
        node.args[0].value
        for node in _walk(tree)
        if getattr(getattr(node, "func", None), "id", None) == "routes_of"
        and isinstance(node.args[0].value, str)
    }
    if "mcp" in groups:
        from etikett.api.openapi import operation_groups

        groups |= set(operation_groups().values())
    for group in sorted(groups):
        router = GROUPS[group]
        found.append(("mod", router))
        found += [("def", router, name) for name in known.modules[router].top]
    return found


def _parse(path: Path) -> Any:
    import ast

    return ast.parse(path.read_text(encoding="utf-8"))


def _walk(tree: Any) -> Any:
    import ast

    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args]


@cache
def used_by(name: str) -> dict[str, list[str]]:
    """Resource setting -> how the function's code reaches it."""
    return code().reach(roots(functions()[name]))


@pytest.mark.parametrize("name", sorted(functions()))
def test_the_policy_covers_what_the_code_uses(name: str) -> None:
    function = functions()[name]
    named = resources_of(function)
    used = used_by(name)
    grants = grants_of(function)
    missing = {
        f"{setting} ({named[setting]})": " -> ".join(chain)
        for setting, chain in used.items()
        if setting not in NAMED_NOT_CALLED
        and (name, setting) not in NEVER_RUNS
        and not granted(grants, named[setting])
    }
    assert not missing, f"{name} uses, without a grant: {missing}"


def test_the_walk_finds_what_it_must() -> None:
    """The analysis itself: a repository reached through a route counts; the agent channel
    reaches the credentials (flows' secrets) and their key; the console reaches nothing."""
    agent = used_by("RunnerAgentFunction")
    assert {"credentials_table", "credentials_key", "deployments_table", "jobs_table"} <= set(agent)
    assert any("credential_vault" in step for step in agent["credentials_key"])
    assert used_by("ConsoleFunction") == {}
    audit = used_by("AuditFunction")
    assert "credentials_table" not in audit and "audit_table" in audit


def test_every_exception_is_still_needed() -> None:
    for (name, setting), reason in NEVER_RUNS.items():
        function = functions()[name]
        assert setting in used_by(name), f"{name} no longer reaches {setting}: drop the exception"
        assert not granted(grants_of(function), resources_of(function)[setting]), (name, reason)
