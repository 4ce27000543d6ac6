"""The Runner's timings, with defaults for production; tests shorten some of them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    # An idle Runner waits at its own queue; beats and configuration reads are its only calls
    # of the service: rare (docs/scale.md). Printer status changes and notices of changed
    # configuration (on the queue) are acted on at once.
    heartbeat_seconds: float = 600.0  # the service counts a Runner offline after 25 min
    config_seconds: float = 3600.0  # configuration read again at least this often
    claim_wait_seconds: int = 20  # long-poll; the service allows at most 20
    workers: int = 8  # jobs in progress at once (one per printer at a time)
    unreachable_seconds: float = 30.0  # retry an unreachable printer this long, then fail
    held_recheck_seconds: float = 3.0  # a held printer is checked again this often
    confirm_seconds: float = 30.0  # the printer's counter must advance within this …
    confirm_per_label_seconds: float = 2.0  # … plus this per label
    connect_timeout: float = 3.0
    answer_timeout: float = 3.0
    status_poll_seconds: float = 60.0  # idle printers' status for heartbeats
    shutdown_grace_seconds: float = 10.0  # jobs get this long to reach a safe point
    flows_seconds: float = 3600.0  # deployed flows asked for at least this often (and on notice)
    folder_seconds: float = 0.5  # watched folders are looked at this often
    flow_retry_seconds: float = 30.0  # a flow that could not start is tried again after this

    def confirm_timeout(self, labels: int) -> float:
        return self.confirm_seconds + self.confirm_per_label_seconds * max(labels, 0)
