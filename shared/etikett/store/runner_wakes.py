"""Wakes for Runners that wait for one instead of polling their queue while idle: a message on the
Runner's own MQTT topic, published through AWS IoT Core's data plane (in local mode, local AWS
hands it to local mode's broker). The message says only "look at your queue": the job itself is
on the queue, so a lost wake delays a job (until the Runner's next look) and never loses one.

On AWS the data plane answers at the account's own endpoint: the template gives it to botocore
as `AWS_ENDPOINT_URL_IOT_DATA_PLANE`."""

from __future__ import annotations

from typing import Any

from etikett.store import clients

TOPIC_PREFIX = "etikett/runners"


def topic(runner_id: str) -> str:
    """The Runner's wake topic: its certificate's common name is its id, which the broker's rule
    (IoT policy: `${iot:Certificate.Subject.CommonName}`) matches against the topic."""
    return f"{TOPIC_PREFIX}/{runner_id}/wake"


def _iot_data() -> Any:
    return clients.client("iot-data")


def publish(runner_id: str) -> None:
    """Wake the Runner (QoS 1: the broker keeps it for a Runner that reconnects)."""
    _iot_data().publish(topic=topic(runner_id), qos=1, payload=b"{}")
