"""Starts `etikett dev` as a real subprocess on a free port, as a user would, and stops it with
SIGINT as Ctrl-C would."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PortTaken(RuntimeError):
    pass


class DevServer:
    def __init__(
        self,
        home: Path,
        port: int | None = None,
        env: dict[str, str] | None = None,
        repo: Path = REPO,
    ) -> None:
        """`repo`: the checkout whose template (and functions) it runs (a benchmark's baseline)."""
        self.repo = repo
        self.home = home
        self.port = port or free_port()
        self.agent_port = free_port()
        self.broker_port = free_port()
        self.env = env or {}
        self.process: subprocess.Popen[str] | None = None
        self.log = home.parent / f"{home.name}-dev.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def agent_url(self) -> str:
        return f"https://127.0.0.1:{self.agent_port}"

    @property
    def ca_file(self) -> Path:
        return self.home / "tls" / "ca.pem"

    def aws_endpoint(self) -> str:
        """moto's endpoint of the running service, as its banner names it."""
        for line in reversed(self.log.read_text().splitlines()):
            if line.startswith("Local AWS endpoint (moto): "):
                return line.rsplit(" ", 1)[1]
        raise LookupError("no AWS endpoint in the log")

    def start(self, timeout: float = 150) -> str:
        """Start and wait until the API answers; returns what the server printed so far (generous:
        on a loaded machine a cold start of every function takes more than a minute).

        Free ports are picked before the server binds them, so another process can take one
        meanwhile: then pick new ones and try again."""
        for attempt in range(3):
            try:
                return self._start(timeout)
            except PortTaken:
                if attempt == 2:
                    raise
                self.port, self.agent_port = free_port(), free_port()
                self.broker_port = free_port()
        raise AssertionError("unreachable")

    def _start(self, timeout: float) -> str:
        # The broker's port as a variable: a benchmark's baseline checkout may predate the flag.
        env = {
            **os.environ,
            "BROKER_PORT": str(self.broker_port),
            **self.env,
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
            env.pop(name, None)
        self._log_file = self.log.open("a")
        offset = self._log_file.tell()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "etikett.local.cli",
                "dev",
                "--port",
                str(self.port),
                "--agent-port",
                str(self.agent_port),
                "--home",
                str(self.home),
                "--template",
                str(self.repo / "template.yaml"),
            ],
            cwd=self.repo,
            env=env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log_file.close()
                output = self.log.read_text()[offset:]
                if "address already in use" in output.lower():
                    raise PortTaken(output)
                raise RuntimeError(f"etikett dev exited:\n{output}")
            try:
                ready = httpx.get(f"{self.url}/api/v1/version", timeout=2).status_code == 200
                output = self.log.read_text()[offset:]
                if ready and "Press Ctrl-C to stop." in output:
                    return output
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise TimeoutError(f"etikett dev did not answer:\n{self.log.read_text()}")

    def kill(self) -> int:
        """SIGKILL, as a crash would end it: the service stops where it is (moto's process, which
        sees its parent go, still writes its final snapshot; a crash of the machine would lose
        what changed in the last `ETIKETT_SNAPSHOT_SECONDS`)."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(30)
        self._log_file.close()
        return self.process.returncode

    def stop(self, timeout: float = 30) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log_file.close()
        return self.process.returncode
