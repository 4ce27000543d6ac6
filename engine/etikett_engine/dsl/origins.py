"""Web origins (`https://erp.example.com`, scheme, host and port) as a `secret` credential names
where it may be sent and a flow's `action.http` names where it sends: one normal form, so that
the credential's check at store time, lint, delivery to a Runner and the Runner's HTTP node
compare alike. Part of the engine a Runner installs."""

from __future__ import annotations

from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_DEFAULT_PORTS = {"https": 443, "http": 80}


def origin(url: str) -> str | None:
    """The origin of an http(s) URL in normal form (lower case, the default port left out), or
    None when it has none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{shown}:{port}"
    return f"{scheme}://{shown}"


def parse_origin(text: str) -> str:
    """`text` as an origin a secret may name, in normal form; ValueError saying why not. HTTPS,
    or plain HTTP to loopback (as every outgoing request); nothing but scheme, host and port."""
    normal = origin(text)
    if normal is None:
        raise ValueError("is not an https:// origin")
    parts = urlsplit(text.strip())
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not carry a user or password")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("is an origin only: scheme, host and port, no path or query")
    if "*" in (parts.hostname or ""):
        raise ValueError("names one host; wildcards are not supported")
    if parts.scheme.lower() == "http" and parts.hostname not in LOOPBACK_HOSTS:
        raise ValueError("must be https:// (plain http:// only to loopback)")
    return normal
