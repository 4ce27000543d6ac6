"""Where the service may send HTTP requests of its own (webhooks): HTTPS anywhere, plain HTTP only
to loopback, for development. Checked when a receiver is registered and again before each send."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
LOOPBACK_NAMES = frozenset({"localhost"})


class UrlRefused(ValueError):
    """The URL is not one the service sends to; the message says why."""


def is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """`url` if the service may POST to it, else `UrlRefused`."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlRefused(f"at most {MAX_URL_LENGTH} characters")
    if any(ord(c) <= 32 or ord(c) == 127 for c in url):
        raise UrlRefused("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as error:
        raise UrlRefused(f"not a valid URL ({error})") from None
    if parts.scheme not in ("https", "http"):
        raise UrlRefused("must be an https:// URL (or http:// to loopback for development)")
    if not host:
        raise UrlRefused("must name a host")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused("must not contain credentials; the signature authenticates the sender")
    if parts.fragment:
        raise UrlRefused("must not contain a fragment")
    if parts.scheme == "http" and not is_loopback(host):
        raise UrlRefused(
            "plain http:// is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https://"
        )
    return url
