"""Concurrent clients printing and previewing through the local gateway, for a bounded time: the
load test (tests/e2e/test_load.py, short) and the load benchmark (bench/load_bench.py, 20
clients for 60 s) share it. Every answer that is not the documented success is an error; the
labels each print asked for are then counted at the printer simulator, not in the service's
records."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Outcome:
    """What the clients saw: latencies per kind (s), errors with their reason, accepted jobs."""

    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"print": [], "preview": []})
    errors: Counter[str] = field(default_factory=Counter)
    job_ids: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(len(values) for values in self.latencies.values()) + sum(self.errors.values())

    def percentile(self, kind: str, share: float) -> float:
        ordered = sorted(self.latencies[kind])
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_load(
    base_url: str,
    tokens: list[str],
    label_id: str,
    printer: str,
    *,
    clients: int,
    seconds: float,
    variables: Callable[[int, int], dict[str, Any]] = lambda client, n: {"name": f"{client}-{n}"},
) -> Outcome:
    """`clients` threads, each with its own connection and one of `tokens` (round robin), send
    `POST /print` and `POST /labels/{id}/preview` alternately until `seconds` have passed."""
    outcome = Outcome()
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    barrier = threading.Barrier(clients)

    def client(index: int) -> None:
        http = httpx.Client(
            base_url=f"{base_url}/api/v1",
            headers={"Authorization": f"Bearer {tokens[index % len(tokens)]}"},
            timeout=60,
            trust_env=False,
        )
        barrier.wait()
        sent = 0
        with http:
            while time.monotonic() < stop_at:
                kind = "print" if sent % 2 == 0 else "preview"
                body = {"variables": variables(index, sent)}
                started = time.perf_counter()
                try:
                    if kind == "print":
                        response = http.post(
                            "/print", json={"label_id": label_id, "printer": printer, **body}
                        )
                        ok = response.status_code == 202
                    else:
                        response = http.post(f"/labels/{label_id}/preview", json=body)
                        ok = (
                            response.status_code == 200
                            and response.headers.get("content-type") == "image/png"
                        )
                    error = None if ok else f"{kind} {response.status_code} {response.text[:120]}"
                except httpx.HTTPError as failure:
                    error = f"{kind} {type(failure).__name__}"
                elapsed = time.perf_counter() - started
                with lock:
                    if error:
                        outcome.errors[error] += 1
                    else:
                        outcome.latencies[kind].append(elapsed)
                        if kind == "print":
                            outcome.job_ids.append(response.json()["job_id"])
                sent += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 120)
    outcome.seconds = time.monotonic() - started
    return outcome


def final_jobs(
    get_job: Callable[[str], dict[str, Any]], job_ids: list[str], timeout: float = 300
) -> dict[str, dict[str, Any]]:
    """Each job (as `get_job` reads it) once it has ended (`confirmed`, `failed`, `cancelled`),
    or as it was at `timeout`."""
    final = {"confirmed", "succeeded", "failed", "cancelled"}
    jobs: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    pending = list(job_ids)
    while pending and time.monotonic() < deadline:
        still = []
        for job_id in pending:
            job = get_job(job_id)
            jobs[job_id] = job
            if job.get("status") not in final:
                still.append(job_id)
        pending = still
        if pending:
            time.sleep(0.5)
    return jobs
