"""The agent channel (`/api/v1/runner-agent/…` over mutual TLS): heartbeat, configuration,
claiming jobs and reporting on them, deployed flows (what to run, progress, runs and their
prints). The Runner's client certificate is its only credential."""

from __future__ import annotations

import ssl
import threading
from pathlib import Path
from typing import Any

import httpx

from etikett_runner.identity import client_context
from etikett_runner.transport import Refused, call

PREFIX = "/api/v1/runner-agent"
# A flow print of 10,000 records takes the service a while (counters, archive entries).
_PRINT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
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
        # Clients (each with its kept-alive TLS connection) are lent to one call at a time, so
        # the long poll blocks only its own, and a short-lived thread (a job's `sent` report)
        # reuses an idle one instead of opening, and keeping, a connection of its own: a new
        # mutual-TLS handshake per print cost both sides CPU just when the next print runs.
        self._idle: list[httpx.Client] = []
        self._clients: list[httpx.Client] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def tls_context(self) -> ssl.SSLContext:
        """The Runner's certificate and the CAs it trusts (the wake channel uses them too)."""
        return self._context

    def _borrow(self) -> httpx.Client:
        with self._lock:
            if self._idle:
                return self._idle.pop()
            client = httpx.Client(
                verify=self._context,
                timeout=httpx.Timeout(self._timeout, connect=10.0),
                trust_env=False,
                headers={"user-agent": "etikett-runner"},
            )
            self._clients.append(client)
            return client

    def _give_back(self, client: httpx.Client) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(client)
                return
        client.close()  # closed meanwhile: a call that outlived close() closes its own client

    @property
    def clients(self) -> int:
        """How many clients (kept-alive connections at most) this channel has opened."""
        with self._lock:
            return len(self._clients)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        client = self._borrow()
        try:
            return call(client, method, self.base + path, **kwargs)
        except Refused as refused:
            if refused.status == 401 and refused.code in REMOVED_CODES:
                raise RunnerRemoved(
                    refused.status, refused.code, refused.detail, refused.params
                ) from None
            raise
        finally:
            self._give_back(client)

    def heartbeat(self, beat: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", "/heartbeat", json=beat))

    def config(self) -> dict[str, Any]:
        return dict(self._call("GET", "/config"))

    def claim(self, wait_seconds: int, max_jobs: int) -> list[dict[str, Any]]:
        body = {"wait_seconds": wait_seconds, "max_jobs": max_jobs}
        timeout = httpx.Timeout(wait_seconds + 20.0, connect=10.0)
        answer = self._call("POST", "/jobs/claim", json=body, timeout=timeout)
        return list(answer.get("jobs", []))

    def queue_access(self) -> dict[str, Any]:
        """Credentials for this Runner's own queue (see queue.py)."""
        return dict(self._call("POST", "/queue-access"))

    def claim_received(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Claim jobs received from the queue directly: [{receipt, delivery, body}]."""
        # The keeper reports each job within FIRST_EXTEND_AFTER_SECONDS (leases.py), well inside
        # the 20 s it was received hidden for: the claim need not hide it longer.
        body = {"messages": messages, "keeps_hidden": True}
        answer = self._call("POST", "/jobs/claim-received", json=body)
        return list(answer.get("jobs", []))

    def release_claims(self) -> list[str]:
        """At start: jobs an earlier process claimed (maybe never received) come back now."""
        return list(self._call("POST", "/jobs/release").get("job_ids", []))

    def report(self, job_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self._call("POST", f"/jobs/{job_id}/report", json=body))

    # --- deployed flows ---------------------------------------------------------------------

    def flows(self) -> list[dict[str, Any]]:
        """The flow versions this Runner's group is to run, each with its effective context and
        printer aliases."""
        return list(self._call("GET", "/flows"))

    def deployment_status(self, deployment_id: str, body: dict[str, Any]) -> None:
        self._call("POST", f"/deployments/{deployment_id}/status", json=body)

    def flow_run(self, body: dict[str, Any]) -> dict[str, Any]:
        """Record a run (the same run id is recorded once)."""
        return dict(self._call("POST", "/flow-runs", json=body))

    def flow_print(self, body: dict[str, Any]) -> dict[str, Any]:
        """One trigger event's records for one printer alias, through the print path
        (idempotent by the body's key): the job's id and status."""
        return dict(self._call("POST", "/flow-prints", json=body, timeout=_PRINT_TIMEOUT))

    def counter_block(self, body: dict[str, Any]) -> dict[str, Any]:
        """Reserve a block of a counter's values (idempotent by the body's block id)."""
        return dict(self._call("POST", "/counter-blocks", json=body))

    def offline_prints(self, body: dict[str, Any]) -> dict[str, Any]:
        """Upload prints made while the service was away ({"prints": […]}): each print's id
        with `accepted`, `already` or `refused`."""
        return dict(self._call("POST", "/offline-prints", json=body, timeout=_PRINT_TIMEOUT))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            clients, self._clients, self._idle = self._clients, [], []
        for client in clients:
            client.close()
