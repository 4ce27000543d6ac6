"""How an idle Runner waits for work without holding a Lambda: it long-polls its own SQS queue
with short-lived credentials for that queue alone (handed out here to its client certificate)
and hands what it received to `claim_received`, which claims exactly as the agent channel's own
long poll does. Why this design and what it costs: docs/scale.md."""

from __future__ import annotations

import logging

from etikett import clock
from etikett.domain.agent import claims, runner_messages
from etikett.domain.agent.runner_messages import (
    MAX_WAIT_SECONDS,
    ClaimReceived,
    QueueAccess,
    WakeChannel,
)
from etikett.settings import get_settings
from etikett.store import runner_queue_access, runner_queues, runner_wakes
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import CertificateRefused, Conflict, ProblemCode

log = logging.getLogger(__name__)

# The service counts a Runner offline after this many missed beats.
OFFLINE_AFTER_BEATS = 2.5


def heartbeat_seconds() -> int:
    return max(1, int(get_settings().runner_offline_seconds / OFFLINE_AFTER_BEATS))


def queue_access(runner: RunnerRecord, certificate_pem: str | None = None) -> QueueAccess:
    """Fresh credentials for the Runner's queue. Asked for by a current certificate only
    (`identify`); a removed Runner's queue is deleted with it, so credentials it still holds
    reach nothing from that moment, and it gets no new ones."""
    if not runner.queue_url:
        raise CertificateRefused(
            "The Runner of this certificate was removed.", ProblemCode.RUNNER_REMOVED
        )
    # The session name shows in CloudTrail: which Runner, under which certificate.
    session = f"{runner.id}-{runner.certificate_serial or ''}"[:64]
    try:
        issued = runner_queue_access.issue(
            runner.queue_url, session, get_settings().runner_queue_credential_seconds
        )
    except runner_queue_access.NoQueueRole:
        raise Conflict(
            "This deployment hands out no queue credentials; claim through the agent channel.",
            ProblemCode.RUNNER_QUEUE_ACCESS_UNAVAILABLE,
        ) from None
    if not runner_store.touch_runner(runner.id, last_seen_at=clock.now()):
        raise CertificateRefused(
            "The Runner of this certificate was removed.", ProblemCode.RUNNER_REMOVED
        )
    return QueueAccess(
        queue_url=issued.queue_url,
        region=issued.region,
        endpoint_url=issued.endpoint_url,
        access_key_id=issued.access_key_id,
        secret_access_key=issued.secret_access_key,
        session_token=issued.session_token,
        expires_at=clock.rfc3339(issued.expires_at),
        wait_seconds=MAX_WAIT_SECONDS,
        heartbeat_seconds=heartbeat_seconds(),
        wake=wake_channel(runner, certificate_pem),
    )


# An idle Runner waiting for wakes: its connection's keep-alive, and how often it looks at its
# queue anyway in case a wake was lost (docs/scale.md counts both).
WAKE_KEEPALIVE_SECONDS = 300
WAKE_LOOK_SECONDS = 300


def wake_channel(runner: RunnerRecord, certificate_pem: str | None) -> WakeChannel | None:
    """Where the Runner waits for wakes; None (it polls its queue) where the service has no
    broker, or IoT Core did not take its certificate (tried again at its next ask)."""
    settings = get_settings()
    if not settings.runner_wake_host:
        return None
    if settings.runner_wake_policy and not runner.wake_certificate_id:
        if not certificate_pem:
            return None
        try:
            certificate_id = runner_wakes.register(certificate_pem, settings.runner_wake_policy)
        except Exception:  # the Runner polls its queue meanwhile
            log.warning("Runner %s: certificate not registered for wakes", runner.id, exc_info=True)
            return None
        if not runner_store.touch_runner(runner.id, wake_certificate_id=certificate_id):
            runner_wakes.deactivate(certificate_id)  # removed meanwhile
            return None
    return WakeChannel(
        host=settings.runner_wake_host,
        port=settings.runner_wake_port,
        topic=runner_wakes.topic(runner.id),
        client_id=runner.id,
        keepalive_seconds=WAKE_KEEPALIVE_SECONDS,
        look_seconds=WAKE_LOOK_SECONDS,
    )


def claim_received(runner: RunnerRecord, request: ClaimReceived) -> runner_messages.Claimed:
    """Claim the jobs the Runner received from its queue: the same conditional writes as a
    claim through the channel's long poll (a finished, cancelled or other Runner's job is
    dropped from the queue, never handed out). A message that is no job leaves the queue."""
    if not runner.queue_url:
        return runner_messages.Claimed(jobs=[])
    received = []
    for message in request.messages:
        item = runner_queues.parse(message.body, message.receipt, message.delivery)
        if item is None:
            runner_queues.acknowledge(runner.queue_url, message.receipt)
        else:
            received.append(item)
    claimed = claims.claim_each(runner, clock.now(), received)
    # The Runner received them hidden for a short while only (a long poll of a process killed
    # meanwhile gives its message back soon). A Runner whose keeper reports a job within that
    # while has its reports extend it (runner_agent.EXTEND_AFTER); else the claim hides them for
    # the queue's timeout.
    if not request.keeps_hidden:
        for job in claimed.jobs:
            runner_queues.extend(runner.queue_url, job.receipt)
    return claimed
