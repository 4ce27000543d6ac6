"""Moved to `etikett.outgoing` (a lower layer, so the AI providers and the flow HTTP node use the
same rules and client); these names stay for the webhook modules that import them from here."""

from etikett.outgoing import MAX_URL_LENGTH, UrlRefused, check_url, is_loopback

__all__ = ["MAX_URL_LENGTH", "UrlRefused", "check_url", "is_loopback"]
