"""Exponential backoff with full jitter, capped: how long to wait before the next attempt."""

from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    """`next()` answers a delay drawn from [0, min(cap, base x factor^n)] (n = failures so far),
    never below `floor`; `reset()` after a success. Full jitter spreads many Runners out after
    an outage instead of letting them return in step."""

    def __init__(
        self,
        base: float = 1.0,
        cap: float = 60.0,
        factor: float = 2.0,
        floor: float = 0.1,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if not 0 < base <= cap or factor < 1 or floor < 0:
            raise ValueError("need 0 < base <= cap, factor >= 1 and floor >= 0")
        self.base = base
        self.cap = cap
        self.factor = factor
        self.floor = min(floor, cap)
        self._rand = rand
        self.failures = 0

    def ceiling(self) -> float:
        """The largest delay the next attempt may wait."""
        # The exponent stops growing once the cap is reached: no float overflow after days down.
        exponent = 0
        value = self.base
        while exponent < self.failures and value < self.cap:
            value *= self.factor
            exponent += 1
        return min(self.cap, value)

    def next(self) -> float:
        delay = max(self.floor, self.ceiling() * self._rand())
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.failures = 0
