"""What a Runner and the service say to each other on the agent channel: the requests and
answers of heartbeats, claims, reports, releases and the configuration."""

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, ConfigDict, Field

from etikett_engine.model import Model

MAX_WAIT_SECONDS = 20  # API Gateway answers within 30 s


class OfflineReport(Model):
    """What a Runner printed without the service and has not synced yet."""

    model_config = ConfigDict(extra="forbid")
    unsynced_labels: int = Field(default=0, ge=0, le=10_000_000)
    oldest_unsynced_at: datetime | None = Field(
        default=None, description="When the oldest label not synced yet was printed."
    )


class Heartbeat(Model):
    model_config = ConfigDict(extra="forbid")
    offline: OfflineReport | None = Field(
        default=None, description="Labels printed offline not synced yet (Runners that print)."
    )
    hostname: str | None = Field(default=None, max_length=255)
    version: str | None = Field(default=None, max_length=64)
    printers: list[dict[str, Any]] = Field(
        default_factory=list,
        max_length=100,
        description="[{printer_id, status}] as the Runner last read them.",
    )
    awake: bool = Field(
        default=False,
        description="A Runner that waits for wakes: it polls its queue for the next "
        "`awake_seconds` (answered), and is woken for what arrives after that.",
    )


class HeartbeatAnswer(Model):
    runner_id: str
    server_time: str
    status: str
    awake_seconds: int | None = Field(
        default=None,
        description="With `awake`: how long from this answer the Runner promised to poll its "
        "queue; the service wakes it for what is sent later.",
    )


class ClaimRequest(Model):
    model_config = ConfigDict(extra="forbid")
    wait_seconds: int = Field(default=MAX_WAIT_SECONDS, ge=0, le=MAX_WAIT_SECONDS)
    max_jobs: int = Field(default=1, ge=1, le=10)


class ClaimedJob(Model):
    job_id: str
    kind: str
    receipt: str = Field(description="Return it with every report of this job.")
    delivery: int = Field(description="How often the queue has delivered this job (1 = first).")
    payload: dict[str, Any]
    data_base64: str | None = None
    data_url: str | None = Field(
        default=None,
        description="Large data: a presigned GET URL (valid 1 h) instead of data_base64.",
    )


class Claimed(Model):
    jobs: list[ClaimedJob]


class ReportedMessage(Model):
    model_config = ConfigDict(extra="forbid")
    level: Literal["info", "warning", "error"] = "info"
    text: str = Field(max_length=2000)


class EarlierReport(Model):
    """A non-final report the Runner held back for a moment and sends with the next one (a
    print whose printer confirms at once reports `sent` and `confirmed` in one request)."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["running", "held", "sent"] | None = None
    reason: str | None = Field(default=None, max_length=200)
    at: AwareDatetime | None = Field(default=None, description="When the Runner made it.")
    # Fewer than a report's own 50: a request adds at most 90 messages to its job's item.
    messages: list[ReportedMessage] = Field(default_factory=list, max_length=10)


class JobReport(Model):
    model_config = ConfigDict(extra="forbid")
    earlier: list[EarlierReport] = Field(
        default_factory=list,
        max_length=4,
        description="Reports made before this one and not sent yet, oldest first: recorded "
        "before it, each with its own event, in the same transaction.",
    )
    receipt: str | None = Field(default=None, max_length=4096)
    status: Literal["running", "held", "sent", "confirmed", "succeeded", "failed"] | None = None
    reason: str | None = Field(
        default=None, max_length=200, description="Why held or failed: paper_out, head_open, …"
    )
    final: bool = Field(default=False, description="No further reports will follow.")
    result: dict[str, Any] | None = None
    messages: list[ReportedMessage] = Field(default_factory=list, max_length=50)


class RunnerConfig(Model):
    runner_id: str
    name: str
    group_id: str
    context: dict[str, Any]
    printers: list[dict[str, Any]]
    printer_ports: list[int] = Field(
        default_factory=list,
        description="Ports the group allows its printers besides 9100, 6101 and 515.",
    )
    poll_wait_seconds: int = MAX_WAIT_SECONDS
    data_origin: str | None = Field(
        default=None,
        description="scheme://host[:port] of the URLs large job data comes from (`data_url`): "
        "the service's own storage, the only place the Runner fetches job bytes from.",
        examples=["https://etikett-assets-123456789012.s3.eu-central-1.amazonaws.com"],
    )
    bundle_public_key: str | None = Field(
        default=None,
        description="The Ed25519 public key (PEM) deployment bundles are signed with: the "
        "Runner pins the first it sees in its state directory and verifies every bundle by it.",
    )


class Released(Model):
    job_ids: list[str] = Field(description="Jobs whose latest claim was made claimable again.")


class WakeChannel(Model):
    """An MQTT broker (AWS IoT Core) over TLS with the Runner's client certificate: the Runner
    subscribes to `topic` and looks at its queue when a message arrives there."""

    host: str
    port: int
    topic: str
    client_id: str = Field(description="Connect as this client (the Runner's id).")
    keepalive_seconds: int = Field(description="MQTT keep-alive: an idle connection's pings.")
    look_seconds: int = Field(
        description="An idle Runner looks at its queue at least this often (a wake may be lost)."
    )


class QueueAccess(Model):
    """Credentials for the Runner's own queue and nothing else; the Runner long-polls it with
    them (no Lambda waits for it) and asks again before `expires_at`."""

    queue_url: str
    region: str
    endpoint_url: str | None = Field(
        default=None, description="Where SQS answers (local mode); None: the region's endpoint."
    )
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at: str
    wait_seconds: int = MAX_WAIT_SECONDS
    heartbeat_seconds: int = Field(
        description="How often an idle Runner beats at least: the service counts it offline "
        "after 2.5 times this."
    )
    wake: WakeChannel | None = Field(
        default=None,
        description="Where an idle Runner waits for wakes instead of polling its queue; None: "
        "it polls its queue all the time.",
    )


class ReceivedMessage(Model):
    model_config = ConfigDict(extra="forbid")
    receipt: str = Field(max_length=4096)
    delivery: int = Field(ge=1, le=1000, description="SQS's ApproximateReceiveCount.")
    body: str = Field(
        max_length=300_000,
        description="The message body as received; the Runner may leave out data_base64 (it "
        "keeps the bytes itself).",
    )


class ClaimReceived(Model):
    """Jobs the Runner received from its queue itself, for the service to claim."""

    model_config = ConfigDict(extra="forbid")
    messages: list[ReceivedMessage] = Field(min_length=1, max_length=10)
    keeps_hidden: bool = Field(
        default=False,
        description="The Runner's keeper reports a job within 10 s of receiving it, so the "
        "claim need not hide the job for the queue's timeout: most jobs end within the 20 s "
        "it was received hidden for, and their claim makes no queue call.",
    )
