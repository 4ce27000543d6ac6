"""The service's settings: what the template (or local mode) gives each function in its
environment, read once per process into one typed object. Nothing else reads the environment.

Names are the environment's: `ETIKETT_ASSETS_BUCKET` is `assets_bucket`; AWS's own variables keep
theirs (`AWS_REGION`, `AWS_ENDPOINT_URL_DYNAMODB`). Resources a function's template entry does not
give it are None, and `required(name)` says so clearly where one is needed.
"""

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ETIKETT_", env_ignore_empty=True, extra="ignore", frozen=True
    )

    # --- AWS --------------------------------------------------------------------------------------
    region: str = Field(
        default="eu-central-1", validation_alias=AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION")
    )
    dynamodb_endpoint: str | None = Field(
        default=None,
        validation_alias=AliasChoices("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"),
        description="Local mode and tests point at moto's server; on AWS this is None.",
    )
    trace_disabled: bool = Field(default=False, validation_alias="POWERTOOLS_TRACE_DISABLED")

    # --- tables (the template's `!Ref`s; defaults name the tables as local mode's tests did) ----
    users_table: str = "etikett-UsersTable"
    tokens_table: str = "etikett-TokensTable"
    audit_table: str = "etikett-AuditTable"
    labels_table: str = "etikett-LabelsTable"
    flows_table: str = "etikett-FlowsTable"
    deployments_table: str = "etikett-DeploymentsTable"
    policies_table: str = "etikett-PoliciesTable"
    events_table: str = "etikett-EventsTable"
    webhooks_table: str = "etikett-WebhooksTable"
    webhook_deliveries_table: str = "etikett-WebhookDeliveriesTable"
    counters_table: str = "etikett-CountersTable"
    archive_table: str = "etikett-ArchiveTable"
    runners_table: str = "etikett-RunnersTable"
    printers_table: str = "etikett-PrintersTable"
    jobs_table: str = "etikett-JobsTable"
    credentials_table: str = "etikett-CredentialsTable"
    idempotency_table: str | None = None

    # --- queues, buckets, keys --------------------------------------------------------------------
    assets_bucket: str | None = None
    ca_kms_key: str | None = None
    webhook_secrets_key: str | None = None
    credentials_key: str | None = None
    print_render_queue: str | None = None
    webhook_deliveries_queue: str | None = None
    runner_queue_prefix: str = "etikett-runner"
    runner_dlq_arn: str | None = None
    runner_queue_role_arn: str | None = Field(
        default=None,
        description="The role whose credentials, narrowed to one queue by a session policy, "
        "Runners long-poll their own queue with (the template's RunnerQueueRole).",
    )
    runner_queue_credential_seconds: int = Field(
        default=3600,
        ge=900,
        le=3600,
        description="Lifetime of a Runner's queue credentials (STS: 15 min to 1 h when chained).",
    )
    runner_wake_host: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9.:-]+$",
        description="The MQTT broker where an idle Runner waits for a wake instead of polling its "
        "queue (docs/scale.md): AWS IoT Core's data endpoint (`iot:Data-ATS`), which also takes "
        "the service's Publish over HTTPS; None: Runners long-poll their queues all the time.",
    )
    runner_wake_port: int = Field(default=8883, ge=1, le=65535, description="MQTT over TLS.")
    runner_wake_topic_prefix: str = Field(
        default="etikett-wake",
        pattern=r"^[A-Za-z0-9_-]+$",
        description="A Runner's wake topic is `<prefix>-<runner id>` (the template: the stack's "
        "name, so that the functions may publish to their own stack's Runners only).",
    )
    runner_wake_policy: str | None = Field(
        default=None,
        description="The IoT policy each Runner's certificate is registered with in AWS IoT Core "
        "(connect as its id, read its own wake topic); None: certificates are not registered "
        "(local mode's broker trusts the service CA itself).",
    )
    runner_awake_seconds: int = Field(
        default=120,
        ge=1,
        le=3600,
        description="How long a Runner that was woken (or claimed work) keeps polling its queue "
        "before it waits for a wake again. Below runner_wakes.MARGIN (30 s) the service wakes it "
        "for every message (tests shorten it so).",
    )
    runner_package_dir: Path | None = None
    print_render_processes: int = Field(
        default=1,
        ge=1,
        le=8,
        description="Processes the print-render function renders a long job's labels in at once "
        "(one per vCPU it has: the template gives it two).",
    )

    # --- behaviour --------------------------------------------------------------------------------
    build: str = "local"
    agent_url: str | None = Field(
        default=None,
        description="The agent channel's mutual-TLS URL that enrollment hands to Runners (local "
        "mode: the local gateway's verifying HTTPS port; on AWS: the custom domain).",
    )
    agent_domain: str | None = Field(
        default=None,
        description="On AWS: the agent channel's custom domain with mutual TLS (the template's "
        "AgentDomainName); `agent_url` is https:// on it unless given itself.",
    )
    runner_offline_seconds: int = Field(
        default=1500,
        ge=2,
        description="A Runner not heard from for this long is offline (Runners beat every "
        "10 min while idle, and at once when a printer's status changes: docs/scale.md).",
    )
    setup_secret: SecretStr | None = Field(
        default=None,
        description="What first-time setup asks for (the template's SetupSecret, required on a "
        "deployed stack); local mode passes none and needs none.",
    )
    session_ttl_seconds: int = Field(default=43_200, ge=60)
    login_max_failures: int = Field(
        default=5,
        ge=1,
        description="Failed logins per (username, client address) before attempts must wait.",
    )
    login_backoff_seconds: float = Field(
        default=30, gt=0, description="The first wait; each further failure doubles it."
    )
    login_backoff_max_seconds: float = Field(
        default=900, gt=0, description="The longest wait between two attempts."
    )
    webhook_max_attempts: int = Field(default=12, ge=1)
    import_max_bytes: int = Field(
        default=2 * 1024 * 1024, ge=1024, description="Largest file postImport accepts (413)."
    )
    import_max_expanded_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        description="What a compressed import (gzip, ^GF Z64) may expand to in all (413/422).",
    )

    @model_validator(mode="before")
    @classmethod
    def _agent_url_from_domain(cls, values: Any) -> Any:
        if isinstance(values, dict) and values.get("agent_domain") and not values.get("agent_url"):
            return {**values, "agent_url": f"https://{values['agent_domain']}"}
        return values

    loopback_printers: bool = Field(
        default=False,
        description="Whether printers and discovery targets may be on loopback (the printer "
        "simulator on a developer's machine): the template parameter LoopbackPrinters, on in "
        "local mode only. Loopback printers may use any port.",
    )
    discovery_interval_seconds: float = Field(
        default=20, ge=0, description="After its burst, a Runner discovers once per this long."
    )
    discovery_burst: int = Field(
        default=3, ge=1, description="Discoveries a Runner may start at once."
    )
    outgoing_private_networks: bool = Field(
        default=False,
        description="Whether the service's own HTTP requests (webhooks, language models) may go "
        "to loopback and private addresses (127/8, 10/8, 192.168/16, …): the template parameter "
        "OutgoingPrivateNetworks, off unless an admin turns it on; local mode turns it on. "
        "Link-local never.",
    )
    ai_timeout_seconds: float = Field(
        default=20.0, gt=0, description="How long one request to a language model may take."
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The environment (and keyword arguments) only: no function reads a dotenv file or a
        secrets directory, and not building those sources saves every cold start a millisecond."""
        return init_settings, env_settings

    def required(self, name: str) -> str:
        """The value of setting `name`, which this function cannot work without."""
        value = getattr(self, name)
        if value is None:
            variable = f"ETIKETT_{name.upper()}"
            raise RuntimeError(f"{variable} is not set (see template.yaml Globals)")
        return str(value)


@cache
def get_settings() -> Settings:
    """The settings of this process, read from the environment on first use."""
    return Settings()


def reload() -> Settings:
    """Read the environment again: local mode and test stacks set it after start-up."""
    get_settings.cache_clear()
    return get_settings()
