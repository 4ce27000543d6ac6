"""A real language-model server for tests: a threaded HTTP server on loopback that speaks the
three wire formats (Messages at /v1/messages, Chat Completions at /chat/completions, generic JSON
at any other path), records every request, checks the API key, and answers what a test scripts:
text, tool calls, errors (401, 429 with retry-after, 500), slow answers or malformed bodies."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode()

    @property
    def format(self) -> str:
        if self.path.endswith("/v1/messages"):
            return "anthropic-messages"
        if self.path.endswith("/chat/completions"):
            return "openai-chat"
        return "generic-json"


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the headers
    # How the body goes out: in pieces of `chunk_size` bytes (0: at once) with `chunk_delay`
    # seconds between them (a trickle), after `hold` seconds of silence behind the headers;
    # `chunked`: transfer-encoding chunked instead of a content-length.
    chunk_size: int = 0
    chunk_delay: float = 0.0
    hold: float = 0.0
    chunked: bool = False


Responder = Callable[[Seen], Answer]


# --- answers in each wire format ---------------------------------------------------------------


def text_answer(seen: Seen, text: str, model: str = "test-model") -> Answer:
    if seen.format == "anthropic-messages":
        return Answer(
            body={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }
        )
    if seen.format == "openai-chat":
        return Answer(
            body={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
            }
        )
    return Answer(body={"text": text, "model": model})


def tool_answer(
    seen: Seen, name: str, arguments: dict[str, Any], model: str = "test-model", call: str = "1"
) -> Answer:
    """A tool call in the request's format (generic JSON: the arguments as the text)."""
    if seen.format == "anthropic-messages":
        return Answer(
            body={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [
                    {"type": "text", "text": "Here you go."},
                    {"type": "tool_use", "id": f"toolu_{call}", "name": name, "input": arguments},
                ],
                "stop_reason": "tool_use",
            }
        )
    if seen.format == "openai-chat":
        return Answer(
            body={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": f"call_{call}",
                                    "type": "function",
                                    "function": {"name": name, "arguments": json.dumps(arguments)},
                                }
                            ],
                        },
                        "finish_reason": "tool_calls",
                    }
                ],
            }
        )
    return Answer(body={"text": json.dumps(arguments), "model": model})


def says_ok(seen: Seen) -> Answer:
    return text_answer(seen, "OK")


class ModelServer:
    """`api_key`: the key every request must carry (None: none needed). `script`: answers to the
    next requests, in order (an `Answer` or a responder); then `default` answers."""

    def __init__(self, api_key: str | None = None, default: Responder = says_ok) -> None:
        self.api_key = api_key
        self.default = default
        self.script: list[Answer | Responder] = []
        self.requests: list[Seen] = []
        self.durations: list[float] = []  # seconds each answer took here (benchmarks subtract)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # headers and body leave in one write: no Nagle/delayed-ACK stall

            def do_POST(self) -> None:
                started = time.perf_counter()
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(seen)
                    step = server.script.pop(0) if server.script else None
                if server.api_key is not None and not server._authorized(seen):
                    answer = Answer(
                        401,
                        {"error": {"type": "authentication_error", "message": "invalid x-api-key"}},
                    )
                elif step is None:
                    answer = server.default(seen)
                else:
                    answer = step if isinstance(step, Answer) else step(seen)
                if answer.delay:
                    time.sleep(answer.delay)
                payload = (
                    answer.body
                    if isinstance(answer.body, bytes)
                    else json.dumps(answer.body).encode()
                )
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", "application/json")
                    if answer.chunked:
                        self.send_header("transfer-encoding", "chunked")
                    else:
                        self.send_header("content-length", str(len(payload)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if answer.hold or answer.chunk_size or answer.chunked:
                        self.wfile.flush()
                        time.sleep(answer.hold)
                        self._send_in_pieces(answer, payload)
                    else:
                        self.wfile.write(payload)
                    self.wfile.flush()
                    with server._lock:
                        server.durations.append(time.perf_counter() - started)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _send_in_pieces(self, answer: Answer, payload: bytes) -> None:
                size = answer.chunk_size or len(payload) or 1
                for start in range(0, len(payload), size):
                    piece = payload[start : start + size]
                    if answer.chunked:
                        piece = b"%x\r\n%s\r\n" % (len(piece), piece)
                    self.wfile.write(piece)
                    self.wfile.flush()
                    if answer.chunk_delay:
                        time.sleep(answer.chunk_delay)
                if answer.chunked:
                    self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _authorized(self, seen: Seen) -> bool:
        if seen.format == "anthropic-messages":
            return seen.headers.get("x-api-key") == self.api_key
        return seen.headers.get("authorization") == f"Bearer {self.api_key}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def endpoint(self, provider: str) -> str:
        """The credential endpoint for `provider` (OpenAI clients' base URLs end in /v1)."""
        return {
            "anthropic-messages": self.url,
            "openai-chat": f"{self.url}/v1",
            "generic-json": f"{self.url}/generate",
        }[provider]

    def then(self, *steps: Answer | Responder) -> ModelServer:
        with self._lock:
            self.script.extend(steps)
        return self

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.durations.clear()
            self.script.clear()

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
