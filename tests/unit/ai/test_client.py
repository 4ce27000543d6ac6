"""The three wire formats against a real model server on loopback: what is sent, what is read,
and every provider failure as its problem code (never anything else)."""

from __future__ import annotations

import json
import socket
import time

import pytest

from etikett.ai import client
from etikett.ai.conversation import PROVIDERS, Endpoint, Request, Tool, ToolCall, Turn
from etikett_engine.errors import ProviderFailed, RateLimited
from support.model_server import Answer, ModelServer, text_answer, tool_answer

KEY = "sk-secret-0123456789"
TOOL = Tool(
    name="propose",
    description="Propose a change.",
    input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
)


@pytest.fixture(scope="module")
def server():
    with ModelServer(api_key=KEY) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh(server: ModelServer):
    server.clear()
    yield


def endpoint(server: ModelServer, provider: str, key: str | None = KEY) -> Endpoint:
    return Endpoint(provider=provider, model="m-1", url=server.endpoint(provider), api_key=key)


def ask(target: Endpoint, tool: Tool | None = None, **limits: float) -> object:
    request = Request(system="Be brief.", turns=(Turn(role="user", text="Hello?"),), tool=tool)
    return client.complete(target, request, limits=client.Limits(**limits), private_allowed=True)


def failure(target: Endpoint, code: str, **limits: float) -> ProviderFailed:
    with pytest.raises(ProviderFailed) as raised:
        ask(target, **limits)
    error = raised.value
    assert error.code == code, (error.code, error.detail)
    assert KEY not in error.detail and KEY not in json.dumps(error.params)
    return error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_answers_in_each_format(server: ModelServer, provider: str) -> None:
    reply = ask(endpoint(server, provider))
    assert reply.text == "OK" and reply.model == "test-model" and reply.tool_calls == ()
    (seen,) = server.requests
    body = seen.json
    assert body["model"] == "m-1"
    if provider == "anthropic-messages":
        assert seen.path == "/v1/messages"
        assert seen.headers["x-api-key"] == KEY and seen.headers["anthropic-version"]
        assert "authorization" not in seen.headers
        assert body["system"] == "Be brief." and body["max_tokens"] > 0
        assert body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "Hello?"}]}
        ]
    elif provider == "openai-chat":
        assert seen.path == "/v1/chat/completions"
        assert seen.headers["authorization"] == f"Bearer {KEY}"
        assert body["messages"] == [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello?"},
        ]
    else:
        assert seen.path == "/generate"
        assert body == {"model": "m-1", "system": "Be brief.", "prompt": "Hello?"}


@pytest.mark.parametrize("provider", ["anthropic-messages", "openai-chat"])
def test_tool_calls_go_out_and_come_back(server: ModelServer, provider: str) -> None:
    server.then(lambda seen: tool_answer(seen, "propose", {"x": 7}))
    reply = ask(endpoint(server, provider), tool=TOOL)
    (call,) = reply.tool_calls
    assert call.name == "propose" and call.input == {"x": 7}
    body = server.requests[0].json
    if provider == "anthropic-messages":
        assert body["tools"][0]["input_schema"] == TOOL.input_schema
        assert body["tool_choice"] == {"type": "tool", "name": "propose"}
    else:
        assert body["tools"][0]["function"]["parameters"] == TOOL.input_schema
        assert body["tool_choice"] == {"type": "function", "function": {"name": "propose"}}

    # The call and its result go back in the provider's own shapes.
    follow_up = Request(
        system="s",
        turns=(
            Turn(role="user", text="Hello?"),
            reply.as_turn(),
            Turn(role="tool", text="refused: ids kept", call_id=call.id, is_error=True),
        ),
        tool=TOOL,
    )
    client.complete(endpoint(server, provider), follow_up, private_allowed=True)
    messages = server.requests[1].json["messages"]
    if provider == "anthropic-messages":
        assert messages[1]["content"][-1] == {
            "type": "tool_use",
            "id": call.id,
            "name": "propose",
            "input": {"x": 7},
        }
        assert messages[2] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": "refused: ids kept",
                    "is_error": True,
                }
            ],
        }
    else:
        assert messages[2]["tool_calls"][0]["function"] == {
            "name": "propose",
            "arguments": json.dumps({"x": 7}),
        }
        assert messages[3] == {
            "role": "tool",
            "tool_call_id": call.id,
            "content": "refused: ids kept",
        }


def test_generic_json_gets_the_tool_as_an_instruction(server: ModelServer) -> None:
    ask(endpoint(server, "generic-json"), tool=TOOL)
    prompt = server.requests[0].json["prompt"]
    assert (
        "JSON Schema" in prompt and json.dumps(TOOL.input_schema, separators=(",", ":")) in prompt
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_key_is_unauthorized(server: ModelServer, provider: str) -> None:
    error = failure(endpoint(server, provider, key="sk-wrong"), "ai.unauthorized")
    assert error.status == 502 and error.params["provider_status"] == 401


def test_429_is_retried_after_retry_after(server: ModelServer) -> None:
    server.then(
        Answer(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}),
        Answer(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "50"}),
    )
    assert ask(endpoint(server, "openai-chat")).text == "OK"
    assert len(server.requests) == 3


def test_429_beyond_the_bound_is_rate_limited(server: ModelServer) -> None:
    limited = Answer(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "10"})
    server.then(limited, limited, limited, limited)
    with pytest.raises(RateLimited) as raised:
        ask(endpoint(server, "anthropic-messages"), retries=2)
    assert raised.value.status == 503 and raised.value.code == "ai.rate_limited"
    assert len(server.requests) == 3  # the first attempt and two retries

    server.clear()
    server.then(Answer(429, {}, {"retry-after": "3600"}))
    with pytest.raises(RateLimited) as raised:
        ask(endpoint(server, "anthropic-messages"))
    assert raised.value.headers["Retry-After"] == "3600"  # not waited for: told to the caller
    assert len(server.requests) == 1


