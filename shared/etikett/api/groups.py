"""The resource groups: each is one Lambda function in template.yaml and one router module (here,
or for the MCP endpoint in etikett.mcp)."""

from __future__ import annotations

from importlib import import_module

from fastapi import APIRouter

# group name (functions/<group>/) -> module whose `routes` router holds the group's operations
GROUPS: dict[str, str] = {
    "auth": "etikett.api.auth",
    "users": "etikett.api.users",
    "audit": "etikett.api.audit",
    "misc": "etikett.api.misc",
    "labels": "etikett.api.labels",
    "flows": "etikett.api.flows",
    "deployments": "etikett.api.deployments",
    "runners": "etikett.api.runners",
    "printers": "etikett.api.printers",
    "runner_agent": "etikett.api.runner_agent",
    "printing": "etikett.api.printing",
    "counters": "etikett.api.counters",
    "webhooks": "etikett.api.webhooks",
    "credentials": "etikett.api.credentials",
    "ai": "etikett.api.ai",
    "mcp": "etikett.mcp.routes",  # the MCP endpoint: plain routes, no operations of its own
}


def routes_of(group: str) -> APIRouter:
    routes: APIRouter = import_module(GROUPS[group]).routes
    return routes


def all_routes() -> list[APIRouter]:
    return [routes_of(group) for group in GROUPS]
