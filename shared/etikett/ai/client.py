"""Calling a language model: one request in its wire format, through the pinned outgoing client,
with a timeout per attempt, a deadline for the whole call, and bounded retries that honour
`retry-after` (and `retry-after-ms`) on 429. The answer is streamed in: at most
`Limits.max_answer_bytes` of it are ever held (more is `ai.bad_response`), uncompressed (it is
asked for so; a compressed one could grow past any bound while it is decoded), and the deadline
holds while it arrives: a body that trickles or stalls is cut off when the deadline passes. Every
failure is a `ProviderFailed` with its problem code; nothing here ever raises anything else for a
provider's behaviour."""

from __future__ import annotations

import contextlib
import email.utils
import heapq
import importlib
import itertools
import json
import math
import socket
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from etikett.ai.conversation import WITH_TOOLS, Endpoint, HttpCall, Reply, Request
from etikett_engine.errors import ProblemCode, ProviderFailed, RateLimited

if TYPE_CHECKING:
    import httpx

# The module of each provider's wire format, imported when an endpoint of that provider is first
# called: a deployment talks to one provider, and its functions need not load the others.
_FORMAT_MODULES: dict[str, str] = {
    "anthropic-messages": "etikett.ai.anthropic_messages",
    "openai-chat": "etikett.ai.openai_chat",
    "generic-json": "etikett.ai.generic_json",
}


def _format(provider: str) -> ModuleType:
    return importlib.import_module(_FORMAT_MODULES[provider])


USER_AGENT = "Etikett-AI/1"
_MESSAGE_LIMIT = 300


@dataclass(frozen=True)
class Limits:
    timeout: float = 20.0  # one attempt
    deadline: float = 25.0  # the whole call, retries and waits included (API Gateway: 30 s)
    retries: int = 2  # attempts after the first, only on 429 (or 503/529 with retry-after)
    max_wait: float = 10.0  # a longer retry-after is not waited for: 503 ai.rate_limited
    max_answer_bytes: int = 2 * 1024 * 1024  # answers are a few kB; more is not an answer


def supports_tools(endpoint: Endpoint) -> bool:
    return endpoint.provider in WITH_TOOLS


def wire(endpoint: Endpoint, request: Request) -> HttpCall:
    """The HTTP request `request` becomes for `endpoint`'s provider."""
    call: HttpCall = _format(endpoint.provider).build(endpoint, request)
    return call


def _client(private_allowed: bool) -> httpx.Client:
    # Kept per process: making one loads the trust store (tens of ms).
    from etikett_engine import outgoing

    return outgoing.kept_client(
        timeout=Limits.timeout,
        private_allowed=private_allowed,
        headers={"user-agent": USER_AGENT, "accept-encoding": "identity"},
    )


