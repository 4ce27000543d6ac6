"""Job bytes too large to travel inside the claim answer come as a presigned URL (valid an hour):
fetched once, with a few retries, into the spool.

Only from the service's own storage: the URL must have the origin (scheme, host and port) the
service's configuration names for job data, be HTTPS (plain HTTP only to loopback while the
service itself is on loopback: local mode), and goes through the pinned client of
`etikett_engine.outgoing` (every address the name resolves to checked, the connection pinned to one;
loopback and private addresses only where the Runner allows them), with no redirect followed
and at most `MAX_BYTES` read. So not even a compromised service can make the Runner fetch from
inside the site's network."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import httpx

from etikett_engine import outgoing
from etikett_runner import reach
from etikett_runner.backoff import Backoff
from etikett_runner.transport import RETRY_STATUSES

MAX_BYTES = 64 * 1024 * 1024
MAX_URL_LENGTH = (
    8192  # presigned with a session token, a URL passes outgoing's 2,048 for stored ones
)


class DataUnavailable(Exception):
    """The job's bytes could not be fetched (the URL expired, or the store kept failing)."""

    reason = "data_unavailable"


class DataRefused(DataUnavailable):
    """The URL is not one this Runner fetches job bytes from; the message says why."""

    reason = "data_refused"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port
    default = {"https": 443, "http": 80}.get(parts.scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def refusal(url: str, policy: reach.Reach) -> str | None:
    """Why this Runner does not fetch job bytes from `url`, or None."""
    try:
        # Addresses are checked on connect (the pinned client), where private ones may be refused.
        outgoing.check_url(url, private_allowed=True, max_length=MAX_URL_LENGTH)
        given = origin_of(url)
    except (outgoing.UrlRefused, ValueError) as refused:
        return f"the data URL is refused: {refused}"
    if policy.storage_origin is None:
        return "the service has not named its storage for job data (its configuration)"
    if given != origin_of(policy.storage_origin):
        return (
            f"the data URL's origin {given} is not the service's storage "
            f"({origin_of(policy.storage_origin)})"
        )
    if urlsplit(url).scheme != "https" and not policy.service_on_loopback:
        return "the data URL must be https:// (plain http:// only in local mode)"
    return None


def _private_allowed(url: str, policy: reach.Reach) -> bool:
    # Plain http:// is checked to be loopback on connect; it passed `refusal` only in local mode.
    return policy.outgoing_private_networks or urlsplit(url).scheme == "http"


def fetch(url: str, attempts: int = 4, timeout: float = 60.0, limit: int = MAX_BYTES) -> bytes:
    policy = reach.policy()
    why = refusal(url, policy)
    if why is not None:
        raise DataRefused(why)
    backoff = Backoff(base=1.0, cap=8.0, floor=0.5)
    problem = ""
    with outgoing.client(
        timeout=timeout,
        private_allowed=_private_allowed(url, policy),
        max_url_length=MAX_URL_LENGTH,
        headers={"user-agent": "etikett-runner"},
    ) as client:
        for attempt in range(1, attempts + 1):
            try:
                with client.stream("GET", url) as response:
                    if response.status_code >= 300:
                        problem = f"HTTP {response.status_code}"
                        if 300 <= response.status_code < 400:
                            raise DataRefused(f"{problem}: a redirect, never followed")
                        if response.status_code not in RETRY_STATUSES:
                            break  # expired or refused: asking again changes nothing
                    else:
                        declared = response.headers.get("content-length")
                        if declared is not None and declared.isdigit() and int(declared) > limit:
                            raise DataUnavailable(f"the job's bytes exceed {limit} bytes")
                        data = bytearray()
                        for chunk in response.iter_bytes():
                            data += chunk
                            if len(data) > limit:
                                raise DataUnavailable(f"the job's bytes exceed {limit} bytes")
                        return bytes(data)
            except outgoing.AddressRefused as refused:
                raise DataRefused(f"the data URL is refused: {refused}") from None
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < attempts:
                time.sleep(backoff.next())
    raise DataUnavailable(f"fetching the job's bytes failed: {problem}")
