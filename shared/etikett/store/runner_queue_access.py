"""Short-lived AWS credentials that reach one Runner's queue and nothing else: the Runner
long-polls its queue itself with them, so no Lambda waits for it (docs/scale.md)."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from etikett.settings import get_settings
from etikett.store import clients

# What a Runner may do on its own queue: wait for work, hide what it holds while it asks the
# service to claim it, and drop the service's notices it has read. Sending stays the service's.
QUEUE_ACTIONS = ("sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage")


class QueueCredentials(NamedTuple):
    queue_url: str
    region: str
    endpoint_url: str | None  # None: the region's public SQS endpoint
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at: datetime


class NoQueueRole(Exception):
    """The deployment names no role for Runners' queue credentials."""


def _sts() -> Any:
    return clients.client("sts")


def queue_arn(queue_url: str) -> str:
    """arn:aws:sqs:<region>:<account>:<name> of a queue URL (`https://sqs.<region>…/<acct>/<name>`
    or moto's `http://host:port/<acct>/<name>`)."""
    parts = urlsplit(queue_url).path.strip("/").split("/")
    if len(parts) != 2:
        raise ValueError(f"not a queue URL: {queue_url}")
    account, name = parts
    return f"arn:aws:sqs:{get_settings().region}:{account}:{name}"


def session_policy(queue_url: str) -> str:
    """The session policy: the role's permissions narrowed to this one queue. IAM grants the
    intersection of role and session policy, so the credentials reach no other queue."""
    statement = {"Effect": "Allow", "Action": list(QUEUE_ACTIONS), "Resource": queue_arn(queue_url)}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def issue(queue_url: str, session_name: str, seconds: int) -> QueueCredentials:
    role = get_settings().runner_queue_role_arn
    if not role:
        raise NoQueueRole()
    answer = _sts().assume_role(
        RoleArn=role,
        RoleSessionName=session_name[:64],
        Policy=session_policy(queue_url),
        DurationSeconds=seconds,
    )["Credentials"]
    return QueueCredentials(
        queue_url=queue_url,
        region=get_settings().region,
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL_SQS") or os.environ.get("AWS_ENDPOINT_URL"),
        access_key_id=answer["AccessKeyId"],
        secret_access_key=answer["SecretAccessKey"],
        session_token=answer["SessionToken"],
        expires_at=answer["Expiration"],
    )