def complete(
    endpoint: Endpoint,
    request: Request,
    *,
    limits: Limits | None = None,
    private_allowed: bool | None = None,
) -> Reply:
    """The model's reply to `request`, or `ProviderFailed` (`ai.*`)."""
    # Loaded here, not at the ai and mcp functions' cold start.
    import httpx

    # Loaded here, not at the ai function's cold start.
    from etikett_engine import outgoing

    limits = limits or Limits()
    if private_allowed is None:
        from etikett.settings import get_settings

        private_allowed = get_settings().outgoing_private_networks
    call = wire(endpoint, request)
    form = _format(endpoint.provider)
    started = time.monotonic()
    attempt = 0
    while True:
        remaining = limits.deadline - (time.monotonic() - started)
        if remaining <= 0:
            raise ProviderFailed(
                f"The language model did not answer within {limits.deadline:g} s.",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
            )
        try:
            response = _attempt(
                _client(private_allowed), call, limits, started + limits.deadline, endpoint
            )
        except outgoing.AddressRefused as refused:
            raise ProviderFailed(
                f"The endpoint is refused: {refused}.",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                reason="address_refused",
            ) from None
        except httpx.TimeoutException:
            # A read's timeout is cut to what is left of the deadline: when that is what ran
            # out, the deadline ended the call, whichever of the two noticed first.
            by_deadline = remaining < limits.timeout
            raise ProviderFailed(
                f"The language model did not answer within "
                f"{limits.deadline if by_deadline else limits.timeout:g} s.",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                reason="deadline" if by_deadline else "timeout",
            ) from None
        except httpx.HTTPError as error:
            raise ProviderFailed(
                f"The language model could not be reached ({type(error).__name__}).",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                reason="connection",
            ) from None
        status = response.status_code
        if status == 429 or (status in (503, 529) and _retry_after(response) is not None):
            wait = _retry_after(response)
            elapsed = time.monotonic() - started
            wait_for = 1.0 if wait is None else wait
            if (
                attempt < limits.retries
                and wait_for <= limits.max_wait
                and elapsed + wait_for < limits.deadline
            ):
                attempt += 1
                time.sleep(wait_for)
                continue
            raise RateLimited(
                f"The language model is rate limited (HTTP {status}) after {attempt + 1} "
                "attempt(s); try again later.",
                retry_after=math.ceil(wait_for) if wait is not None else None,
                provider=endpoint.provider,
                attempts=attempt + 1,
            )
        if status in (401, 403):
            raise ProviderFailed(
                f"The language model refused the credential (HTTP {status}).",
                ProblemCode.AI_UNAUTHORIZED,
                provider=endpoint.provider,
                provider_status=status,
                provider_message=_message(form, response, endpoint),
            )
        if status >= 500:
            raise ProviderFailed(
                f"The language model failed (HTTP {status}).",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                provider_status=status,
                provider_message=_message(form, response, endpoint),
            )
        if 300 <= status < 400:
            raise ProviderFailed(
                f"The endpoint answered a redirect (HTTP {status}), which is not followed.",
                ProblemCode.AI_BAD_RESPONSE,
                provider=endpoint.provider,
                provider_status=status,
            )
        if status != 200:
            raise ProviderFailed(
                f"The language model answered HTTP {status}.",
                ProblemCode.AI_BAD_RESPONSE,
                provider=endpoint.provider,
                provider_status=status,
                provider_message=_message(form, response, endpoint),
            )
        try:
            reply: Reply = form.parse(response.json())
            return reply
        except ValueError as error:  # JSON or pydantic validation
            raise ProviderFailed(
                "The language model's answer is not what its wire format says: "
                f"{_first_line(str(error))}",
                ProblemCode.AI_BAD_RESPONSE,
                provider=endpoint.provider,
            ) from None


@dataclass(frozen=True)
class _Answer:
    """A provider's answer, read whole within the bounds."""

    status_code: int
    headers: httpx.Headers
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def _attempt(
    http: httpx.Client, call: HttpCall, limits: Limits, deadline_at: float, endpoint: Endpoint
) -> _Answer:
    """One request; its answer read within `limits.max_answer_bytes` and by `deadline_at`."""
    remaining = deadline_at - time.monotonic()
    with http.stream(
        "POST",
        call.url,
        content=json.dumps(call.body).encode(),
        headers=call.headers,
        timeout=min(limits.timeout, remaining),
    ) as response:
        status = response.status_code
        if status == 429 or (status in (503, 529) and _retry_after(response) is not None):
            return _Answer(status, response.headers, b"")  # waited on, not read
        # An error's body only lends its first line to the problem: a long one is cut, not refused
        # (a 401 stays a 401).
        cut = None if status == 200 else ERROR_BODY_BYTES
        body = _read(response, limits, deadline_at, endpoint, cut=cut)
        return _Answer(status, response.headers, body)


ERROR_BODY_BYTES = 64 * 1024


