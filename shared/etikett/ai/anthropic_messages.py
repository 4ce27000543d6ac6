"""The Messages wire format (`anthropic-messages`): POST `{endpoint}/v1/messages` with `x-api-key`
and `anthropic-version`; tool use as `tool_use` content blocks, results as `tool_result` blocks."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from etikett.ai.conversation import Endpoint, HttpCall, Reply, Request, ToolCall, Turn

API_VERSION = "2023-06-01"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextBlock(_Lenient):
    type: Literal["text"]
    text: str


class ToolUseBlock(_Lenient):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class OtherBlock(_Lenient):
    type: str  # thinking, redacted_thinking, … : ignored


Block = Annotated[TextBlock | ToolUseBlock | OtherBlock, Field(union_mode="left_to_right")]


class MessagesResponse(_Lenient):
    """The parts of a Messages answer the service reads."""

    type: Literal["message"] = "message"
    model: str
    content: list[Block]
    stop_reason: str | None = None


class ErrorBody(_Lenient):
    class Error(_Lenient):
        type: str = ""
        message: str = ""

    error: Error


def _content(turn: Turn) -> list[dict[str, Any]]:
    if turn.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": turn.call_id,
                "content": turn.text,
                **({"is_error": True} if turn.is_error else {}),
            }
        ]
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
    return blocks


def build(endpoint: Endpoint, request: Request) -> HttpCall:
    messages = [
        {"role": "assistant" if turn.role == "assistant" else "user", "content": _content(turn)}
        for turn in request.turns
    ]
    body: dict[str, Any] = {
        "model": endpoint.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": messages,
    }
    if request.tool is not None:
        body["tools"] = [
            {
                "name": request.tool.name,
                "description": request.tool.description,
                "input_schema": request.tool.input_schema,
            }
        ]
        body["tool_choice"] = {"type": "tool", "name": request.tool.name}
    headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
    if endpoint.api_key:
        headers["x-api-key"] = endpoint.api_key
    return HttpCall(url=endpoint.url.rstrip("/") + "/v1/messages", headers=headers, body=body)


def parse(data: Any) -> Reply:
    answer = MessagesResponse.model_validate(data)
    text = "".join(block.text for block in answer.content if isinstance(block, TextBlock))
    calls = tuple(
        ToolCall(id=block.id, name=block.name, input=block.input)
        for block in answer.content
        if isinstance(block, ToolUseBlock)
    )
    return Reply(text=text, tool_calls=calls, model=answer.model)


def error_message(data: Any) -> str | None:
    try:
        return ErrorBody.model_validate(data).error.message or None
    except ValueError:
        return None
