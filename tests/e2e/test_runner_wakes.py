"""An idle Runner waits for a wake on its own MQTT topic instead of polling its queue (local
mode's mosquitto; AWS IoT Core on AWS), and the service wakes it for what it sends (docs/scale.md).
The broker lets a Runner's certificate read its own topic only, and write none."""

from __future__ import annotations

import base64
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from etikett_runner.printer_sim import PrinterSimulator

from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.client import Api
from support.runner_site import FakeSite
from support.server import DevServer

AWAKE_SECONDS = 2  # how long a woken Runner polls before it waits for a wake again
SERVER_ENV = {"ETIKETT_RUNNER_AWAKE_SECONDS": str(AWAKE_SECONDS)}  # conftest's `server`


def _online_runner(admin: Api, group_id: str) -> dict[str, Any]:
    return eventually(
        lambda: next(
            (
                r
                for r in admin.get("/runners").json()["items"]
                if r["group_id"] == group_id and r["status"] == "online"
            ),
            None,
        ),
        30,
    )


def _submit(admin: Api, runner_id: str, printer_id: str) -> str:
    data = base64.b64encode(b"^XA^FO20,20^A0N,30,30^FDwake^FS^XZ").decode()
    body = {"printer_id": printer_id, "data_base64": data}
    response = admin.post(f"/runners/{runner_id}/jobs", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def test_an_idle_runner_waits_for_a_wake_and_prints_when_woken(
    server: DevServer, admin: Api, workdir: Path
) -> None:
    process = RunnerProcess(workdir / "waker", workdir / "waker.log")
    group = start_enrolled(process, server, admin, "Wecker", *TUNING)
    try:
        runner = _online_runner(admin, group["id"])
        with PrinterSimulator(port=0, dpi=203, out_dir=None, model="ZT411-203dpi") as zebra:
            printer = admin.post(
                "/printers",
                json={
                    "name": "Zebra Wecker",
                    "runner_id": runner["id"],
                    "uri": f"tcp://127.0.0.1:{zebra.port}",
                    "language": "zpl",
                    "dpi": 203,
                },
            )
            assert printer.status_code == 201, printer.text
            for _ in range(2):  # asleep, woken, asleep again, woken again
                _woken_to_print(process, admin, zebra, runner["id"], printer.json()["id"])
    finally:
        process.stop()
    assert "Traceback" not in process.output()


def _woken_to_print(
    process: RunnerProcess, admin: Api, zebra: PrinterSimulator, runner_id: str, printer_id: str
) -> None:
    """The Runner falls asleep; a job wakes it, prints, and it falls asleep again."""
    eventually(lambda: "idle: waiting for a wake" in process.output(), 60)
    asleep = process.output().count("idle: waiting for a wake")
    wakes = process.output().count("woken: looking at the queue")
    time.sleep(AWAKE_SECONDS)  # asleep: it looks at its queue only every 5 minutes
    printed = zebra.engine.printed_total
    started = time.monotonic()
    job_id = _submit(admin, runner_id, printer_id)
    eventually(lambda: zebra.engine.printed_total == printed + 1, 20, every=0.02)
    assert time.monotonic() - started < 20  # woken, not its look every 5 minutes
    assert process.output().count("woken: looking at the queue") == wakes + 1
    done = eventually(
        lambda: (j := admin.get(f"/jobs/{job_id}").json())["status"] == "confirmed" and j, 30
    )
    assert done["status"] == "confirmed"
    eventually(lambda: process.output().count("idle: waiting for a wake") == asleep + 1, 30)


class _Listener:
    """An MQTT client with a Runner's certificate, as a Runner connects."""

    def __init__(self, server: DevServer, site: FakeSite) -> None:
        site.agent(server).close()  # writes the certificate and key files
        context = ssl.create_default_context(cafile=str(server.ca_file))
        context.load_cert_chain(site.folder / "cert.pem", site.folder / "key.pem")
        self.messages: list[str] = []
        self.granted: list[bool] = []
        self._subscribed = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        client.tls_set_context(context)
        client.on_message = lambda c, u, m: self.messages.append(m.topic)
        client.on_subscribe = self._on_subscribe
        client.connect("127.0.0.1", server.broker_port)
        client.loop_start()
        self.client = client

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, codes: Any, props: Any) -> None:
        self.granted = [not code.is_failure for code in codes]
        self._subscribed.set()

    def subscribe(self, topic: str) -> bool:
        self._subscribed.clear()
        self.client.subscribe(topic, qos=1)
        assert self._subscribed.wait(10)
        return self.granted == [True]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_runner_hears_its_own_wakes_only_and_sends_none(
    server: DevServer, admin: Api, tmp_path: Path
) -> None:
    group = admin.post("/runner-groups", json={"name": "Hörer"}).json()
    sites = []
    for name in ("ear-a", "ear-b"):
        token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
        site = FakeSite(tmp_path, name)
        assert site.enroll(admin, token["token"]).status_code == 201
        sites.append(site)
    # Each one's topic, as the service offers it with the queue's credentials.
    topic_a, topic_b = (_wake(server, site)["topic"] for site in sites)
    a, b = _Listener(server, sites[0]), _Listener(server, sites[1])
    service = _publisher(server)
    try:
        # mosquitto grants any subscription; what its rules decide is what reaches whom.
        for topic in (topic_b, "#"):
            a.subscribe(topic)
        assert b.subscribe(topic_b)
        # A Runner's certificate publishes nothing that reaches another (nor itself).
        a.client.publish(topic_b, b"{}", qos=1).wait_for_publish(5)
        a.client.publish(topic_a, b"{}", qos=1).wait_for_publish(5)
        # The service's wake for B reaches B only.
        service.publish(topic_b, b"{}", qos=1).wait_for_publish(5)
        eventually(lambda: b.messages, 10)
        time.sleep(0.5)
        assert a.messages == []
        assert b.messages == [topic_b]
    finally:
        a.close()
        b.close()
        service.disconnect()
        service.loop_stop()


def _wake(server: DevServer, site: FakeSite) -> dict[str, Any]:
    with site.agent(server) as agent:
        wake = agent.post("/queue-access").json()["wake"]
    assert wake["client_id"] == site.enrollment["runner_id"]
    return dict(wake)


def _publisher(server: DevServer) -> mqtt.Client:
    """The service's own publisher (local AWS's certificate, as `moto_wakes` connects)."""
    folder = server.home / "broker"
    context = ssl.create_default_context(cafile=str(server.ca_file))
    context.load_cert_chain(folder / "publisher.pem", folder / "publisher-key.pem")
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    client.tls_set_context(context)
    client.connect("127.0.0.1", server.broker_port)
    client.loop_start()
    return client


def test_the_broker_refuses_a_client_without_a_certificate(server: DevServer) -> None:
    context = ssl.create_default_context(cafile=str(server.ca_file))
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
    client.tls_set_context(context)
    connected: list[bool] = []
    client.on_connect = lambda c, u, f, reason, p: connected.append(not reason.is_failure)
    try:
        client.connect("127.0.0.1", server.broker_port)
    except (ssl.SSLError, OSError):
        return  # refused in the handshake
    client.loop_start()
    try:
        time.sleep(3)
        assert connected in ([], [False])
        assert not client.is_connected()
    finally:
        client.loop_stop()
