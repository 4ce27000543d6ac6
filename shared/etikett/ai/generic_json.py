"""The generic JSON wire format (`generic-json`): POST `{endpoint}` with `{"model", "system",
"prompt"}`, read `{"text"}`. It has no tool use: explanations only (Copilots refuse it). The
conversation is flattened into one prompt; a tool becomes an instruction to answer with a JSON
object of the tool's input schema, which the caller may or may not get back."""

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from etikett.ai.conversation import Endpoint, HttpCall, Reply, Request


class GenericAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str
    model: str | None = None


def build(endpoint: Endpoint, request: Request) -> HttpCall:
    parts = []
    for turn in request.turns:
        if turn.role == "user":
            parts.append(turn.text)
        elif turn.role == "assistant":
            parts.append(f"(your earlier answer) {turn.text}")
        else:
            parts.append(f"(result) {turn.text}")
    if request.tool is not None:
        parts.append(
            "Answer with one JSON object only (no prose around it) that fits this JSON Schema:\n"
            + json.dumps(request.tool.input_schema, separators=(",", ":"))
        )
    headers = {"content-type": "application/json"}
    if endpoint.api_key:
        headers["authorization"] = f"Bearer {endpoint.api_key}"
    body = {"model": endpoint.model, "system": request.system, "prompt": "\n\n".join(parts)}
    return HttpCall(url=endpoint.url, headers=headers, body=body)


def parse(data: Any) -> Reply:
    answer = GenericAnswer.model_validate(data)
    return Reply(text=answer.text, tool_calls=(), model=answer.model or "")


def error_message(data: Any) -> str | None:
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            value = data.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return str(value["message"])
    return None


def json_object_in(text: str) -> dict[str, Any] | None:
    """The JSON object a generic model was asked to answer with: the whole text, or the first
    `{…}` span in it (models like to wrap JSON in prose or code fences)."""
    text = text.strip()
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
