"""Calling a language model: one request in its wire format, through the pinned outgoing client,
with a timeout per attempt, a deadline for the whole call, and bounded retries that honour
`retry-after` (and `retry-after-ms`) on 429. Every failure is a `ProviderFailed` with its problem
code; nothing here ever raises anything else for a provider's behaviour."""

from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from etikett.ai import anthropic_messages, generic_json, openai_chat
from etikett.ai.conversation import WITH_TOOLS, Endpoint, HttpCall, Reply, Request
from etikett.errors import ProblemCode, ProviderFailed, RateLimited

if TYPE_CHECKING:
    import httpx

FORMATS: dict[str, ModuleType] = {
    "anthropic-messages": anthropic_messages,
    "openai-chat": openai_chat,
    "generic-json": generic_json,
}
USER_AGENT = "Etikett-AI/1"
_MESSAGE_LIMIT = 300


@dataclass(frozen=True)
class Limits:
    timeout: float = 20.0  # one attempt
    deadline: float = 25.0  # the whole call, retries and waits included (API Gateway: 30 s)
    retries: int = 2  # attempts after the first, only on 429 (or 503/529 with retry-after)
    max_wait: float = 10.0  # a longer retry-after is not waited for: 503 ai.rate_limited


def supports_tools(endpoint: Endpoint) -> bool:
    return endpoint.provider in WITH_TOOLS


def wire(endpoint: Endpoint, request: Request) -> HttpCall:
    """The HTTP request `request` becomes for `endpoint`'s provider."""
    call: HttpCall = FORMATS[endpoint.provider].build(endpoint, request)
    return call


_clients: dict[bool, httpx.Client] = {}
_clients_lock = threading.Lock()


def _client(private_allowed: bool) -> httpx.Client:
    # One per process: making one loads the trust store (tens of ms).
    from etikett import outgoing

    with _clients_lock:
        if private_allowed not in _clients:
            _clients[private_allowed] = outgoing.client(
                timeout=Limits.timeout,
                private_allowed=private_allowed,
                headers={"user-agent": USER_AGENT},
            )
        return _clients[private_allowed]


def complete(
    endpoint: Endpoint,
    request: Request,
    *,
    limits: Limits | None = None,
    private_allowed: bool | None = None,
) -> Reply:
    """The model's reply to `request`, or `ProviderFailed` (`ai.*`)."""
    import httpx

    from etikett import outgoing

    limits = limits or Limits()
    if private_allowed is None:
        private_allowed = outgoing.private_networks_allowed()
    call = wire(endpoint, request)
    form = FORMATS[endpoint.provider]
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
            response = _client(private_allowed).post(
                call.url,
                content=json.dumps(call.body).encode(),
                headers=call.headers,
                timeout=min(limits.timeout, remaining),
            )
        except outgoing.AddressRefused as refused:
            raise ProviderFailed(
                f"The endpoint is refused: {refused}.",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                reason="address_refused",
            ) from None
        except httpx.TimeoutException:
            raise ProviderFailed(
                f"The language model did not answer within {min(limits.timeout, remaining):g} s.",
                ProblemCode.AI_UNREACHABLE,
                provider=endpoint.provider,
                reason="timeout",
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


def _retry_after(response: httpx.Response) -> float | None:
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


def _message(form: ModuleType, response: httpx.Response, endpoint: Endpoint) -> str | None:
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
