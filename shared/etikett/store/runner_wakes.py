"""Wakes for Runners that wait for one instead of polling their queue while idle: a message on the
Runner's own MQTT topic, published through AWS IoT Core's data plane (in local mode, local AWS
hands it to local mode's broker). The message says only "look at your queue": the job itself is
on the queue, so a lost wake delays a job (until the Runner's next look) and never loses one.

IoT Core takes a Runner's client certificate once it is registered there with the policy that
lets it connect as its id and read its own topic (`register`); a removed Runner's certificate is
deactivated (`deactivate`), which also closes its connection."""

from __future__ import annotations

import os
from typing import Any

from etikett.settings import get_settings
from etikett.store import clients


class NotRegistered(Exception):
    """IoT Core did not take the certificate (or its policy)."""


def topic(runner_id: str) -> str:
    """The Runner's wake topic. Its certificate's common name is its id, which the broker's rule
    (the IoT policy's `${iot:Certificate.Subject.CommonName}`) matches against the topic."""
    return f"{get_settings().runner_wake_topic_prefix}-{runner_id}"


def _iot_data() -> Any:
    # The data plane answers at the account's own endpoint, the host Runners connect to; local
    # mode (AWS_ENDPOINT_URL) aims every client at local AWS.
    host = get_settings().runner_wake_host
    if os.environ.get("AWS_ENDPOINT_URL") or not host:
        return clients.client("iot-data")
    return clients.client("iot-data", endpoint_url=f"https://{host}")


def publish(runner_id: str) -> None:
    """Wake the Runner (QoS 1: the broker keeps it for a Runner that reconnects)."""
    _iot_data().publish(topic=topic(runner_id), qos=1, payload=b"{}")


def register(certificate_pem: str, policy: str) -> str:
    """Register a Runner's certificate with IoT Core (it was issued by our CA, which IoT Core
    need not know) and give it `policy`; its IoT certificate id."""
    iot = clients.client("iot")
    try:
        made = iot.register_certificate_without_ca(certificatePem=certificate_pem, status="ACTIVE")
    except iot.exceptions.ResourceAlreadyExistsException as exists:  # registered before
        made = {
            "certificateId": exists.response.get("resourceId"),
            "certificateArn": exists.response.get("resourceArn"),
        }
    if not made.get("certificateId") or not made.get("certificateArn"):
        raise NotRegistered("IoT Core named no certificate")
    iot.attach_policy(policyName=policy, target=made["certificateArn"])
    return str(made["certificateId"])


def deactivate(certificate_id: str) -> None:
    """The certificate no longer connects (IoT Core closes a connection it holds)."""
    clients.client("iot").update_certificate(certificateId=certificate_id, newStatus="INACTIVE")
