"""`LocalWorkers`: local mode's event-source work (the SQS and DynamoDB stream pollers and the
functions they invoke) in a Python process of its own, as on AWS, where it runs in other Lambda
instances than the API's.

In the gateway's process that work (two events a print handed to the events publisher, webhook
deliveries, data streams rendered) took about an eighth of its interpreter lock during prints back
to back, just when the next print's request needed it. Here it runs beside the gateway, on another
core. The child sees the functions' environment (`etikett dev`'s, inherited), reads its plan (the
template, the provisioned resources' names, the state's age for the checkpoints) as one JSON line
on its standard input, and prints `WORKING` once its pollers run.

Like local AWS's process it belongs to its parent: it ignores Ctrl-C and SIGTERM, and stops (the
stream pollers first, then the SQS pollers, each after the batch in hand) when its standard input
closes, which also happens when the parent dies. It holds the checkpoint file from reading it to
its final write, so a local mode started again at once waits for that write.

    python -m etikett.local.workers   (started by `LocalWorkers`, not by hand)
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etikett.local import children
from etikett.local.provision import Resolver

__all__ = ["LocalWorkers", "WorkersPlan"]

logger = logging.getLogger("etikett.local")

READY = "WORKING"
# Its functions load before it answers: on a loaded machine that takes a while.
_START_TIMEOUT = 120.0
# The stream pollers wait up to 60 s for a batch in hand, the SQS pollers a few seconds.
_STOP_TIMEOUT = 90.0


@dataclass(frozen=True)
class WorkersPlan:
    """What the child needs besides the environment, sent as one JSON line."""

    template: str
    home: str
    region: str
    endpoint_url: str
    refs: dict[str, Any]
    attributes: list[tuple[str, str, Any]]
    # When the AWS state loaded was written (None: no state file): how far to trust the
    # checkpoints after an unclean stop (stream_checkpoints.py).
    snapshot_taken: float | None
    log_format: str

    @classmethod
    def of(
        cls,
        template: Path,
        home: Path,
        endpoint_url: str,
        resolver: Resolver,
        snapshot_taken: float | None,
        log_format: str,
    ) -> WorkersPlan:
        return cls(
            template=str(template),
            home=str(home),
            region=resolver.region,
            endpoint_url=endpoint_url,
            refs=dict(resolver.refs),
            attributes=[(name, key, value) for (name, key), value in resolver.attributes.items()],
            snapshot_taken=snapshot_taken,
            log_format=log_format,
        )

    def resolver(self) -> Resolver:
        resolver = Resolver(self.region, {})
        resolver.refs.update(self.refs)
        resolver.attributes.update({(name, key): value for name, key, value in self.attributes})
        return resolver


class LocalWorkers(children.Child):
    """The event-source pollers and their functions in a child process, started by local mode
    once local AWS is provisioned and stopped after the gateway, before local AWS: `stop` lets
    the pollers finish the batches in hand, and the checkpoints are marked exact."""

    module = "etikett.local.workers"
    name = "local workers"
    ready_line = READY
    start_timeout = _START_TIMEOUT
    stop_timeout = _STOP_TIMEOUT


def main() -> int:
    # Ctrl-C and systemd's SIGTERM reach the whole process group: the parent decides when the
    # pollers stop (after the gateway, before local AWS's final snapshot).
    children.leave_stopping_to_the_parent()
    plan = WorkersPlan(**json.loads(sys.stdin.readline()))
    # What the child needs loads only once its signals are set.
    from etikett.local import logs
    from etikett.local.aws.process import ShardEndOverHttp
    from etikett.local.functions import FunctionRegistry
    from etikett.local.sqs import SqsPoller
    from etikett.local.stream_checkpoints import CHECKPOINT_FILE, Checkpoints
    from etikett.local.streams import StreamPoller
    from etikett.local.template import load

    logs.configure("json" if plan.log_format == "json" else "text")
    home = Path(plan.home)
    template = load(Path(plan.template))
    resolver = plan.resolver()
    functions = FunctionRegistry(template.functions, plan.region)
    sources = [s.function for s in template.sqs_sources] + [
        s.function for s in template.stream_sources
    ]
    for function in sources:
        functions.handler(function)  # warm, as the gateway's functions are
    logs.adopt_function_loggers()
    # A local mode killed and started again at once starts a second child while the first one
    # still hands over its last batches.
    with children.held(home / CHECKPOINT_FILE, "local workers", "close"):
        checkpoints = Checkpoints(home / CHECKPOINT_FILE, snapshot_taken=plan.snapshot_taken)
        queues = SqsPoller(
            template.sqs_sources, resolver, functions, plan.endpoint_url, plan.region
        )
        streams = StreamPoller(
            template.stream_sources,
            resolver,
            functions,
            plan.endpoint_url,
            plan.region,
            checkpoints,
            shard_end=ShardEndOverHttp(plan.endpoint_url, plan.region),
        )
        queues.start()
        streams.start()
        try:
            children.ready_until_the_parent_closes(READY)
        finally:
            # Stream pollers first: what their functions send to the queues is then delivered
            # after a restart, and their checkpoints are closed before local AWS's final snapshot.
            streams.stop()
            queues.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
