"""Where webhooks may be sent: HTTPS anywhere public, plain HTTP only to loopback, and loopback
or private addresses only where private networks are allowed (local mode)."""

from __future__ import annotations

import pytest

from etikett.domain.outgoing import MAX_URL_LENGTH, UrlRefused, check_url, is_loopback


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/hooks",
        "https://example.com:8443/hooks?tenant=7",
        "https://203.0.113.9/",
        "http://localhost/hooks",
        "http://localhost.:8080/",
        "http://LOCALHOST:8080/hooks",
        "http://127.0.0.1:9000/hooks",
        "http://127.10.20.30/",
        "http://[::1]:9000/hooks",
    ],
)
def test_accepted(url: str) -> None:
    assert check_url(url, private_allowed=True) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://example.com/hooks", "loopback"),
        ("http://10.0.0.5/hooks", "loopback"),
        ("http://192.168.1.20:8080/", "loopback"),
        ("http://0.0.0.0:8080/", "loopback"),
        ("http://[::]:8080/", "loopback"),
        ("http://127.0.0.1.nip.io/", "loopback"),
        ("http://localhost.example.com/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("ftp://example.com/", "https://"),
        ("file:///etc/passwd", "https://"),
        ("example.com/hooks", "https://"),
        ("https:///nohost", "host"),
        ("https://user:secret@example.com/", "credentials"),
        ("https://example.com/#frag", "fragment"),
        ("https://example.com/a b", "spaces"),
        ("https://example.com:99999/", "valid"),
        ("https://[::1/", "valid"),
        ("https://example.com/" + "a" * MAX_URL_LENGTH, "characters"),
    ],
)
def test_refused(url: str, reason: str) -> None:
    with pytest.raises(UrlRefused, match=reason):
        check_url(url, private_allowed=True)


def test_loopback_names_and_addresses() -> None:
    assert is_loopback("localhost") and is_loopback("127.255.0.1") and is_loopback("::1")
    assert not is_loopback("128.0.0.1") and not is_loopback("::2") and not is_loopback("local")
