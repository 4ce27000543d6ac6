"""The Runner's side of waking (etikett_runner/wake.py) against a real mosquitto on loopback, with
certificates of a CA made here: asleep it waits until a wake comes, or its look is due, and it
polls at once without a connection to the broker; it says it is awake when woken, and while work
keeps coming."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from etikett_runner.wake import Wakefulness
from paho.mqtt.enums import CallbackAPIVersion

from support.self_signed import Authority

RUNNER = "run_01TEST"
TOPIC = f"etikett-wake-{RUNNER}"  # as the service names it: <prefix>-<runner id>
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"

pytestmark = pytest.mark.skipif(
    not Path(MOSQUITTO).exists(), reason="mosquitto is not installed (make test installs it)"
)


class _Broker:
    """mosquitto with TLS and client certificates, the Runner's rule as local mode writes it."""

    def __init__(self, folder: Path, ca: Authority) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        certificate, key = ca.issue("broker", server=True)
        (folder / "acl").write_text(
            "pattern read etikett-wake-%u\n\nuser publisher\ntopic write #\n"
        )
        (folder / "mosquitto.conf").write_text(
            f"user {pwd.getpwuid(os.getuid()).pw_name}\nallow_anonymous false\npersistence false\n"
            f"log_dest file {folder / 'mosquitto.log'}\nacl_file {folder / 'acl'}\n"
            f"listener {self.port} 127.0.0.1\ncafile {ca.pem}\ncertfile {certificate}\n"
            f"keyfile {key}\nrequire_certificate true\nuse_identity_as_username true\n"
        )
        self.config = folder / "mosquitto.conf"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(5)
            self.process = None


class _Channel:
    """The agent channel as far as waking uses it: heartbeats answered with the promise."""

    def __init__(self, context: ssl.SSLContext, awake_seconds: float) -> None:
        self.tls_context = context
        self.awake_seconds = awake_seconds
        self.beats: list[dict[str, Any]] = []

    def heartbeat(self, beat: dict[str, Any]) -> dict[str, Any]:
        self.beats.append(beat)
        return {
            "status": "online",
            "awake_seconds": self.awake_seconds if beat.get("awake") else None,
        }


@pytest.fixture
def ca(tmp_path: Path) -> Authority:
    return Authority(tmp_path)


@pytest.fixture
def broker(tmp_path: Path, ca: Authority) -> Iterator[_Broker]:
    running = _Broker(tmp_path, ca)
    running.start()
    yield running
    running.stop()


def _offer(broker: _Broker, look_seconds: int = 300) -> dict[str, Any]:
    return {
        "host": "127.0.0.1",
        "port": broker.port,
        "topic": TOPIC,
        "client_id": RUNNER,
        "keepalive_seconds": 60,
        "look_seconds": look_seconds,
    }


def _publish(ca: Authority, broker: _Broker) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    client.tls_set_context(ca.client_context("publisher"))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        assert client.publish(TOPIC, b"{}", qos=1).wait_for_publish(5) is None
    finally:
        client.disconnect()
        client.loop_stop()


def _asleep(
    ca: Authority, broker: _Broker, look_seconds: int = 300
) -> tuple[Wakefulness, _Channel]:
    """A Wakefulness that looked once, said it is awake, and whose promise (0.3 s) is over."""
    channel = _Channel(ca.client_context(RUNNER), awake_seconds=0.3)
    stop = threading.Event()
    waking = Wakefulness(channel, stop)  # type: ignore[arg-type]
    waking.offer(_offer(broker, look_seconds))
    assert waking.listener is not None
    deadline = time.monotonic() + 10
    while not waking.listener.connected and time.monotonic() < deadline:
        time.sleep(0.02)
    assert waking.listener.connected
    waking.await_work()  # a starting Runner looks at once
    waking.received(0)
    assert channel.beats == [{"awake": True}]  # it said it polls
    waking.await_work()  # awake: at once
    time.sleep(0.4)
    return waking, channel


def _waits(waking: Wakefulness, seconds: float) -> float:
    """How long await_work took, if it returned within `seconds` (else the test fails there)."""
    done = threading.Event()
    started = time.monotonic()
    finished: list[float] = []

    def wait() -> None:
        waking.await_work()
        finished.append(time.monotonic() - started)
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    assert done.wait(seconds), f"await_work still waits after {seconds} s"
    return finished[0]


def test_asleep_it_waits_until_a_wake_comes_then_says_it_is_awake(
    ca: Authority, broker: _Broker
) -> None:
    waking, channel = _asleep(ca, broker)
    done = threading.Event()
    threading.Thread(target=lambda: (waking.await_work(), done.set()), daemon=True).start()
    assert not done.wait(1.5)  # asleep: nothing to look at
    _publish(ca, broker)
    assert done.wait(5)
    waking.received(1)
    assert channel.beats == [{"awake": True}, {"awake": True}]
    assert _waits(waking, 1) < 0.5  # awake again: polling
    waking.close()


def test_asleep_it_looks_at_its_queue_when_its_look_is_due(ca: Authority, broker: _Broker) -> None:
    waking, channel = _asleep(ca, broker, look_seconds=2)
    took = _waits(waking, 6)
    assert 1.5 <= took <= 4
    waking.received(0)  # nothing there: no promise to poll
    assert channel.beats == [{"awake": True}]
    waking.close()


def test_without_the_broker_it_polls(ca: Authority, broker: _Broker) -> None:
    waking, channel = _asleep(ca, broker)
    done = threading.Event()
    threading.Thread(target=lambda: (waking.await_work(), done.set()), daemon=True).start()
    assert not done.wait(1)
    broker.stop()
    assert done.wait(10)  # the connection is lost: poll
    assert _waits(waking, 1) < 0.5  # and keep polling while it is gone
    waking.received(3)
    assert channel.beats == [{"awake": True}]  # no promise: a wake could not reach it
    waking.close()


def test_while_work_keeps_coming_it_says_so_again_when_half_its_promise_is_gone(
    ca: Authority, broker: _Broker
) -> None:
    channel = _Channel(ca.client_context(RUNNER), awake_seconds=1.0)
    waking = Wakefulness(channel, threading.Event())  # type: ignore[arg-type]
    waking.offer(_offer(broker))
    assert waking.listener is not None
    deadline = time.monotonic() + 10
    while not waking.listener.connected and time.monotonic() < deadline:
        time.sleep(0.02)
    waking.await_work()
    waking.received(0)
    assert len(channel.beats) == 1
    waking.received(1)  # work, but the promise is fresh
    assert len(channel.beats) == 1
    time.sleep(0.6)
    waking.received(1)  # work, and more than half the promise is gone
    assert len(channel.beats) == 2
    time.sleep(0.6)
    waking.received(0)  # nothing came since: it lets the promise run out
    assert len(channel.beats) == 2
    waking.close()