def test_a_slow_model_times_out(server: ModelServer) -> None:
    server.then(lambda seen: Answer(200, text_answer(seen, "late").body, delay=1.5))
    error = failure(endpoint(server, "openai-chat"), "ai.unreachable", timeout=0.3)
    assert error.params["reason"] == "timeout"


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (Answer(200, b"<html>not json</html>"), "ai.bad_response"),
        (Answer(200, {"choices": "many"}), "ai.bad_response"),
        (Answer(200, {"model": "x", "choices": []}), "ai.bad_response"),
        (Answer(400, {"error": {"message": f"bad model; your key {KEY}"}}), "ai.bad_response"),
        (Answer(302, {}, {"location": "http://127.0.0.1:1/elsewhere"}), "ai.bad_response"),
        (Answer(500, {"error": {"message": "overloaded"}}), "ai.unreachable"),
    ],
)
def test_unusable_answers(server: ModelServer, answer: Answer, code: str) -> None:
    server.then(answer)
    error = failure(endpoint(server, "openai-chat"), code)
    assert len(server.requests) == 1  # neither retried nor redirected
    if answer.status == 400:
        assert error.params["provider_message"] == "bad model; your key [redacted]"


def test_tool_arguments_that_are_not_json_are_a_bad_response(server: ModelServer) -> None:
    def broken(seen):
        answer = tool_answer(seen, "propose", {})
        answer.body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{oops"
        return answer

    server.then(broken)
    failure(endpoint(server, "openai-chat"), "ai.bad_response")


def test_nobody_listening_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = Endpoint(provider="openai-chat", model="m", url=f"http://127.0.0.1:{port}/v1")
    error = failure(closed, "ai.unreachable")
    assert error.params["reason"] == "connection"


def test_an_endpoint_not_allowed_is_refused_before_connecting() -> None:
    public_http = Endpoint(provider="generic-json", model="m", url="http://example.com/x")
    error = failure(public_http, "ai.unreachable")
    assert error.params["reason"] == "address_refused"


def test_the_key_is_never_in_the_endpoint_repr() -> None:
    target = Endpoint(provider="openai-chat", model="m", url="https://x", api_key=KEY)
    assert KEY not in repr(target) and KEY not in repr(ToolCall("1", "t", {}))


def _padded(seen, size: int) -> bytes:
    """A valid answer in the request's format, padded with whitespace to `size` bytes."""
    body = json.dumps(text_answer(seen, "OK").body).encode()
    return body + b" " * max(0, size - len(body))


@pytest.mark.parametrize("chunked", [False, True])
def test_an_answer_larger_than_the_bound_is_a_bad_response_read_no_further(
    server: ModelServer, chunked: bool
) -> None:
    """Declared (content-length) or not (chunked), an answer past 2 MB is refused: the client
    never holds more than the bound in memory."""
    huge = 40 * 1024 * 1024
    server.then(
        lambda seen: Answer(200, _padded(seen, huge), chunked=chunked, chunk_size=256 * 1024)
    )
    error = failure(endpoint(server, "openai-chat"), "ai.bad_response")
    assert error.params["reason"] == "too_large" and error.params["limit"] == 2 * 1024 * 1024
    assert error.status == 502
    server.then(lambda seen: Answer(200, _padded(seen, 2 * 1024 * 1024 - 10), chunked=chunked))
    assert ask(endpoint(server, "openai-chat")).text == "OK"  # type: ignore[attr-defined]


def test_an_answer_that_trickles_past_the_deadline_is_cut_off_at_it(server: ModelServer) -> None:
    """Each piece comes well within the per-read timeout; the whole answer would take 60 s."""
    server.then(lambda seen: Answer(200, _padded(seen, 1200), chunk_size=1, chunk_delay=0.05))
    started = time.monotonic()
    error = failure(endpoint(server, "openai-chat"), "ai.unreachable", timeout=5, deadline=1)
    assert error.params["reason"] == "deadline" and "1 s" in error.detail
    assert error.status == 502
    assert time.monotonic() - started < 30  # cut off, not read to its end


def test_an_answer_that_stalls_after_its_headers_ends_at_the_deadline(
    server: ModelServer,
) -> None:
    """Headers at once, then silence longer than the deadline but shorter than a read's
    timeout: only the deadline can end it."""
    server.then(lambda seen: Answer(200, _padded(seen, 100), hold=20, chunk_size=10))
    started = time.monotonic()
    error = failure(
        endpoint(server, "anthropic-messages"), "ai.unreachable", timeout=15, deadline=1
    )
    assert error.params["reason"] == "deadline"
    assert time.monotonic() - started < 10


def test_a_compressed_answer_that_was_not_asked_for_is_a_bad_response(server: ModelServer) -> None:
    server.then(Answer(200, b"\x1f\x8b\x08\x00", headers={"content-encoding": "gzip"}))
    error = failure(endpoint(server, "openai-chat"), "ai.bad_response")
    assert error.params["reason"] == "encoding"
    assert server.requests[-1].headers["accept-encoding"] == "identity"


def test_a_long_error_answer_keeps_its_status(server: ModelServer) -> None:
    server.then(Answer(401, b'{"error": {"message": "no"}}' + b" " * (3 * 1024 * 1024)))
    error = failure(endpoint(server, "openai-chat"), "ai.unauthorized")
    assert error.params["provider_status"] == 401
