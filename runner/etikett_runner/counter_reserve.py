"""Counter blocks reserved while the service answers, for the deployments whose signed bundle
allows offline printing: of every counter their offline-printable labels read, a block of the
policy's `counter_block_size`, asked again once fewer than a quarter of it are left. Deployments
that never print offline reserve nothing (a block they never use is only a gap)."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from etikett_runner.channel import RunnerRemoved
from etikett_runner.counter_blocks import CounterBlocks
from etikett_runner.transport import Refused, ServerAway

log = logging.getLogger(__name__)

# As the service finds the counters a label reads (etikett.domain.counters.counter_values).
COUNTER_REFERENCE = re.compile(r"\bcounters\.([A-Za-z_][A-Za-z0-9_]*)")
_PERIODS = {"daily": "%Y-%m-%d", "monthly": "%Y-%m", "yearly": "%Y"}


def label_counters(document: dict[str, Any]) -> list[str]:
    """The counters a label version's expressions read (`counters.<name>`)."""
    from etikett_engine.dsl.label import LabelDocument

    names: set[str] = set()
    for source in LabelDocument.model_validate(document).expressions():
        names.update(COUNTER_REFERENCE.findall(source))
    return sorted(names)


def offline_policy(payload: dict[str, Any]) -> dict[str, Any]:
    """The bundle's signed offline policy; off when the bundle names none."""
    policy = payload.get("offline")
    return policy if isinstance(policy, dict) else {"allowed": False}


def period_of(reset: str, now: dt.datetime) -> str:
    """The reset period a value printed at `now` belongs to, as the service names it."""
    return now.strftime(_PERIODS[reset]) if reset in _PERIODS else ""


def low_water(size: int) -> int:
    return max(1, size // 4)


class CounterReserve:
    """Keeps reserved values in stock; `ask` is the agent channel's `counter_block`."""

    def __init__(self, blocks: CounterBlocks, ask: Callable[[dict[str, Any]], Any]) -> None:
        self.blocks = blocks
        self.ask = ask
        self._counters: dict[tuple[str, int], list[str]] = {}  # (label, version) → counters

    def wanted(self, payloads: Iterable[dict[str, Any]]) -> dict[str, int]:
        """Counter → block size, over the bundles that allow offline printing (the largest
        size asked for when two deployments read one counter)."""
        sizes: dict[str, int] = {}
        for payload in payloads:
            policy = offline_policy(payload)
            if policy.get("allowed") is not True:
                continue
            size = int(policy.get("counter_block_size") or 100)
            for label in payload.get("labels") or []:
                key = (str(label.get("label_id")), int(label.get("version") or 0))
                if key not in self._counters:
                    try:
                        self._counters[key] = label_counters(label["document"])
                    except (KeyError, ValueError) as error:
                        log.warning("counter blocks: label %s unreadable: %s", key[0], error)
                        self._counters[key] = []
                for counter in self._counters[key]:
                    sizes[counter] = max(size, sizes.get(counter, 0))
        return sizes

    def refill(self, payloads: Iterable[dict[str, Any]]) -> int:
        """Reserve what is below its low-water mark; the blocks granted. The service away
        stops the round (the next one tries again); a refusal skips that counter."""
        granted = 0
        for counter, size in sorted(self.wanted(payloads).items()):
            shape = self.blocks.shape(counter)  # its reset, once a block of it came
            period = period_of(shape[0], dt.datetime.now(dt.UTC)) if shape else None
            try:
                if self.blocks.refill(counter, size, low_water(size), self.ask, period):
                    granted += 1
                    log.info("counter %s: a block of %d values reserved", counter, size)
            except ServerAway as away:
                log.info("counter blocks: service away (%s); reserved later", away)
                break
            except RunnerRemoved:
                raise  # the flow host hands it on
            except Refused as refused:
                log.warning("counter %s: no block reserved: %s", counter, refused)
        return granted
