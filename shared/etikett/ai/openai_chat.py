"""The OpenAI-compatible Chat Completions wire format (`openai-chat`, also what local model
servers speak): POST `{endpoint}/chat/completions` with `Authorization: Bearer`, the endpoint
being an OpenAI client's base URL (e.g. `…/v1`). Tools are `function` tools; a call's arguments
arrive as a JSON string."""

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from etikett.ai.conversation import Endpoint, HttpCall, Reply, Request, ToolCall, Turn


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FunctionCall(_Lenient):
    name: str
    arguments: str


class ToolCallItem(_Lenient):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_Lenient):
    role: str = "assistant"
    content: str | None = None
    tool_calls: list[ToolCallItem] | None = None


class Choice(_Lenient):
    index: int = 0
    message: Message
    finish_reason: str | None = None


class ChatCompletion(_Lenient):
    """The parts of a chat completion the service reads."""

    model: str = ""
    choices: list[Choice]


class ErrorBody(_Lenient):
    class Error(_Lenient):
        message: str = ""

    error: Error


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.call_id, "content": turn.text}
    if turn.role == "assistant":
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.input)},
                }
                for call in turn.tool_calls
            ]
        return message
    return {"role": "user", "content": turn.text}


def build(endpoint: Endpoint, request: Request) -> HttpCall:
    body: dict[str, Any] = {
        "model": endpoint.model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": "system", "content": request.system},
            *(_message(turn) for turn in request.turns),
        ],
    }
    if request.tool is not None:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": request.tool.name,
                    "description": request.tool.description,
                    "parameters": request.tool.input_schema,
                },
            }
        ]
        body["tool_choice"] = {"type": "function", "function": {"name": request.tool.name}}
    headers = {"content-type": "application/json"}
    if endpoint.api_key:
        headers["authorization"] = f"Bearer {endpoint.api_key}"
    return HttpCall(url=endpoint.url.rstrip("/") + "/chat/completions", headers=headers, body=body)


def parse(data: Any) -> Reply:
    answer = ChatCompletion.model_validate(data)
    if not answer.choices:
        raise ValueError("the answer has no choices")
    message = answer.choices[0].message
    calls = []
    for item in message.tool_calls or []:
        arguments = json.loads(item.function.arguments or "{}")
        if not isinstance(arguments, dict):
            raise ValueError(f"the arguments of tool call {item.id} are not a JSON object")
        calls.append(ToolCall(id=item.id, name=item.function.name, input=arguments))
    return Reply(text=message.content or "", tool_calls=tuple(calls), model=answer.model)


def error_message(data: Any) -> str | None:
    try:
        return ErrorBody.model_validate(data).error.message or None
    except ValueError:
        return None
