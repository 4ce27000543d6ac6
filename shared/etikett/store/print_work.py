"""Large print requests render later, in the print-render function: their work (document,
records, serials) waits in S3 and a message on the render queue names the job."""

from __future__ import annotations

import json

from etikett.settings import get_settings
from etikett.store import clients


def _key(job_id: str) -> str:
    return f"prints/{job_id}/work.json"


def put(job_id: str, work: bytes) -> None:
    clients.client("s3").put_object(
        Bucket=get_settings().required("assets_bucket"), Key=_key(job_id), Body=work
    )


def get(job_id: str) -> bytes:
    response = clients.client("s3").get_object(
        Bucket=get_settings().required("assets_bucket"), Key=_key(job_id)
    )
    return bytes(response["Body"].read())


def enqueue(job_id: str) -> None:
    clients.client("sqs").send_message(
        QueueUrl=get_settings().required("print_render_queue"),
        MessageBody=json.dumps({"job_id": job_id}),
    )
