"""HTTP to the service: one exception for "try again later" (network, 5xx, 429) and one for an
answer that says no (an RFC 9457 problem with its `code`); nothing else escapes."""

from __future__ import annotations

from typing import Any

import httpx

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class ServerAway(Exception):
    """The service did not answer usefully now; the same request may succeed later.
    `reached` is False only when the request cannot have arrived (no connection was made);
    after a lost answer, a timeout or a 5xx it may have been acted on."""

    def __init__(self, message: str, *, reached: bool = True) -> None:
        super().__init__(message)
        self.reached = reached


class Refused(Exception):
    """The service refused the request (4xx) and will refuse it again."""

    def __init__(
        self, status: int, code: str, detail: str, params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.params = params or {}


def answer(response: httpx.Response) -> Any:
    """The JSON body of a 2xx answer; ServerAway or Refused otherwise."""
    if response.status_code in RETRY_STATUSES or response.status_code >= 500:
        raise ServerAway(f"{response.status_code} from {response.request.url.path}")
    if response.status_code >= 400:
        try:
            problem = response.json()
        except ValueError:
            problem = {}
        if not isinstance(problem, dict):
            problem = {}
        params = problem.get("params")
        raise Refused(
            response.status_code,
            str(problem.get("code") or f"http.{response.status_code}"),
            str(problem.get("detail") or problem.get("title") or response.text[:200]),
            params if isinstance(params, dict) else None,
        )
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise ServerAway(f"not JSON from {response.request.url.path}") from None


def call(client: httpx.Client, method: str, url: str, **kwargs: Any) -> Any:
    try:
        response = client.request(method, url, **kwargs)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # no byte of it went out
        raise ServerAway(f"{type(exc).__name__}: {exc}", reached=False) from exc
    except httpx.HTTPError as exc:  # read, write, protocol: all "try again later"
        raise ServerAway(f"{type(exc).__name__}: {exc}") from exc
    return answer(response)
