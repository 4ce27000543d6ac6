"""How far the sync of offline prints is above local AWS's own floor: the writes of `--prints`
one-record offline prints (a finished job, its event, its audit entry and one archive entry
each, 25 prints a transaction as `sync.transactions` packs them), two ways against local AWS's
process (moto's server with its request lock and snapshots, as `etikett dev` runs it; no
gateway, no pollers), and a third for comparison:

1. bare: the TransactWriteItems requests as the SDK sends them, serialized beforehand and
   posted on one keep-alive connection: moto's own time, nothing of ours;
2. domain: as many other prints committed by the sync's own code (`sync.commit_all`: each
   transaction through pynamodb and botocore to moto), in this process;
3. (for comparison, from `offline_sync_bench.py`) the whole sync through `etikett dev`.

    .venv/bin/python bench/offline_sync_floor.py [--prints 2000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
REGION = "eu-central-1"


def _start(home: Path) -> Any:
    """Local AWS in its process, the template provisioned, this process's store aimed at it."""
    from etikett import settings
    from etikett.local import provision
    from etikett.local.aws.process import LocalAwsProcess
    from etikett.local.template import load
    from etikett.store import base

    aws = LocalAwsProcess(home / "aws-state.pickle", snapshot_interval=1.0, max_wait_seconds=20)
    aws.start()
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_SESSION_TOKEN": "local",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": aws.endpoint_url,
        }
    )
    template = load(REPO / "template.yaml")
    parameters = {"Build": "bench", "SetupSecret": "", "OutgoingPrivateNetworks": "true"}
    resolver = provision.provision(template, aws.endpoint_url, REGION, parameters)
    os.environ.update(provision.function_environment(template, resolver))
    settings.reload()
    base.bind()
    return aws


def _prints(count: int, start: int) -> list[Any]:
    """`count` accepted one-record prints, as sync.build makes them."""
    from ulid import ULID

    from etikett.domain.actors import Caller, Invocation
    from etikett.domain.offline_sync.archiving import build
    from etikett.domain.offline_sync.models import OfflinePrintIn
    from etikett.store.runners import RunnerRecord

    now = dt.datetime.now(dt.UTC)
    runner = RunnerRecord(
        id="run_bench", group_id="grp_bench", name="bench", hostname=None, version=None,
        state="active", certificate_serial=None, certificate_not_after=None, queue_url=None,
        last_seen_at=now, created_at=now,
    )  # fmt: skip
    caller = Caller(actor="service", subject="runner:bench", roles=frozenset({"operator"}))
    invocation = Invocation(caller, "postRunnerOfflinePrints")
    made = []
    for n in range(start, start + count):
        taken = OfflinePrintIn.model_validate(
            {
                "id": f"opr_{ULID()}",
                "run_id": "frn_bench",
                "deployment_id": "dep_bench",
                "flow_id": "flw_bench",
                "flow_version": 1,
                "label_id": "lbl_bench",
                "label_version": 1,
                "printer": "line",
                "printer_id": "prn_bench",
                "copies": 1,
                "records": [
                    {
                        "variables": {"article": "4711", "batch": "L-2026-11"},
                        "serials": {"lot": f"{n:06d}"},
                        "counter_values": {"lot": n},
                    }
                ],
                "printed_at": now.isoformat(),
                "outcome": "sent",
            }
        )
        made.append((taken, build(invocation, runner, taken, None, "Line 1")))
    return made


def _serialized_requests(prints: list[Any]) -> list[tuple[dict[str, str], bytes]]:
    """The TransactWriteItems requests the sync's code would send for `prints`, as sent (headers
    and body), kept instead of sent."""
    from botocore.awsrequest import AWSResponse

    from etikett.domain.offline_sync.archiving import commit
    from etikett.domain.offline_sync.sync import transactions
    from etikett.store.base import connection

    kept: list[tuple[dict[str, str], bytes]] = []

    class _Raw:
        def stream(self, **_: Any) -> Any:
            yield b"{}"

    def keep(request: Any, **_: Any) -> AWSResponse:
        kept.append((dict(request.headers), bytes(request.body)))
        return AWSResponse(request.url, 200, {}, _Raw())  # type: ignore[arg-type]

    events = connection().client.meta.events
    # A before-send handler that answers stands in for the wire (botocore's stubs say None).
    handler: Any = keep
    events.register_first("before-send.dynamodb.TransactWriteItems", handler)
    try:
        for group in transactions(prints):
            commit([archived for _, archived in group])
    finally:
        events.unregister("before-send.dynamodb.TransactWriteItems", handler)
    return kept


def _post_all(endpoint: str, requests: list[tuple[dict[str, str], bytes]]) -> float:
    """Seconds to post `requests` one after another (each answered 200) on one connection."""
    address = urlsplit(endpoint)
    link = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=60)
    started = time.perf_counter()
    for headers, body in requests:
        sent = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")}
        link.request("POST", "/", body=body, headers=sent)
        answer = link.getresponse()
        text = answer.read()
        assert answer.status == 200, text[:300]
    elapsed = time.perf_counter() - started
    link.close()
    return elapsed


def measure(prints: int) -> dict[str, float]:
    """Entries a second: `bare` (moto alone) and `domain` (the sync's writing code and moto)."""
    from etikett.domain.offline_sync.sync import commit_all, transactions

    with tempfile.TemporaryDirectory(prefix="etikett-offline-sync-floor-") as home:
        aws = _start(Path(home))
        try:
            bare_requests = _serialized_requests(_prints(prints, 1))
            bare = _post_all(aws.endpoint_url, bare_requests)
            groups = transactions(_prints(prints, prints + 1))
            started = time.perf_counter()
            assert all(commit_all(groups))
            domain = time.perf_counter() - started
        finally:
            aws.stop()
    for name, seconds in (("bare", bare), ("domain", domain)):
        print(
            f"  {name}: {prints} one-record prints, {len(bare_requests)} transactions: "
            f"{seconds:.2f} s, {prints / seconds:.0f} entries/s",
            file=sys.stderr,
        )
    return {"bare": prints / bare, "domain": prints / domain}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--prints", type=int, default=2000)
    arguments = parser.parse_args(argv)
    rates = measure(arguments.prints)
    print(
        f"offline sync floor, prints of 1 record: local AWS alone {rates['bare']:.0f} entries/s, "
        f"the sync's writing code and local AWS {rates['domain']:.0f} entries/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
