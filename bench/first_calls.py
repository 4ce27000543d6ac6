"""A cold function's first AWS calls: in fresh processes, the CPU time of the first call to each
of five tables, the transactions' connection and two services, as a function's first requests
make them (moto answers in the process, so the figures are the clients' own work).

    .venv/bin/python bench/first_calls.py [--repeat 3]

Each client is made on its first use. All of them come from one botocore session
(`etikett.store.clients`), so only the first reads botocore's data files; with a session per
table (pynamodb's own) or per service, each read them again (60-130 ms of CPU each).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REGION = "eu-central-1"
STEPS = ("jobs", "printers", "runners", "labels", "users", "transactions", "sqs", "kms")


def child() -> dict[str, float]:
    """In a fresh process: the service provisioned on moto, then each first call timed."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
    }.items():
        os.environ[name] = value
    from moto import mock_aws

    with mock_aws():
        from etikett import settings
        from etikett.local import provision
        from etikett.local.template import load

        template = load(REPO / "template.yaml")
        parameters = {"Build": "bench", "SetupSecret": ""}
        resolver = provision.provision(template, None, REGION, parameters)
        for name, value in provision.function_environment(template, resolver).items():
            os.environ[name] = value
        settings.reload()
        from etikett.store import base, clients, jobs, labels, printers, runners, users

        base.bind()  # provisioning made clients: a function's first request has none
        first: dict[str, Any] = {
            "jobs": lambda: jobs.get("job_none"),
            "printers": lambda: printers.get("prn_none"),
            "runners": lambda: runners.get_runner("run_none"),
            "labels": lambda: labels.get("lbl_none"),
            "users": lambda: users.get("usr_none"),
            "transactions": lambda: base.connection().client,
            "sqs": lambda: clients.client("sqs").list_queues(),
            "kms": lambda: clients.client("kms").list_keys(),
        }
        spent = {}
        for name in STEPS:
            started = time.process_time()
            first[name]()
            spent[name] = (time.process_time() - started) * 1000
        return spent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(child()))
        return 0
    path = os.pathsep.join(str(REPO / folder) for folder in ("shared", "engine"))
    runs = []
    for _ in range(arguments.repeat):
        answer = subprocess.run(
            [sys.executable, __file__, "--child"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        runs.append(json.loads(answer.stdout.strip().splitlines()[-1]))
    print(f"First call in a fresh process, CPU ms (median of {arguments.repeat} processes)")
    for name in STEPS:
        print(f"  {name:<14} {statistics.median(run[name] for run in runs):7.1f}")
    print(f"  {'in all':<14} {statistics.median(sum(run.values()) for run in runs):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
