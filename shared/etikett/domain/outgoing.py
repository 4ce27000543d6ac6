"""The service's outgoing HTTP: the engine's rules (`etikett_engine.outgoing`) with the service's
own setting for private networks (`ETIKETT_OUTGOING_PRIVATE_NETWORKS`), which the engine never
reads itself."""

from etikett.settings import get_settings
from etikett_engine import outgoing as engine
from etikett_engine.outgoing import MAX_URL_LENGTH, UrlRefused, is_loopback

__all__ = ["MAX_URL_LENGTH", "UrlRefused", "check_url", "is_loopback", "private_networks_allowed"]


def private_networks_allowed() -> bool:
    return get_settings().outgoing_private_networks


def check_url(
    url: str, *, private_allowed: bool | None = None, max_length: int = MAX_URL_LENGTH
) -> str:
    """`etikett_engine.outgoing.check_url`; `private_allowed` by default the service's setting."""
    allowed = private_networks_allowed() if private_allowed is None else private_allowed
    return engine.check_url(url, private_allowed=allowed, max_length=max_length)
