"""Tool results: an operation's HTTP answer as MCP content, and every failure as `isError` with the
problem `code` and `params`. Errors become `isError` results here and nowhere else."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types

from etikett.api.problems import Problem
from etikett_engine.errors import EtikettError, ProblemCode

# Response headers an agent needs beside the body: where a created thing is, when to retry, what
# a preview measures. Transport headers (length, date, server) say nothing about the operation.
RELEVANT_HEADERS = frozenset({"location", "retry-after", "etag", "content-disposition", "allow"})
RELEVANT_PREFIXES = ("x-label-", "x-etikett-")


def from_response(status: int, headers: Mapping[str, str], body: bytes) -> types.CallToolResult:
    """An operation's answer: its body as content (JSON as text, an image as image content),
    then the status block; a 4xx/5xx answer as `isError`."""
    media_type = (headers.get("content-type") or "").split(";")[0].strip().lower()
    block = status_block(status, headers)
    if status >= 400:
        return problem_result(_problem_of(status, media_type, body), block)
    if not body:
        return types.CallToolResult(content=[block])
    content: types.ContentBlock
    if _is_json(media_type):
        content = types.TextContent(text=body.decode("utf-8", "replace"))
    elif media_type.startswith("image/"):
        content = types.ImageContent(data=base64.b64encode(body).decode(), mime_type=media_type)
    elif media_type.startswith("text/"):
        content = types.TextContent(text=body.decode("utf-8", "replace"))
    else:
        content = types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="svc://result",
                mime_type=media_type or "application/octet-stream",
                blob=base64.b64encode(body).decode(),
            ),
        )
    return types.CallToolResult(content=[content, block])


def status_block(status: int, headers: Mapping[str, str]) -> types.TextContent:
    relevant = {
        _canonical(name): value
        for name, value in headers.items()
        if name.lower() in RELEVANT_HEADERS or name.lower().startswith(RELEVANT_PREFIXES)
    }
    summary = {"status": status, "content_type": headers.get("content-type"), "headers": relevant}
    return types.TextContent(text=json.dumps(summary, ensure_ascii=False))


def error_result(error: EtikettError) -> types.CallToolResult:
    """A failure found before the operation ran (arguments, files): no HTTP answer to report."""
    return problem_result(
        _problem(error.status, error.code, error.title, error.detail, error.params)
    )


def refusal_result(error: EtikettError) -> types.CallToolResult:
    """The operation's access rule refused the caller: the answer the operation itself gives,
    with its status block, though it was not asked."""
    problem = _problem(error.status, error.code, error.title, error.detail, error.params)
    return problem_result(
        problem, status_block(error.status, {"content-type": "application/problem+json"})
    )


def internal_error(request_id: str | None) -> types.CallToolResult:
    return problem_result(
        _problem(
            500,
            ProblemCode.INTERNAL_ERROR,
            "Internal error",
            "An unexpected error happened while running the tool.",
            {"request_id": request_id},
        )
    )


def problem_result(
    problem: Mapping[str, Any], block: types.TextContent | None = None
) -> types.CallToolResult:
    content: list[types.ContentBlock] = [
        types.TextContent(text=json.dumps(dict(problem), ensure_ascii=False))
    ]
    if block is not None:
        content.append(block)
    return types.CallToolResult(content=content, is_error=True)


def _problem_of(status: int, media_type: str, body: bytes) -> dict[str, Any]:
    if _is_json(media_type):
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("code"), str):
            return {**parsed, "params": parsed.get("params") or {}}
    # Not one of our problems (nothing of ours answers this way): say what came back.
    code = ProblemCode.INTERNAL_ERROR if status >= 500 else ProblemCode.REQUEST_INVALID
    detail = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
    return _problem(status, code, "Request failed", detail, {})


def _problem(
    status: int, code: str, title: str, detail: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    return Problem(
        type=f"https://etikett.dev/problems/{code}",
        title=title,
        status=status,
        detail=detail,
        code=code,
        params=dict(params),
    ).model_dump(mode="json")


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


def _canonical(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))
