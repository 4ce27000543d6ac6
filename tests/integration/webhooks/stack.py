"""The events-and-webhooks path of the real template.yaml, in this process: the events publisher
on the events table's stream and the webhook sender on the deliveries queue (support/stack.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from support.stack import Stack, local_stack

PATH_FUNCTIONS = frozenset({"EventsPublisherFunction", "WebhookSenderFunction"})

__all__ = ["PATH_FUNCTIONS", "Stack", "webhook_stack"]


def webhook_stack(
    home: Path, monkeypatch: pytest.MonkeyPatch, parameters: dict[str, Any] | None = None
) -> AbstractContextManager[Stack]:
    return local_stack(home, monkeypatch, parameters, PATH_FUNCTIONS)
