"""Fuzzing: schemathesis generates requests from the published OpenAPI document and sends them to
the real local service (`etikett dev` on moto's server) as an admin signed in with a session, so
every operation is reached; each answer must be no 5xx and conform to the document (status code,
content type, headers and body schema; errors as problem+json).

The Runner's agent channel is fuzzed too, as an enrolled Runner with its client certificate.

`make test` runs a short, seeded run; `make fuzz` a long one with a random seed and the stateful
phase (ETIKETT_FUZZ_EXAMPLES, ETIKETT_FUZZ_PHASES, ETIKETT_FUZZ_AGENT_PHASES, ETIKETT_FUZZ_SEED,
ETIKETT_FUZZ_MAX_TIME, ETIKETT_FUZZ_MIN_REQUESTS, ETIKETT_FUZZ_MIN_AGENT_REQUESTS,
ETIKETT_FUZZ_WORKERS; docs/guides/security.md).

Left out, and only these:
- `logout`: it ends the session the fuzzer uses (tested in tests/integration/api/test_auth.py);
- cases that name the fuzzing admin's own user id (support/fuzz_hooks.py): a password reset,
  deactivation or role revocation of the caller ends its sessions too.
The service runs with `ETIKETT_OUTGOING_PRIVATE_NETWORKS=false`: generated webhook and model
URLs must never reach beyond this machine.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.client import PASSWORD, Api
from support.runner_site import FakeSite
from support.server import REPO, DevServer

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
EXCLUDED_OPERATIONS = ("logout",)
FIXED_SEED = "20261126"  # make test: the same cases every run; make fuzz: a new seed each run
# The phases that generate cases (examples and coverage replay what the document holds, and
# the agent channel's operations carry no examples).
GENERATING_PHASES = ("fuzzing", "stateful")


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"ETIKETT_FUZZ_{name}", default)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A service of its own: the fuzzer creates, changes and deletes at random."""
    server = DevServer(
        tmp_path_factory.mktemp("fuzz") / "home",
        env={"ETIKETT_OUTGOING_PRIVATE_NETWORKS": "false"},
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def fuzz_admin(fuzz_server: DevServer) -> tuple[str, str]:
    """The first admin's session token and user id."""
    anonymous = Api(fuzz_server.url)
    setup = anonymous.post("/auth/setup", json={"username": "fuzz-admin", "password": PASSWORD})
    assert setup.status_code == 201, setup.text
    return setup.json()["token"], setup.json()["user"]["id"]


def test_generated_requests_get_no_5xx_and_answers_as_documented(
    fuzz_server: DevServer, fuzz_admin: tuple[str, str], tmp_path: Path
) -> None:
    token, user_id = fuzz_admin
    fuzz(
        fuzz_server,
        tmp_path,
        ["--header", f"Authorization: Bearer {token}"]
        + [option for name in EXCLUDED_OPERATIONS for option in ("--exclude-operation-id", name)],
        protected=user_id,
        min_requests=int(_setting("MIN_REQUESTS", "1000")),
        phases=_setting("PHASES", "examples,coverage,fuzzing"),
        max_time=_setting("MAX_TIME", ""),
    )


def test_the_agent_channel_answers_an_enrolled_runner_as_documented(
    fuzz_server: DevServer, fuzz_admin: tuple[str, str], tmp_path: Path
) -> None:
    """The Runner's channel (mutual TLS), fuzzed as a Runner with its own client certificate."""
    admin = Api(fuzz_server.url, fuzz_admin[0])
    group = admin.post("/runner-groups", json={"name": "fuzz"}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    site = FakeSite(tmp_path, "fuzz-runner")
    assert site.enroll(admin, token["token"]).status_code == 201
    site.agent(fuzz_server)  # writes the certificate and key beside each other
    fuzz(
        fuzz_server,
        tmp_path,
        [
            "--url",
            fuzz_server.agent_url,
            "--include-path-regex",
            "^/api/v1/runner-agent/",
            "--request-cert",
            str(site.folder / "cert.pem"),
            "--request-cert-key",
            str(site.folder / "key.pem"),
            "--tls-verify",
            str(fuzz_server.ca_file),
        ],
        protected="",
        min_requests=int(_setting("MIN_AGENT_REQUESTS", "20")),
        # make test: a smoke run (about 30 requests); make fuzz: every phase (≈ 450 and more).
        phases=_setting("AGENT_PHASES", "fuzzing"),
    )


def fuzz(
    server: DevServer,
    tmp_path: Path,
    options: list[str],
    *,
    protected: str,
    min_requests: int,
    phases: str = "examples,coverage,fuzzing",
    max_time: str = "",
) -> None:
    """Run schemathesis against the service's published document with `options`; assert that
    it found nothing, and that it sent at least `min_requests` requests."""
    reports = tmp_path / "reports"
    upstream_log = tmp_path / "upstream-failures.txt"
    seed = run_seed()
    command = [
        str(SCHEMATHESIS),
        "run",
        f"{server.url}/api/v1/openapi.json",
        *options,
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        _setting("EXAMPLES", "3"),
        "--phases",
        phases,
        "--workers",
        _setting("WORKERS", "2"),
        "--request-timeout",
        "30",
        "--suppress-health-check",
        "all",
        "--report",
        "ndjson",
        "--report-dir",
        str(reports),
        "--seed",
        seed,
        *(["--max-time", max_time] if max_time else []),
    ]
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": str(REPO / "tests" / "support" / "fuzz_hooks.py"),
        "ETIKETT_FUZZ_PROTECTED": protected,
        "ETIKETT_FUZZ_UPSTREAM_LOG": str(upstream_log),
        "NO_COLOR": "1",
    }
    started = time.monotonic()
    run = _run_showing_progress(command, env, tmp_path)
    elapsed = time.monotonic() - started
    requests, by_phase, statuses = _tally(next(reports.glob("*.ndjson")))
    upstream = upstream_log.read_text().splitlines() if upstream_log.exists() else []
    summary = (
        f"fuzzing (seed {seed}; again: make fuzz FUZZ_SEED={seed}): {requests} requests in "
        f"{elapsed:.0f} s "
        f"({', '.join(f'{phase} {count}' for phase, count in sorted(by_phase.items()))}); "
        f"statuses {dict(sorted(statuses.items()))}; "
        f"{len(upstream)} documented failures of fuzzer-made language models"
    )
    print(summary)
    assert run.returncode == 0, f"{summary}\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
    assert requests >= min_requests, summary
    # Each generating phase asked for sent requests of its own: one that silently runs nothing
    # (the stateful one without links it can follow, say) finds less than the run claims.
    for phase in set(phases.split(",")) & set(GENERATING_PHASES):
        assert by_phase[phase] > 0, f"the {phase} phase sent nothing: {summary}"
    # The caller was never locked out: most answers are not 401.
    assert statuses.get(401, 0) < requests / 4, summary


def run_seed() -> str:
    """ETIKETT_FUZZ_SEED if set (`make test`'s fixed one, or a seed to replay: `make fuzz
    FUZZ_SEED=…`); empty (as `make fuzz` sets it): a fresh random seed for this run, printed
    with its figures."""
    seed = _setting("SEED", FIXED_SEED)
    return seed if seed else str(secrets.randbits(63))


def _tally(ndjson: Path) -> tuple[int, Counter[str], Counter[int]]:
    """Requests sent, per phase, and the answers' status codes, from the run's event report."""
    by_phase: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    for line in ndjson.read_text().splitlines():
        event = json.loads(line).get("ScenarioFinished")
        if not event:
            continue
        interactions = event["recorder"].get("interactions", {}).values()
        by_phase[event["phase"]] += len(interactions)
        for interaction in interactions:
            if interaction.get("response"):
                statuses[interaction["response"]["status_code"]] += 1
    return sum(by_phase.values()), by_phase, statuses


def _run_showing_progress(
    command: list[str], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """schemathesis' run; under `make fuzz` (ETIKETT_FUZZ_PROGRESS=1, pytest -s) its report goes
    to the terminal as it comes, so a run of a quarter of an hour shows how far it is."""
    if os.environ.get("ETIKETT_FUZZ_PROGRESS") != "1":
        return subprocess.run(command, env=env, capture_output=True, text=True, cwd=cwd)
    lines: list[str] = []
    with subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            print(line, end="", file=sys.stderr, flush=True)
    return subprocess.CompletedProcess(command, process.returncode, "".join(lines), "")
