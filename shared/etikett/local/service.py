"""The whole service on one machine: moto's server with saved state (in a process of its own),
resources provisioned from template.yaml, the local gateway, the Runner agent channel (in another
process of its own), and the pollers of the SQS and DynamoDB stream event sources with the
functions they invoke (in a third)."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from etikett import settings
from etikett.local import logs, tls
from etikett.local import provision as provisioning
from etikett.local.agent_gateway import AgentGatewayPlan, LocalAgentGateway
from etikett.local.aws.process import LocalAwsProcess
from etikett.local.broker import BROKER_DIR, BrokerPlan, LocalBroker, mosquitto, prepare_publisher
from etikett.local.functions import FunctionRegistry
from etikett.local.gateway import Gateway, Router
from etikett.local.settings import LocalSettings
from etikett.local.stream_checkpoints import snapshot_time
from etikett.local.template import Template, load
from etikett.local.workers import LocalWorkers, WorkersPlan

logger = logging.getLogger("etikett.local")

LOCAL_REGION = "eu-central-1"
STATE_FILE = "aws-state.pickle"


MAX_QUEUE_WAIT_SECONDS = 20


class LocalService:
    def __init__(
        self,
        template_path: Path,
        home: Path,
        host: str = "127.0.0.1",
        port: int = 8000,
        agent_port: int | None = None,
        broker_port: int | None = None,
    ) -> None:
        self.template_path = template_path
        self.template: Template = load(template_path)
        self.home = home
        self.host = host
        self.port = port
        self.agent_port = agent_port if agent_port is not None else port + 443
        self.broker_port = broker_port if broker_port is not None else port + 883
        self.local = LocalSettings()
        # How often changed state is saved at most (a snapshot briefly holds every request).
        # In a process of its own: moto's work runs beside the gateway's, on another core.
        # Runners long-poll their queues here directly, for up to 20 s as on AWS (the waits
        # happen outside the state lock: aws/gateway.py).
        self.aws = LocalAwsProcess(
            home / STATE_FILE,
            snapshot_interval=self.local.snapshot_seconds,
            max_wait_seconds=MAX_QUEUE_WAIT_SECONDS,
        )
        self._server: Any = None  # the gateway's uvicorn server, once started
        self._server_thread: threading.Thread | None = None
        self.ca_file: Path | None = None
        # The event sources' pollers and the functions they invoke (the events publisher, the
        # webhook sender, data streams' rendering): on AWS other Lambda instances than the API's,
        # here another process than the gateway's, so that they do not hold its interpreter lock
        # while the next request runs.
        self.workers = LocalWorkers()
        # The agent channel (Runners' claims and reports): on AWS the Runner agent function's own
        # Lambda instances, here a process of its own beside the gateway's.
        self.agent = LocalAgentGateway()
        # Where idle Runners wait for wakes (AWS IoT Core on AWS): None without mosquitto, and
        # then Runners poll their queues all the time.
        self.broker: LocalBroker | None = LocalBroker() if mosquitto() else None
        self.functions: FunctionRegistry | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def agent_url(self) -> str:
        """The mutual-TLS endpoint Runners use (API Gateway's custom domain on AWS)."""
        return f"https://{self.host}:{self.agent_port}"

    def _configure_environment(self) -> None:
        # Dummy credentials: moto accepts any, and nothing may ever reach a real AWS account.
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_SESSION_TOKEN": "local",
                "AWS_REGION": LOCAL_REGION,
                "AWS_DEFAULT_REGION": LOCAL_REGION,
                "AWS_ENDPOINT_URL": self.aws.endpoint_url,
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_DISABLED": os.environ.get(
                    "POWERTOOLS_METRICS_DISABLED", "true"
                ),
                "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
            }
        )
        os.environ.pop("AWS_PROFILE", None)

    def start(self) -> None:
        """Start every part; if one cannot start, stop those that did (their pollers would
        otherwise log errors against a local AWS that is gone) and raise why."""
        try:
            self._start()
        except BaseException:
            try:
                self.stop()
            except Exception:  # the first failure is the one to report
                logger.debug("stopping after a failed start failed too", exc_info=True)
            raise

    def _start(self) -> None:
        import uvicorn  # loaded when the service starts serving, not by its other callers

        self.home.mkdir(parents=True, exist_ok=True)
        # Read before the AWS state loads: how far the stream checkpoints can be trusted depends
        # on the age of that state.
        snapshot_taken = snapshot_time(self.home / STATE_FILE)
        if self.broker is not None:  # local AWS publishes the service's wakes there
            os.environ[BROKER_DIR] = str(self.home / "broker")
        else:
            os.environ.pop(BROKER_DIR, None)
            logger.warning("mosquitto is not installed: Runners poll their queues all the time")
        self.aws.start()
        self._configure_environment()
        resolver = provisioning.provision(
            self.template,
            self.aws.endpoint_url,
            LOCAL_REGION,
            # Local models live on the developer's network: private addresses are allowed here,
            # unless ETIKETT_OUTGOING_PRIVATE_NETWORKS=false says otherwise (the fuzzing runs:
            # generated URLs must never reach beyond this machine). Setup needs no secret on the
            # developer's own machine (a deployed stack does), and the printer simulator runs on
            # loopback.
            {
                "Build": self.local.build,
                "OutgoingPrivateNetworks": _flag("ETIKETT_OUTGOING_PRIVATE_NETWORKS", "true"),
                "SetupSecret": "",
                "LoopbackPrinters": "true",
            },
        )
        os.environ.update(provisioning.function_environment(self.template, resolver))
        os.environ["ETIKETT_AGENT_URL"] = self.agent_url
        # The broker where Runners wait for wakes (the template names IoT Core's endpoint).
        os.environ["ETIKETT_RUNNER_WAKE_HOST"] = self.host if self.broker is not None else ""
        os.environ["ETIKETT_RUNNER_WAKE_PORT"] = str(self.broker_port)
        settings.reload()  # the functions' environment is complete only now
        # The child loads its functions while this process loads the gateway's, on another core.
        self.workers.start(
            WorkersPlan.of(
                self.template_path,
                self.home,
                self.aws.endpoint_url,
                resolver,
                snapshot_taken,
                logs.configured_format(),
            )
        )
        certificate, key, ca = tls.prepare(self.home)
        self.ca_file = ca
        if self.broker is not None:
            folder = self.home / "broker"
            prepare_publisher(folder, self.host, self.broker_port, ca)
            self.broker.start(
                BrokerPlan(
                    folder=str(folder),
                    host=self.host,
                    port=self.broker_port,
                    certificate=str(certificate),
                    key=str(key),
                    ca=str(ca),
                    topic_prefix=settings.get_settings().runner_wake_topic_prefix,
                )
            )
        self.agent.start(
            AgentGatewayPlan(
                template=str(self.template_path),
                region=LOCAL_REGION,
                host=self.host,
                port=self.agent_port,
                certificate=str(certificate),
                key=str(key),
                ca=str(ca),
                log_format=logs.configured_format(),
            )
        )
        self.functions = FunctionRegistry(self.template.functions, LOCAL_REGION)
        self.functions.warm_all()
        # Before the first request: the functions' loggers write `etikett dev`'s lines.
        logs.adopt_function_loggers()
        gateway = Gateway(Router(self.template.routes), self.functions)
        plain = uvicorn.Config(
            gateway,
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="off",
        )
        server = uvicorn.Server(plain)
        thread = threading.Thread(target=server.run, daemon=True, name="gateway")
        thread.start()
        self._server, self._server_thread = server, thread
        deadline = time.monotonic() + 15
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the local gateway could not listen on {self.url}")
            time.sleep(0.02)
        self.agent.ready()
        self.workers.ready()
        if self.broker is not None:
            self.broker.ready()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._server_thread is not None:
            self._server_thread.join(timeout=10)
        # The pollers before local AWS: what their functions publish must be in its final snapshot.
        try:
            try:
                self.agent.stop()
            finally:
                try:
                    self.workers.stop()
                finally:
                    if self.broker is not None:
                        self.broker.stop()
        finally:
            self.aws.stop()


def _flag(variable: str, default: str) -> str:
    """A template parameter's "true"/"false" from the environment, or `default`."""
    return "false" if os.environ.get(variable, default).strip().lower() == "false" else "true"
