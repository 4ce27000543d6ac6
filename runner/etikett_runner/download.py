"""Job bytes too large to travel inside the claim answer come as a presigned URL (valid an hour):
fetched once, with a few retries, into the spool."""

from __future__ import annotations

import time

import httpx

from etikett_runner.backoff import Backoff
from etikett_runner.transport import RETRY_STATUSES

MAX_BYTES = 64 * 1024 * 1024


class DataUnavailable(Exception):
    """The job's bytes could not be fetched (the URL expired, or the store kept failing)."""


def fetch(url: str, attempts: int = 4, timeout: float = 60.0, limit: int = MAX_BYTES) -> bytes:
    backoff = Backoff(base=1.0, cap=8.0, floor=0.5)
    problem = ""
    for attempt in range(1, attempts + 1):
        try:
            with (
                httpx.Client(timeout=timeout, trust_env=False) as client,
                client.stream("GET", url) as response,
            ):
                if response.status_code >= 400:
                    problem = f"HTTP {response.status_code}"
                    if response.status_code not in RETRY_STATUSES:
                        break  # expired or refused: asking again changes nothing
                else:
                    data = bytearray()
                    for chunk in response.iter_bytes():
                        data += chunk
                        if len(data) > limit:
                            raise DataUnavailable(f"the job's bytes exceed {limit} bytes")
                    return bytes(data)
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if attempt < attempts:
            time.sleep(backoff.next())
    raise DataUnavailable(f"fetching the job's bytes failed: {problem}")
