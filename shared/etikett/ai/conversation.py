"""What the service asks a language model and what comes back, independent of the wire format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Provider = Literal["anthropic-messages", "openai-chat", "generic-json"]
PROVIDERS: tuple[Provider, ...] = ("anthropic-messages", "openai-chat", "generic-json")
# Providers whose wire format has tool use (the Copilots answer through a tool).
WITH_TOOLS: frozenset[str] = frozenset({"anthropic-messages", "openai-chat"})


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one model. `api_key` is the decrypted secret: it goes into the
    request's header and nowhere else (never into an error, a log line or an answer)."""

    provider: Provider
    model: str
    url: str
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One message: the user's text, the model's reply (text and tool calls), or the result of a
    tool call sent back to the model."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None  # role "tool": the call this result answers
    is_error: bool = False


@dataclass(frozen=True)
class Request:
    system: str
    turns: tuple[Turn, ...]
    tool: Tool | None = None  # when given, the model is asked to answer through it
    max_tokens: int = 2048


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: tuple[ToolCall, ...]
    model: str

    def call_of(self, tool: str) -> ToolCall | None:
        return next((call for call in self.tool_calls if call.name == tool), None)

    def as_turn(self) -> Turn:
        return Turn(role="assistant", text=self.text, tool_calls=self.tool_calls)


@dataclass(frozen=True)
class HttpCall:
    """One provider request as it goes on the wire."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]
