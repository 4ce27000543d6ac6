"""Helpers for the end-to-end tests: a real `etikett-runner` process, and bounded waiting."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
RUNNER = Path(sys.executable).with_name("etikett-runner")
# Fast heartbeats, a short budget for unreachable printers, quick rechecks while held.
TUNING = ["--heartbeat-seconds", "1", "--unreachable-seconds", "4", "--held-recheck-seconds", "0.5"]


def eventually(probe: Callable[[], T], timeout: float = 60.0, every: float = 0.05) -> T:
    """`probe()`'s first truthy answer; AssertionError with the last answer after `timeout`
    (generous by default: it costs nothing when the answer comes, and a loaded machine is slow)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s; last: {value!r}")
        time.sleep(every)


class RunnerProcess:
    """`etikett-runner …` as the installer's service would start it, with its log in a file."""

    def __init__(self, state_dir: Path, log: Path) -> None:
        self.state_dir = state_dir
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *arguments: str) -> RunnerProcess:
        assert self.process is None or self.process.poll() is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("ETIKETT_")}
        # The printer simulators and test servers listen on loopback (docs/guides/security.md).
        env.update(
            ETIKETT_RUNNER_LOOPBACK_PRINTERS="1", ETIKETT_RUNNER_OUTGOING_PRIVATE_NETWORKS="1"
        )
        with self.log.open("ab") as log:
            log.write(f"--- start {' '.join(arguments)}\n".encode())
            self.process = subprocess.Popen(
                [str(RUNNER), "--state-dir", str(self.state_dir), *arguments],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        return self

    @property
    def enrolled_as(self) -> str | None:
        """The Runner's id once its state directory holds its certificate (enrolled)."""
        enrollment = self.state_dir / "enrollment.json"
        if not (enrollment.exists() and (self.state_dir / "certificate.pem").exists()):
            return None
        return json.loads(enrollment.read_text()).get("runner_id")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM, as systemd stops it; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"the Runner ignored SIGTERM:\n{self.output()}") from None
        return int(self.process.returncode)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return int(self.process.wait(timeout))

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def journal(self, job_id: str) -> list[dict[str, Any]]:
        """The journal's lines for a job, oldest first."""
        path = self.state_dir / "journal.jsonl"
        if not path.exists():
            return []
        lines = []
        for text in path.read_text().splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if line.get("job_id") == job_id:
                lines.append(line)
        return lines

    def journal_states(self, job_id: str) -> list[str]:
        return [line["state"] for line in self.journal(job_id) if "state" in line]

    def outcome(self, job_id: str) -> dict[str, Any] | None:
        """The final outcome the journal recorded for a job."""
        outcomes = [line["outcome"] for line in self.journal(job_id) if line.get("outcome")]
        return outcomes[-1] if outcomes else None


def start_enrolled(
    process: RunnerProcess,
    server: Any,
    admin: Any,
    group_name: str,
    *arguments: str,
    agent_url: str | None = None,
) -> dict[str, Any]:
    """A new Runner group, and `process` started with a one-time enrollment token for it (on
    `agent_url` instead of the server's agent channel, to keep the Runner from being seen).
    `server` is a DevServer, `admin` anything that posts as an admin (Api or httpx.Client)."""
    group: dict[str, Any] = admin.post("/runner-groups", json={"name": group_name}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    process.start(
        "--server",
        server.url,
        "--agent-url",
        agent_url or server.agent_url,
        "--ca-file",
        str(server.ca_file),
        "--enrollment-token",
        token["token"],
        *arguments,
    )
    return group
