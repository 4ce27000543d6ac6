"""MkDocs hook: the reference pages, generated at build time from what the service publishes (its
OpenAPI document, the flow node registry and the problem catalog), so they cannot drift from it.

No page of them is committed: `on_files` adds them to the build as generated files."""

from __future__ import annotations

import json
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

METHODS = ("get", "post", "put", "patch", "delete")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _access(operation: dict[str, Any]) -> str:
    access = operation.get("x-etikett-access") or {}
    if not access.get("authenticated", True):
        return "none"
    roles = ", ".join(access.get("roles") or []) or "any"
    return roles + (", a person" if access.get("human") else "")


def _schema_name(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        names = [_schema_name(s) for s in schema.get(key, []) if s.get("type") != "null"]
        if names:
            return " or ".join(n for n in names if n)
    return str(schema.get("type", ""))


def api_page(document: dict[str, Any]) -> str:
    """Every operation by tag: method, path, operationId (the MCP tool), roles, body, answer."""
    lines = [
        "# REST API",
        "",
        f"Generated from the service's OpenAPI document (version {document['info']['version']}), "
        "which the service itself serves at `GET /api/v1/openapi.json` and, readable, in the "
        "console under **API reference** (`/console/reference`). The MCP tool of an operation "
        "has the operation's id as its name; operations marked *no* are not MCP tools.",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                operation = item[method]
                tag = (operation.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((method.upper(), path, operation))
    for tag in sorted(by_tag):
        lines += [f"## {tag.capitalize()}", ""]
        for method, path, operation in by_tag[tag]:
            body = operation.get("requestBody", {}).get("content", {})
            json_body = body.get("application/json", {}).get("schema")
            kinds = ", ".join(sorted(body)) if body and not json_body else ""
            answers = sorted(operation.get("responses", {}))
            lines += [
                f"### `{method} {path}`",
                "",
                f"**{_cell(operation.get('summary', ''))}** — `{operation['operationId']}`; "
                f"roles: {_access(operation)}; MCP: "
                f"{'yes' if operation.get('x-etikett-mcp') else 'no'}.",
                "",
            ]
            if operation.get("description"):
                lines += [operation["description"].strip(), ""]
            parameters = operation.get("parameters") or []
            if parameters:
                lines += ["| parameter | in | required | description |", "|---|---|---|---|"]
                for parameter in parameters:
                    lines.append(
                        f"| `{parameter['name']}` | {parameter['in']} | "
                        f"{'yes' if parameter.get('required') else 'no'} | "
                        f"{_cell(parameter.get('description', ''))} |"
                    )
                lines.append("")
            if json_body or kinds:
                shown = f"`{_schema_name(json_body)}` (JSON)" if json_body else kinds
                lines += [f"Body: {shown}. Answers: {', '.join(answers)}.", ""]
            else:
                lines += [f"Answers: {', '.join(answers)}.", ""]
    return "\n".join(lines)


def nodes_page(registry: dict[str, Any]) -> str:
    lines = [
        "# Flow nodes",
        "",
        "Generated from the node registry the service publishes (`GET /api/v1/flows/registry`, "
        "MCP resource `svc://registry/flows`). Each node's fields are a JSON Schema; a flow "
        "document lists nodes with an `id`, a `type` from here, these fields and `wires`.",
        "",
    ]
    for node in registry["items"]:
        fields = node["fields"]
        required = set(fields.get("required", []))
        lines += [
            f"## `{node['type']}`",
            "",
            f"*{node['category']}* — {node['description'].strip()}",
            "",
            "| field | type | required | description |",
            "|---|---|---|---|",
        ]
        for name, field in fields.get("properties", {}).items():
            kind = field.get("type") or _schema_name(field) or "see schema"
            lines.append(
                f"| `{name}` | {_cell(json.dumps(kind) if isinstance(kind, list) else kind)} | "
                f"{'yes' if name in required else 'no'} | {_cell(field.get('description', ''))} |"
            )
        lines += ["", f"Outputs: {_cell(json.dumps(node.get('outputs')))}.", ""]
    return "\n".join(lines)


def problems_page(codes: dict[str, Any]) -> str:
    lines = [
        "# Problem codes",
        "",
        "Generated from the catalog the OpenAPI document publishes as `x-etikett-problem-codes`. "
        "Every failure is an RFC 9457 problem with one of these codes (see "
        "[Errors, lists and the audit log](conventions.md)).",
        "",
        "| code | status | meaning |",
        "|---|---|---|",
    ]
    for code, entry in sorted(codes.items()):
        lines.append(f"| `{code}` | {entry['status']} | {_cell(entry.get('meaning', ''))} |")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    from etikett.api.openapi import build
    from etikett_engine.dsl.flow_registry import registry

    document = build()
    return {
        "reference/api.md": api_page(document),
        "reference/flow-nodes.md": nodes_page(registry()),
        "reference/problem-codes.md": problems_page(document["x-etikett-problem-codes"]),
    }


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files
