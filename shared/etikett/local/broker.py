"""`LocalBroker`: local mode's MQTT broker, where idle Runners wait for wakes (AWS IoT Core's part
on AWS; docs/scale.md): Debian's mosquitto, run by a small Python child that belongs to
`etikett dev` like its other children (it stops mosquitto when its input closes, which also
happens when the parent dies).

Mosquitto listens with TLS only, with the service CA's server certificate, and accepts only
clients with a certificate from that CA, whose common name is their user name: a Runner's is its
id, so the broker's rule lets it read its own wake topic and nothing else, and only the
publisher (local AWS, `moto_wakes`, with the certificate `PUBLISHER` made here) may write to any
Runner's. The IoT policy on AWS says the same with `${iot:Certificate.Subject.CommonName}`.

    python -m etikett.local.broker   (started by `LocalBroker`, not by hand)
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from etikett.local import children

__all__ = ["BROKER_DIR", "PUBLISHER", "BrokerPlan", "LocalBroker", "mosquitto", "prepare_publisher"]

READY = "BROKING"
FAILED = children.FAILED
# Where local AWS finds the broker and its publisher's certificate (moto_wakes.py).
BROKER_DIR = "ETIKETT_LOCAL_BROKER_DIR"
PUBLISHER = "etikett-service"  # the common name of the one client that may publish wakes
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 15.0
MOSQUITTO_PATHS = ("/usr/sbin/mosquitto", "/usr/bin/mosquitto")


def mosquitto() -> str | None:
    """The mosquitto binary (Debian puts it in /usr/sbin, off a user's PATH), or None."""
    found = shutil.which("mosquitto")
    if found:
        return found
    return next((path for path in MOSQUITTO_PATHS if os.access(path, os.X_OK)), None)


@dataclass(frozen=True)
class BrokerPlan:
    """What the child needs, sent as one JSON line: where to listen, the TLS files, and the
    folder its configuration goes to."""

    folder: str
    host: str
    port: int
    certificate: str
    key: str
    ca: str
    topic_prefix: str  # a Runner's wake topic is `<prefix>-<its id>`


class LocalBroker(children.Child):
    """mosquitto in a child of its own, started by local mode once the TLS files exist and
    stopped after the local workers."""

    module = "etikett.local.broker"
    name = "the MQTT broker"
    ready_line = READY
    start_timeout = _START_TIMEOUT
    stop_timeout = _STOP_TIMEOUT


def prepare_publisher(folder: Path, host: str, port: int, ca: Path) -> None:
    """The publisher's certificate (from the service CA) and `publisher.json`, which tells local
    AWS where the broker listens (moto_wakes.py)."""
    # Run by `etikett dev` itself, which has both loaded: not the broker's child.
    from etikett.domain.runners import certificates
    from etikett.local import tls

    folder.mkdir(parents=True, exist_ok=True)
    certificate_pem, key_pem = certificates.issue_client_certificate(PUBLISHER)
    certificate, key = folder / "publisher.pem", folder / "publisher-key.pem"
    certificate.write_text(certificate_pem)
    tls.write_key(key, key_pem)
    plan = {"host": host, "port": port, "certificate": str(certificate), "key": str(key)}
    (folder / "publisher.json").write_text(json.dumps({**plan, "ca": str(ca)}))


def configuration(plan: BrokerPlan) -> tuple[str, str]:
    """(mosquitto.conf, its access rules) for `plan`."""
    folder = Path(plan.folder)
    config = "\n".join(
        [
            # As root, mosquitto would run as the user `mosquitto`, who cannot read our key.
            f"user {pwd.getpwuid(os.getuid()).pw_name}",
            "per_listener_settings false",
            "allow_anonymous false",
            "persistence false",
            f"log_dest file {folder / 'mosquitto.log'}",
            "log_type error",
            "log_type warning",
            "connection_messages false",
            # A Runner that is offline for a while gets its last wakes when it is back (QoS 1);
            # one is as good as many.
            "max_queued_messages 10",
            f"acl_file {folder / 'acl'}",
            f"listener {plan.port} {plan.host}",
            f"cafile {plan.ca}",
            f"certfile {plan.certificate}",
            f"keyfile {plan.key}",
            "require_certificate true",
            "use_identity_as_username true",
            "tls_version tlsv1.2",
            "",
        ]
    )
    rules = "\n".join(
        [
            "# Every client: read its own wake topic (its certificate's common name is %u).",
            f"pattern read {plan.topic_prefix}-%u",
            "",
            "# The publisher (the service): write any Runner's.",
            f"user {PUBLISHER}",
            "topic write #",
            "",
        ]
    )
    return config, rules


def _listening(host: str, port: int, process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def _taken(host: str, port: int) -> str | None:
    """Why the port cannot be listened on ("address already in use"), or None: checked before
    mosquitto starts, since a connection to another's listener would pass for mosquitto's."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            return (error.strerror or str(error)).lower()
    return None


def _last_line(log: Path) -> str:
    """Mosquitto's last word (e.g. "Error: Address already in use"), without its timestamp."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].partition(": ")[2] if lines else ""


def main() -> int:
    children.leave_stopping_to_the_parent()
    plan = BrokerPlan(**json.loads(sys.stdin.readline()))
    binary = mosquitto()
    if binary is None:
        print(f"{FAILED} mosquitto is not installed (make dev installs it)", flush=True)
        return 1
    folder = Path(plan.folder)
    folder.mkdir(parents=True, exist_ok=True)
    config, rules = configuration(plan)
    (folder / "acl").write_text(rules)
    (folder / "mosquitto.conf").write_text(config)
    taken = _taken(plan.host, plan.port)
    if taken:
        print(
            f"{FAILED} mosquitto could not listen on {plan.host}:{plan.port}: {taken}", flush=True
        )
        return 1
    # What mosquitto says before its log is open (e.g. that it runs as root) goes to a file of
    # its own beside the log, not into `etikett dev`'s.
    with open(folder / "mosquitto.out", "wb") as said_early:
        process = subprocess.Popen(
            [binary, "-c", str(folder / "mosquitto.conf")],
            stdin=subprocess.DEVNULL,
            stdout=said_early,
            stderr=subprocess.STDOUT,
        )
    try:
        if not _listening(plan.host, plan.port, process, _START_TIMEOUT - 5):
            said = _last_line(folder / "mosquitto.log") or _last_line(folder / "mosquitto.out")
            print(
                f"{FAILED} mosquitto could not listen on {plan.host}:{plan.port}: {said}",
                flush=True,
            )
            return 1
        children.ready_until_the_parent_closes(READY)
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
