"""The retry schedule: exponential, capped by SQS's longest delay, as many attempts as the template
parameter says."""

from __future__ import annotations

import pytest

from etikett import settings
from etikett.domain.webhooks import webhook_delivery as delivery
from etikett.settings import Settings


def test_waits_double_from_two_seconds_and_stop_at_900() -> None:
    assert [delivery.backoff_seconds(n) for n in range(1, 12)] == [
        2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900,
    ]  # fmt: skip
    assert delivery.backoff_seconds(40) == 900


def test_default_schedule_spans_about_47_minutes() -> None:
    waits = delivery.schedule(Settings().webhook_max_attempts)
    assert len(waits) == 11
    assert sum(waits) == 2822  # the 12th attempt ~47 min after the first


def test_max_attempts_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ETIKETT_WEBHOOK_MAX_ATTEMPTS", raising=False)
    settings.reload()
    assert delivery.max_attempts() == 12
    monkeypatch.setenv("ETIKETT_WEBHOOK_MAX_ATTEMPTS", "3")
    settings.reload()
    assert delivery.max_attempts() == 3
    assert delivery.schedule(3) == [2, 4]
