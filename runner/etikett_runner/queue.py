"""The Runner's own job queue, long-polled directly with short-lived credentials for that queue
alone (asked for over the agent channel with the client certificate): while the Runner waits
for work, nothing of the service runs. Jobs it receives are claimed over the agent channel;
notices (configuration changed) are read and deleted here."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from etikett_runner.channel import AgentChannel
from etikett_runner.transport import Refused, ServerAway

log = logging.getLogger(__name__)

# A received message stays hidden this long until the service's claim hides it for the queue's
# 120 s: a message a killed process's long poll took (its answer never read) is back this soon.
RECEIVE_VISIBILITY_SECONDS = 20
RENEW_BEFORE = timedelta(minutes=10)  # credentials are asked for again this long before expiry
# Errors that mean the credentials no longer reach the queue: ask the service again (which
# refuses a removed Runner: RunnerRemoved).
_ASK_AGAIN = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "AWS.SimpleQueueService.NonExistentQueue",
        "QueueDoesNotExist",
        "SignatureDoesNotMatch",
    }
)


class NoDirectAccess(Exception):
    """The service hands out no queue credentials: claim through the agent channel instead."""


@dataclass(frozen=True)
class Received:
    """A message as the queue delivered it."""

    receipt: str
    delivery: int
    body: dict[str, Any]

    @property
    def notice(self) -> str | None:
        value = self.body.get("notice")
        return value if isinstance(value, str) and "job_id" not in self.body else None


class RunnerQueue:
    """`received`: a file naming the receipts of messages received but not yet claimed, so that
    a process killed between its receive and its claim has them given back by the next one at
    once (else they would stay hidden for the queue's 120 s visibility timeout)."""

    def __init__(self, channel: AgentChannel, received: Path | None = None) -> None:
        self.channel = channel
        self._received = received
        self._left_over = True  # receipts of an earlier process are given back once
        self._lock = threading.Lock()
        self._client: Any = None
        self._access: dict[str, Any] = {}
        self._expires = datetime.min.replace(tzinfo=UTC)
        self.heartbeat_seconds: float | None = None  # what the service asks for
        self.wake: dict[str, Any] | None = None  # where to wait for wakes (None: poll)

    # --- credentials ----------------------------------------------------------------------------

    def _renew(self) -> None:
        try:
            access = self.channel.queue_access()
        except Refused as refused:
            if refused.code == "runner.queue_access_unavailable":
                raise NoDirectAccess() from None
            raise
        import botocore.config
        import botocore.session

        session = botocore.session.Session()
        client = session.create_client(
            "sqs",
            region_name=access["region"],
            endpoint_url=access.get("endpoint_url") or None,
            aws_access_key_id=access["access_key_id"],
            aws_secret_access_key=access["secret_access_key"],
            aws_session_token=access["session_token"],
            config=botocore.config.Config(
                connect_timeout=10,
                read_timeout=int(access.get("wait_seconds", 20)) + 20,
                retries={"max_attempts": 2, "mode": "standard"},
                max_pool_connections=4,
            ),
        )
        with self._lock:
            self._client, self._access = client, access
            self._expires = datetime.fromisoformat(str(access["expires_at"]))
            self.heartbeat_seconds = float(access.get("heartbeat_seconds") or 0) or None
            wake = access.get("wake")
            self.wake = dict(wake) if isinstance(wake, dict) else None

    def _ready(self) -> Any:
        with self._lock:
            fresh = self._client is not None and datetime.now(UTC) < self._expires - RENEW_BEFORE
        if not fresh:
            self._renew()
        return self._client

    # --- the queue ------------------------------------------------------------------------------

    def receive(self, wait_seconds: int, max_messages: int) -> list[Received]:
        """Wait up to `wait_seconds` for messages. ServerAway when AWS or the service is away;
        RunnerRemoved (from the channel) when the service no longer accepts this Runner. The
        caller calls `settled()` once it claimed or gave back what it received."""
        if self._left_over:
            self._give_back_left_over()
        for attempt in (1, 2):
            client = self._ready()
            try:
                answer = client.receive_message(
                    QueueUrl=self._access["queue_url"],
                    WaitTimeSeconds=wait_seconds,
                    MaxNumberOfMessages=max_messages,
                    VisibilityTimeout=RECEIVE_VISIBILITY_SECONDS,
                    MessageSystemAttributeNames=["ApproximateReceiveCount"],
                )
            except Exception as error:
                code = _error_code(error)
                if code in _ASK_AGAIN and attempt == 1:
                    log.info("queue: %s; asking for fresh credentials", code)
                    with self._lock:
                        self._client = None
                    continue
                if not code:  # not an answer of SQS (no connection): where it answers may
                    with self._lock:  # have moved (local mode restarted): ask again next time
                        self._client = None
                raise ServerAway(f"queue: {code or type(error).__name__}") from error
            received = [_received(m) for m in answer.get("Messages", [])]
            if received and self._received is not None:
                self._received.write_text(json.dumps([r.receipt for r in received]))
            return received
        raise ServerAway("queue: refused twice")

    def settled(self) -> None:
        """What the last receive got is claimed (journaled) or given back."""
        if self._received is not None:
            self._received.unlink(missing_ok=True)

    def _give_back_left_over(self) -> None:
        if self._received is not None and self._received.exists():
            try:
                receipts = [str(r) for r in json.loads(self._received.read_text())]
            except ValueError:
                receipts = []
            if receipts:
                log.info(
                    "queue: %d message(s) received before a restart, visible again", len(receipts)
                )
                self.give_back(receipts)
            self.settled()
        self._left_over = False

    def give_back(self, receipts: list[str]) -> None:
        """Messages the Runner could not hand on: visible again at once, not after 120 s."""
        for receipt in receipts:
            self._quietly("change_message_visibility", ReceiptHandle=receipt, VisibilityTimeout=0)

    def delete(self, receipt: str) -> None:
        self._quietly("delete_message", ReceiptHandle=receipt)

    def _quietly(self, operation: str, **kwargs: Any) -> None:
        try:
            getattr(self._ready(), operation)(QueueUrl=self._access["queue_url"], **kwargs)
        except (ServerAway, Refused):
            raise
        except Exception as error:  # the message comes back after its visibility timeout
            log.debug("queue: %s failed: %s", operation, _error_code(error) or error)


def _error_code(error: Exception) -> str:
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return ""
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    code = str(response.get("Error", {}).get("Code", ""))
    # A refusal in another protocol's shape (moto answers IAM errors as XML) has only its status.
    return "AccessDenied" if status == 403 and code in ("", "403") else code


def _received(message: dict[str, Any]) -> Received:
    try:
        body = json.loads(message.get("Body", ""))
    except ValueError:
        body = {}
    delivery = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
    return Received(str(message["ReceiptHandle"]), delivery, body if isinstance(body, dict) else {})
