"""Wakes in local mode: what the service publishes through moto's IoT data plane (`Publish`, as
it does to AWS IoT Core) is handed to local mode's MQTT broker, where the Runner waiting for it
is subscribed, instead of only being kept in moto's memory.

Local mode writes the publisher's certificate and where the broker listens to `publisher.json`
in the folder named by `ETIKETT_LOCAL_BROKER_DIR` once the broker runs (local AWS starts before
it); the first wake connects. Without that variable (local AWS in tests of other things), moto
keeps what was published, as it does by itself."""

from __future__ import annotations

import functools
import json
import logging
import os
import ssl
import threading
from pathlib import Path
from typing import Any

from moto.iotdata.models import IoTDataPlaneBackend

from etikett.local.broker import BROKER_DIR

__all__ = ["install"]

_PUBLISH_TIMEOUT = 5.0

logger = logging.getLogger("etikett.local")
_installed = threading.Lock()
_MARK = "_etikett_wakes"


class _Publisher:
    """One MQTT connection to the broker, made at the first wake and kept (paho's own thread
    reconnects it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._client: Any = None

    def _connect(self, folder: Path) -> Any:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        plan = json.loads((folder / "publisher.json").read_text())
        context = ssl.create_default_context(cafile=plan["ca"])
        context.load_cert_chain(plan["certificate"], plan["key"])
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id="etikett-local-aws", protocol=mqtt.MQTTv311
        )
        client.tls_set_context(context)
        client.connect(plan["host"], int(plan["port"]), keepalive=60)
        client.loop_start()
        return client

    def publish(self, folder: Path, topic: str, payload: bytes) -> None:
        with self._lock:
            if self._client is None:
                self._client = self._connect(folder)
            client = self._client
        info = client.publish(topic, payload, qos=1)
        info.wait_for_publish(_PUBLISH_TIMEOUT)
        if not info.is_published():
            raise RuntimeError(f"the broker did not take the wake for {topic}")


_publisher = _Publisher()


def install() -> None:
    """Patch moto's IoT data plane `Publish` (process-wide, idempotent)."""
    with _installed:
        original = IoTDataPlaneBackend.publish
        if getattr(original, _MARK, False):
            return

        @functools.wraps(original)
        def publish(self: Any, topic: str, payload: bytes) -> None:
            folder = os.environ.get(BROKER_DIR)
            if not folder:
                original(self, topic, payload)
                return
            _publisher.publish(Path(folder), topic, payload)

        setattr(publish, _MARK, True)
        IoTDataPlaneBackend.publish = publish  # type: ignore[method-assign]
