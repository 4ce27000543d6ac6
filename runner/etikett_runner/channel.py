"""The agent channel (`/api/v1/runner-agent/…` over mutual TLS): heartbeat, configuration,
claiming jobs and reporting on them. The Runner's client certificate is its only credential."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from etikett_runner.identity import client_context
from etikett_runner.transport import Refused, call

PREFIX = "/api/v1/runner-agent"
# Answers that mean this Runner's certificate no longer counts: it was removed or replaced.
REMOVED_CODES = frozenset(
    {
        "runner.removed",
        "runner.certificate_revoked",
        "runner.certificate_expired",
        "runner.certificate_invalid",
    }
)


class RunnerRemoved(Refused):
    """The service no longer accepts this Runner (removed by an admin, or its certificate)."""


class AgentChannel:
    def __init__(
        self,
        agent_url: str,
        certificate: Path,
        key: Path,
        ca_files: list[Path],
        timeout: float = 30.0,
    ) -> None:
        self.base = agent_url.rstrip("/") + PREFIX
        self._context = client_context(certificate, key, ca_files)
        self._timeout = timeout
        self._local = threading.local()  # one client per thread: the long poll blocks its own
        self._clients: list[httpx.Client] = []
        self._lock = threading.Lock()

    def _client(self) -> httpx.Client:
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(
                verify=self._context,
                timeout=httpx.Timeout(self._timeout, connect=10.0),
                trust_env=False,
                headers={"user-agent": "etikett-runner"},
            )
            self._local.client = client
            with self._lock:
                self._clients.append(client)
        return client

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return call(self._client(), method, self.base + path, **kwargs)
        except Refused as refused:
            if refused.status == 401 and refused.code in REMOVED_CODES:
                raise RunnerRemoved(refused.status, refused.code, refused.detail) from None
            raise

    def heartbeat(self, beat: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", "/heartbeat", json=beat))

    def config(self) -> dict[str, Any]:
        return dict(self._call("GET", "/config"))

    def claim(self, wait_seconds: int, max_jobs: int) -> list[dict[str, Any]]:
        body = {"wait_seconds": wait_seconds, "max_jobs": max_jobs}
        timeout = httpx.Timeout(wait_seconds + 20.0, connect=10.0)
        answer = self._call("POST", "/jobs/claim", json=body, timeout=timeout)
        return list(answer.get("jobs", []))

    def report(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", f"/jobs/{job_id}/report", json=body))

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()
