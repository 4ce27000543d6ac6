"""Where a flow may send the secrets it names (issue 23, item 5): origins in one normal form,
lint errors for a secret sent elsewhere, a warning for a secret that names no origins."""

from __future__ import annotations

from typing import Any

import pytest

from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.dsl.origins import origin, parse_origin
from etikett_engine.flows.lint import lint
from etikett_engine.flows.secret_origins import SecretFacts, sending_refused


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("https://ERP.example.com/api/x?y=1", "https://erp.example.com"),
        ("https://erp.example.com:443/", "https://erp.example.com"),
        ("https://erp.example.com:8443", "https://erp.example.com:8443"),
        ("http://127.0.0.1:9000/hook", "http://127.0.0.1:9000"),
        ("https://[::1]:8443/x", "https://[::1]:8443"),
        ("ftp://erp.example.com", None),
        ("erp.example.com", None),
        ("https://erp.example.com:99999", None),
    ],
)
def test_the_origin_of_a_url(url: str, normal: str | None) -> None:
    assert origin(url) == normal


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("https://erp.example.com/api", "no path"),
        ("https://erp.example.com?x=1", "no path"),
        ("https://user:pw@erp.example.com", "user or password"),
        ("http://erp.example.com", "https://"),
        ("https://*.example.com", "wildcards"),
        ("erp.example.com", "https:// origin"),
    ],
)
def test_what_a_secret_may_not_name_as_an_origin(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("?", r"\?").replace("*", r"\*")):
        parse_origin(text)
    assert parse_origin("HTTPS://ERP.example.com:443/") == "https://erp.example.com"


def test_sending_is_refused_only_outside_named_origins() -> None:
    assert sending_refused("https://evil.example.net/x", None) is None  # names none: anywhere
    origins = ("https://erp.example.com",)
    assert sending_refused("https://erp.example.com/api/labels", origins) is None
    refused = sending_refused("https://erp.example.com.evil.net/", origins)
    assert refused is not None and "https://erp.example.com.evil.net" in refused
    assert sending_refused("http://erp.example.com/", origins) is not None  # another scheme
    assert sending_refused("https://erp.example.com:8443/", origins) is not None


class Secrets:
    def __init__(self, **origins: tuple[str, ...] | None) -> None:
        self.origins = origins

    def secret(self, ref: str) -> SecretFacts | None:
        if ref not in self.origins:
            return None
        return SecretFacts(ref=ref, origins=self.origins[ref])


def _flow(*calls: dict[str, Any]) -> FlowDocument:
    trigger = {"id": "in", "type": "trigger.http", "path": "x", "wires": [c["id"] for c in calls]}
    return FlowDocument.model_validate(
        {"nodes": [trigger, *({"type": "action.http", **c} for c in calls)]}
    )


def test_lint_refuses_a_secret_sent_elsewhere_and_warns_of_an_unbound_one() -> None:
    document = _flow(
        {"id": "ok", "url": "https://erp.example.com/a", "credential": "erp"},
        {"id": "off", "url": "https://other.example.com/a", "credential": "erp"},
        {"id": "open1", "url": "https://a.example.com/", "credential": "open"},
        {"id": "open2", "url": "https://b.example.com/", "credential": "open"},
        {"id": "gone", "url": "https://a.example.com/", "credential": "nope"},
    )
    secrets = Secrets(erp=("https://erp.example.com",), open=None)
    found = [f for f in lint(document, None, secrets) if f.code.startswith("flow.credential")]
    assert [(f.code, f.severity, f.node_id, f.path) for f in found] == [
        ("flow.credential_origin_refused", "error", "off", "/nodes/2/url"),
        ("flow.credential_unbound", "warning", "open1", "/nodes/3/credential"),
    ]
    assert found[0].params == {
        "credential": "erp",
        "origin": "https://other.example.com",
        "allowed": ["https://erp.example.com"],
    }
    # Without a catalog (the Runner's own lint, older callers) nothing is said of secrets.
    assert not [f for f in lint(document) if f.code.startswith("flow.credential")]
