"""`LocalAgentGateway`: the Runner agent channel (the API under mutual TLS, API Gateway's custom
domain on AWS) served by a Python process of its own, as on AWS, where the Runner agent function
runs in other Lambda instances than the API's.

In the gateway's process, a Runner's reports and claims held the same interpreter lock as the next
`POST /print`: prints back to back read 1.23–1.27× prints one at a time, and 1.03–1.05× once the
Runner's final report was held back 150 ms (bench/README.md). The child sees `etikett dev`'s
environment (the functions' variables, complete by then), reads its plan (the template, where to
listen, the TLS files) as one JSON line on its standard input, and prints `SERVING` once it
listens, or `FAILED <why>`.

Like the local workers it belongs to its parent: it ignores Ctrl-C and SIGTERM, and stops (after
the requests in hand) when its standard input closes, which also happens when the parent dies.

    python -m etikett.local.agent_gateway   (started by `LocalAgentGateway`, not by hand)
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from etikett.local import children

if TYPE_CHECKING:
    import threading

    import uvicorn

__all__ = ["AgentGatewayPlan", "LocalAgentGateway"]

READY = "SERVING"
FAILED = children.FAILED
# The agent function loads before it answers: on a loaded machine that takes a while.
_START_TIMEOUT = 120.0
# How long the server is given to finish the requests in hand once told to stop: after that the
# process ends anyway. uvicorn waits for every connection to close, and a Runner's idle
# keep-alive TLS connection held it past 30 s in a test (test_print_preflight's restart).
_GRACE = 10.0
_STOP_TIMEOUT = _GRACE + 20.0
# The paths of the agent channel's own routes: their functions load before the child answers,
# any other route's on its first request.
AGENT_ROUTES = "/api/v1/runner-agent/"


@dataclass(frozen=True)
class AgentGatewayPlan:
    """What the child needs besides the environment, sent as one JSON line."""

    template: str
    region: str
    host: str
    port: int
    certificate: str
    key: str
    ca: str
    log_format: str


class LocalAgentGateway(children.Child):
    """The agent channel's server in a child process, started by local mode once its functions'
    environment is complete and stopped right after the gateway."""

    module = "etikett.local.agent_gateway"
    name = "the Runner agent channel"
    ready_line = READY
    start_timeout = _START_TIMEOUT
    stop_timeout = _STOP_TIMEOUT


def _serve(plan: AgentGatewayPlan) -> tuple[uvicorn.Server, threading.Thread] | None:
    """The mutual-TLS server on a thread of its own, listening; None if it could not listen."""
    import ssl
    import threading

    import uvicorn

    from etikett.local import logs, tls
    from etikett.local.functions import FunctionRegistry
    from etikett.local.gateway import Gateway, Router
    from etikett.local.template import load

    logs.configure("json" if plan.log_format == "json" else "text")
    template = load(Path(plan.template))
    functions = FunctionRegistry(template.functions, plan.region)
    for function in sorted({r.function for r in template.routes if AGENT_ROUTES in r.path}):
        functions.handler(function)  # warm, as the gateway's functions are
    logs.adopt_function_loggers()
    config = uvicorn.Config(
        Gateway(Router(template.routes), functions),
        host=plan.host,
        port=plan.port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http=tls.ClientCertificateProtocol,
        ssl_certfile=plan.certificate,
        ssl_keyfile=plan.key,
        ssl_ca_certs=plan.ca,
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="agent-gateway")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return server, thread


def main() -> int:
    # Ctrl-C and systemd's SIGTERM reach the whole process group: the parent decides when.
    children.leave_stopping_to_the_parent()
    plan = AgentGatewayPlan(**json.loads(sys.stdin.readline()))
    serving = _serve(plan)
    if serving is None:
        print(f"{FAILED} could not listen on https://{plan.host}:{plan.port}", flush=True)
        return 1
    server, thread = serving
    try:
        children.ready_until_the_parent_closes(READY)
    finally:
        server.should_exit = True
        thread.join(_GRACE)  # a daemon thread: what it still waits for ends with the process
    return 0


if __name__ == "__main__":
    sys.exit(main())
