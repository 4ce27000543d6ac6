"""The assets bucket (S3): installers, the Runner CA's truststore, and links to fetch them."""

from __future__ import annotations

from etikett.settings import get_settings
from etikett.store import clients


def put(key: str, body: bytes, content_type: str) -> None:
    clients.client("s3").put_object(
        Bucket=get_settings().required("assets_bucket"),
        Key=key,
        Body=body,
        ContentType=content_type,
    )


def download_url(key: str, expires_seconds: int) -> str:
    """A presigned GET of the object, valid for `expires_seconds`."""
    return str(
        clients.client("s3").generate_presigned_url(
            "get_object",
            Params={"Bucket": get_settings().required("assets_bucket"), "Key": key},
            ExpiresIn=expires_seconds,
        )
    )


def configured() -> bool:
    return get_settings().assets_bucket is not None
