"""Local mode's event-source work runs in a process of its own (local/workers.py): the gateway's
process has no pollers, an event still becomes a webhook delivery (stream → events publisher →
queue → webhook sender, all in the child), and the child goes when its parent dies. The Runner
agent channel is served by another child (local/agent_gateway.py): it answers while the gateway's
process stands still, and goes with its parent too."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

from integration.webhooks.receiver import Receiver

from etikett.local.agent_gateway import AgentGatewayPlan, LocalAgentGateway
from etikett.local.provision import Resolver
from etikett.local.workers import LocalWorkers, WorkersPlan
from support import self_signed
from support.client import PASSWORD, Api
from support.server import REPO, free_port

# A parent that is `etikett dev` in all but its command line: LocalService started, then what
# the test needs to know of it, then nothing until it is killed.
_PARENT = """
import json, sys, threading, time
from pathlib import Path
from etikett.local.service import LocalService
service = LocalService(Path(sys.argv[1]), Path(sys.argv[2]), port=int(sys.argv[3]),
                       agent_port=int(sys.argv[4]), broker_port=int(sys.argv[5]))
service.start()
print(json.dumps({"url": service.url, "workers": service.workers.pid, "aws": service.aws.pid,
                  "agent": service.agent.pid, "agent_url": service.agent_url,
                  "ca": str(service.ca_file),
                  "threads": [thread.name for thread in threading.enumerate()]}), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie of the killed parent's child is gone for our purposes


def test_the_pollers_run_in_a_child_that_goes_with_its_parent(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    arguments = [str(REPO / "template.yaml"), str(tmp_path / "home")]
    arguments += [str(free_port()), str(free_port()), str(free_port())]
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, *arguments],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert parent.stdout is not None
        started = json.loads(parent.stdout.readline())
        workers, aws = started["workers"], started["aws"]
        assert workers not in (None, parent.pid, aws) and _alive(workers)
        command = Path(f"/proc/{workers}/cmdline").read_bytes().split(b"\0")
        assert b"etikett.local.workers" in command
        pollers = [n for n in started["threads"] if n.startswith(("sqs-", "dynamodb-"))]
        assert pollers == [], "the gateway's process still polls"
        agent = started["agent"]
        assert agent not in (None, parent.pid, aws, workers) and _alive(agent)
        command = Path(f"/proc/{agent}/cmdline").read_bytes().split(b"\0")
        assert b"etikett.local.agent_gateway" in command
        assert "agent-gateway" not in started["threads"], "the gateway's process serves Runners"
        # The gateway's process stopped: the agent channel still answers (a client without a
        # certificate is refused by the child's TLS, which only a serving process does).
        parent.send_signal(signal.SIGSTOP)
        try:
            assert _refused_without_certificate(started["agent_url"], Path(started["ca"]))
        finally:
            parent.send_signal(signal.SIGCONT)

        admin = Api(started["url"])
        setup = admin.post("/auth/setup", json={"username": "root", "password": PASSWORD})
        admin = admin.as_token(setup.json()["token"])
        with Receiver() as receiver:
            hook = admin.post("/webhooks", json={"url": receiver.url, "events": ["label.approved"]})
            assert hook.status_code == 201, hook.text
            label = admin.post(
                "/labels/from-dimensions", json={"name": "w", "width_mm": 40, "height_mm": 20}
            ).json()
            approved = admin.post(
                f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"}
            )
            assert approved.status_code == 200, approved.text
            receiver.wait_for(lambda got: len(got) >= 1)
            delivered = json.loads(receiver.requests[0].body)
            assert delivered["data"]["label_id"] == label["id"]
    finally:
        parent.kill()  # SIGKILL: the parent stops nothing itself
        parent.wait(10)
        if parent.stdout is not None:
            parent.stdout.close()
    deadline = time.monotonic() + 60
    while (_alive(workers) or _alive(aws) or _alive(agent)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(workers) and not _alive(aws) and not _alive(agent)


def _refused_without_certificate(url: str, ca: Path) -> bool:
    """True when the server at `url` completes its side of a TLS handshake with this client,
    which has no certificate, and refuses it (an alert; the server never answers HTTP)."""
    host, port = url.removeprefix("https://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=host) as secure:
                secure.sendall(b"GET / HTTP/1.1\r\nHost: runner\r\n\r\n")
                answered = secure.recv(1024)
        except ssl.SSLError as error:
            return "CERTIFICATE_REQUIRED" in str(error) or "HANDSHAKE_FAILURE" in str(error)
    return answered == b""  # closed after the handshake: refused as well


def test_an_agent_channel_that_cannot_listen_is_reported(tmp_path: Path) -> None:
    """Its port taken: `ready` says that it could not listen, and where."""
    certificate, key = self_signed.certificate(tmp_path, "localhost")
    ca = certificate
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        plan = AgentGatewayPlan(
            template=str(REPO / "template.yaml"),
            region="eu-central-1",
            host="127.0.0.1",
            port=port,
            certificate=str(certificate),
            key=str(key),
            ca=str(ca),
            log_format="text",
        )
        agent = LocalAgentGateway()
        agent.start(plan)
        try:
            agent.ready()
        except RuntimeError as error:
            assert f"could not listen on https://127.0.0.1:{port}" in str(error)
        else:
            raise AssertionError("the agent channel started on a port taken")
    assert agent.pid is None


def test_a_child_that_cannot_start_is_reported_not_waited_for(tmp_path: Path) -> None:
    """A plan the child cannot carry out (no template there): `start` says so at once."""
    resolver = Resolver("eu-central-1", {})
    plan = WorkersPlan.of(
        tmp_path / "no-template.yaml", tmp_path, "http://127.0.0.1:9", resolver, None, "text"
    )
    workers = LocalWorkers()
    began = time.monotonic()
    try:
        workers.start(plan)
        workers.ready()
    except RuntimeError as error:
        assert "did not start" in str(error)
    else:
        raise AssertionError("started without a template")
    assert time.monotonic() - began < 60 and workers.pid is None