def _read(
    response: httpx.Response,
    limits: Limits,
    deadline_at: float,
    endpoint: Endpoint,
    *,
    cut: int | None = None,
) -> bytes:
    """The body, at most `limits.max_answer_bytes` (more: `ai.bad_response`) or, with `cut`,
    its first `cut` bytes; by `deadline_at` (later: `ai.unreachable`)."""
    # Loaded here, not at the ai and mcp functions' cold start.
    import httpx

    limit = limits.max_answer_bytes if cut is None else cut
    too_large = ProviderFailed(
        f"The language model's answer is larger than {limit} bytes; it was not read.",
        ProblemCode.AI_BAD_RESPONSE,
        provider=endpoint.provider,
        reason="too_large",
        limit=limit,
    )
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ProviderFailed(
            f"The language model's answer is compressed ({encoding[:40]}), which was not asked "
            "for.",
            ProblemCode.AI_BAD_RESPONSE,
            provider=endpoint.provider,
            reason="encoding",
        )
    declared = response.headers.get("content-length", "")
    if cut is None and declared.isdigit() and int(declared) > limit:
        raise too_large
    late = ProviderFailed(
        f"The language model did not finish its answer within {limits.deadline:g} s.",
        ProblemCode.AI_UNREACHABLE,
        provider=endpoint.provider,
        reason="deadline",
    )
    watchdog = _deadlines.watch(response, deadline_at)
    pieces: list[bytes] = []
    size = 0
    try:
        for piece in response.iter_raw():
            size += len(piece)
            if size > limit:
                if cut is None:
                    raise too_large
                pieces.append(piece[: len(piece) - (size - limit)])
                break
            if time.monotonic() > deadline_at:
                raise late
            pieces.append(piece)
    except httpx.HTTPError:
        if watchdog.fired:
            raise late from None
        raise
    finally:
        watchdog.cancel()
    if watchdog.fired:
        raise late
    return b"".join(pieces)


class _Watch:
    """One answer being read: the socket to shut down if its deadline passes first."""

    def __init__(self, sock: socket.socket | None) -> None:
        self.sock = sock
        self.fired = False
        self.done = False

    def cancel(self) -> None:
        self.done = True


class _Deadlines:
    """Ends reads that would outlast their deadline: httpx's read timeout bounds each wait for
    data, not their sum, and a body can stall after a trickle. Shutting the connection's socket
    down wakes the blocked read (the connection is not reused). One thread watches every read of
    the process (a thread per call would cost more than the rest of the client)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: list[tuple[float, int, _Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, response: httpx.Response, deadline_at: float) -> _Watch:
        stream = response.extensions.get("network_stream")
        watch = _Watch(stream.get_extra_info("socket") if stream is not None else None)
        with self._changed:
            sooner = not self._due or deadline_at < self._due[0][0]
            heapq.heappush(self._due, (deadline_at, next(self._order), watch))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="ai-answer-deadlines", daemon=True
                )
                self._thread.start()
            elif sooner:  # else the watcher wakes in time anyway: no thread switch per call
                self._changed.notify()
        return watch

    def _run(self) -> None:
        with self._changed:
            while True:
                while self._due and self._due[0][2].done:
                    heapq.heappop(self._due)
                if not self._due:
                    self._changed.wait()
                    continue
                wait = self._due[0][0] - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                _, _, watch = heapq.heappop(self._due)
                watch.fired = True
                if watch.sock is not None:
                    with contextlib.suppress(OSError):
                        watch.sock.shutdown(socket.SHUT_RDWR)


_deadlines = _Deadlines()


def _retry_after(response: httpx.Response | _Answer) -> float | None:
    """Seconds to wait, from `retry-after-ms`, `retry-after` (seconds or an HTTP date)."""
    milliseconds = response.headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _message(form: ModuleType, response: _Answer, endpoint: Endpoint) -> str | None:
    """The provider's own error message, short, and never with the key in it."""
    try:
        message = form.error_message(response.json())
    except ValueError:
        message = None
    if not message:
        return None
    if endpoint.api_key:
        message = message.replace(endpoint.api_key, "[redacted]")
    return _first_line(message)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:_MESSAGE_LIMIT]


def describe(endpoint: Endpoint) -> dict[str, Any]:
    """What may be shown of an endpoint (never the key)."""
    return {"provider": endpoint.provider, "model": endpoint.model, "url": endpoint.url}
