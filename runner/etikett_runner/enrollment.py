"""Enrolling: a new key in the state directory, its CSR exchanged with the one-time enrollment
token for a client certificate (`POST /api/v1/runner-enrollments`). An enrollment that needs an
admin's approval is polled (`GET /api/v1/runner-enrollments/{id}` with `X-Enrollment-Secret`)
with backoff until it is approved. The enrollment's id and secret are saved before anything else,
so a restart while waiting goes on waiting instead of needing a new token."""

from __future__ import annotations

import logging
import threading
from typing import Any

import httpx

from etikett_runner import __version__
from etikett_runner.backoff import Backoff
from etikett_runner.identity import (
    certificate_matches_key,
    certificate_request,
    create_key,
    server_context,
)
from etikett_runner.settings import Settings
from etikett_runner.state import StateDir
from etikett_runner.transport import Refused, ServerAway, call

log = logging.getLogger(__name__)

PATH = "/api/v1/runner-enrollments"


class EnrollmentFailed(Exception):
    """The service refused the enrollment (token used, expired or unknown; enrollment gone)."""


def _client(settings: Settings, state: StateDir) -> httpx.Client:
    return httpx.Client(
        base_url=settings.server_url,
        verify=server_context(settings.ca_files(state)),
        timeout=httpx.Timeout(30.0, connect=10.0),
        trust_env=False,
        headers={"user-agent": f"etikett-runner/{__version__}"},
    )


def _retrying(stop: threading.Event, what: str, attempt: Any, backoff: Backoff) -> Any:
    """`attempt()` until it answers; None if stopped. Refusals end it (EnrollmentFailed)."""
    while not stop.is_set():
        try:
            return attempt()
        except ServerAway as exc:
            delay = backoff.next()
            log.warning("%s: service unavailable (%s); again in %.1f s", what, exc, delay)
            stop.wait(delay)
        except Refused as exc:
            raise EnrollmentFailed(f"{what}: {exc.code}: {exc.detail}") from None
    return None


def _store(state: StateDir, answer: dict[str, Any]) -> None:
    state.certificate.write_text(answer["certificate_pem"], "ascii")
    if answer.get("ca_pem"):
        state.ca.write_text(answer["ca_pem"], "ascii")
    if answer.get("agent_url"):
        # Where the agent channel is: used unless --agent-url (or the config) says otherwise.
        state.write_json(state.service, {"agent_url": str(answer["agent_url"])})
    if not certificate_matches_key(state.certificate, state.key):
        state.certificate.unlink()
        raise EnrollmentFailed("the certificate the service issued is not for this Runner's key")


def ensure_enrolled(
    settings: Settings,
    state: StateDir,
    token: str | None,
    stop: threading.Event,
    hostname: str,
) -> bool:
    """True once the state directory holds a certificate; False if stopped while waiting."""
    if state.enrolled:
        return True
    pending = state.read_json(state.enrollment)
    with _client(settings, state) as client:
        if pending is None or not pending.get("secret"):
            if not token:
                raise EnrollmentFailed(
                    "this Runner is not enrolled yet: give --enrollment-token or "
                    "--enrollment-token-file"
                )
            if not state.key.exists():
                create_key(state.key)
            body = {
                "csr_pem": certificate_request(state.key, settings.name or hostname),
                "hostname": hostname[:255],
                "version": __version__,
            }
            if settings.name:
                body["name"] = settings.name[:200]

            def submit() -> Any:
                return call(
                    client, "POST", PATH, json=body, headers={"authorization": f"Bearer {token}"}
                )

            answer = _retrying(stop, "enrollment", submit, Backoff(base=1.0, cap=30.0))
            if answer is None:
                return False
            pending = {
                "id": answer["id"],
                "secret": answer["secret"],
                "runner_id": answer.get("runner_id"),
                "group_id": answer.get("group_id"),
                "status": answer.get("status"),
            }
            state.write_json(state.enrollment, pending, private=True)
            log.info("enrolled as %s (enrollment %s)", answer.get("runner_id"), answer["id"])
            if answer.get("certificate_pem"):
                _store(state, answer)
                return True
        log.info(
            "enrollment %s of Runner %s waits for an admin's approval",
            pending["id"],
            pending.get("runner_id"),
        )
        backoff = Backoff(base=1.0, cap=10.0, floor=0.5)
        while not stop.is_set():

            def poll() -> Any:
                return call(
                    client,
                    "GET",
                    f"{PATH}/{pending['id']}",
                    headers={"x-enrollment-secret": str(pending["secret"])},
                )

            answer = _retrying(stop, "enrollment status", poll, Backoff(base=1.0, cap=30.0))
            if answer is None:
                return False
            if answer.get("status") == "approved" and answer.get("certificate_pem"):
                _store(state, answer)
                state.write_json(state.enrollment, {**pending, "status": "approved"}, private=True)
                log.info("enrollment %s approved", pending["id"])
                return True
            stop.wait(backoff.next())
    return False
