"""Settings read from the environment: the agent channel's URL from its domain on AWS."""

from __future__ import annotations

import pytest

from etikett.settings import Settings


@pytest.mark.parametrize(
    ("environment", "agent_url"),
    [
        ({}, None),
        ({"ETIKETT_AGENT_DOMAIN": ""}, None),  # the template's default: no custom domain
        ({"ETIKETT_AGENT_DOMAIN": "runners.example.com"}, "https://runners.example.com"),
        (
            {"ETIKETT_AGENT_DOMAIN": "runners.example.com", "ETIKETT_AGENT_URL": "https://a:8443"},
            "https://a:8443",
        ),
    ],
)
def test_the_agent_url_comes_from_the_agent_domain_unless_given(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], agent_url: str | None
) -> None:
    for name in ("ETIKETT_AGENT_DOMAIN", "ETIKETT_AGENT_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert Settings().agent_url == agent_url
