"""The McpFunction runs every MCP operation in process, so it needs what the functions of those
operations need: each of their policies (or a broader one on the same resource, never `*`), their
extra layers and function-level variables, and as much memory and time. A group that adds an MCP
operation without extending McpFunction fails here, not on AWS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from etikett.api.groups import GROUPS, routes_of
from etikett.api.routing import EtikettRoute
from etikett.local.template import _CfnLoader

# A broader managed policy on the same resource covers the narrower ones.
BROADER = {
    "DynamoDBReadPolicy": "DynamoDBCrudPolicy",
    "DynamoDBWritePolicy": "DynamoDBCrudPolicy",
    "S3ReadPolicy": "S3CrudPolicy",
    "S3WritePolicy": "S3CrudPolicy",
}
NAMING = {"POWERTOOLS_SERVICE_NAME"}  # each function names itself
# Read only by operations MCP never offers (first-time setup): the secret stays with its function.
NOT_FOR_MCP = {"ETIKETT_SETUP_SECRET": "postAuthSetup"}


def _functions(repo: Path) -> dict[str, dict[str, Any]]:
    document = yaml.load((repo / "template.yaml").read_text(), Loader=_CfnLoader)
    return {
        name: resource["Properties"]
        for name, resource in document["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def _has_mcp_operations(group: str) -> bool:
    return any(isinstance(route, EtikettRoute) and route.mcp for route in routes_of(group).routes)


def _covered(policy: dict[str, Any], granted: list[dict[str, Any]]) -> bool:
    ((kind, spec),) = policy.items()
    if kind == "Statement":
        for statement in spec:
            actions = set()
            for grant in granted:
                for mine in grant.get("Statement", []):
                    if (mine["Effect"], mine["Resource"]) == (
                        statement["Effect"],
                        statement["Resource"],
                    ):
                        actions |= set(mine["Action"])
            if not set(statement["Action"]) <= actions:
                return False
        return True
    return policy in granted or {BROADER.get(kind, kind): spec} in granted


def test_mcp_function_can_run_every_mcp_operation(repo: Path) -> None:
    functions = _functions(repo)
    mcp = functions["McpFunction"]
    others = {
        name: properties
        for name, properties in functions.items()
        if Path(properties["CodeUri"]).name in GROUPS
        and Path(properties["CodeUri"]).name != "mcp"
        and _has_mcp_operations(Path(properties["CodeUri"]).name)
    }
    assert {"LabelsFunction", "AuthFunction", "MiscFunction"} <= set(others)
    missing = [
        (name, policy)
        for name, properties in others.items()
        for policy in properties.get("Policies", [])
        if not _covered(policy, mcp["Policies"])
    ]
    assert missing == [], "extend McpFunction's Policies"
    layers = {str(layer) for layer in mcp.get("Layers", [])}
    for name, properties in others.items():
        for layer in properties.get("Layers", []):
            assert str(layer) in layers, (name, layer)
        variables = (properties.get("Environment") or {}).get("Variables", {})
        mine = (mcp.get("Environment") or {}).get("Variables", {})
        for key, value in variables.items():
            if key in NOT_FOR_MCP:
                assert key not in mine, (name, key)
                continue
            assert key in NAMING or mine.get(key) == value, (name, key)
        assert mcp.get("MemorySize", 0) >= properties.get("MemorySize", 0), name
        assert mcp.get("Timeout", 0) >= properties.get("Timeout", 0), name
    # ... and those operations are really not MCP's.
    operations = {
        route.operation_id: route.mcp
        for group in GROUPS
        for route in routes_of(group).routes
        if isinstance(route, EtikettRoute)
    }
    assert all(operations[operation] is False for operation in NOT_FOR_MCP.values())
