"""Deferred models (`etikett_engine.model.Model`, and `Strict` through it) are built one at a
time in a process, and building still finds the names it needs where pydantic looks for them."""

import threading
import time
from typing import Any

import pytest
from pydantic._internal import _model_construction

from etikett_engine.dsl.strict import Strict
from etikett_engine.model import Model


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """pydantic's model building, made slow enough for two threads to meet in it, counted."""
    seen = {"now": 0, "most": 0, "builds": 0}
    lock = threading.Lock()
    build = _model_construction.complete_model_class

    def slow_build(*args: Any, **kwargs: Any) -> Any:
        with lock:
            seen["now"] += 1
            seen["builds"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        try:
            time.sleep(0.02)
            return build(*args, **kwargs)
        finally:
            with lock:
                seen["now"] -= 1

    monkeypatch.setattr(_model_construction, "complete_model_class", slow_build)
    return seen


def _first_uses_at_once(use: Any, threads: int = 6) -> list[Any]:
    start = threading.Barrier(threads)
    results: list[Any] = [None] * threads

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = use()
        except Exception as failed:  # the test reports what a thread met
            results[index] = failed

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    return results


def test_concurrent_first_uses_build_a_model_once_and_one_at_a_time(
    builds: dict[str, int],
) -> None:
    class Line(Model):
        text: str

    class Order(Model):
        number: int
        lines: list[Line]

    results = _first_uses_at_once(
        lambda: Order.model_validate({"number": 7, "lines": [{"text": "a"}]})
    )

    assert all(isinstance(r, Order) and r.lines[0].text == "a" for r in results), results
    assert builds["most"] == 1  # never two builds at once
    assert builds["builds"] == 1  # the others found it built once they got the lock


def test_strict_models_are_built_one_at_a_time_too(builds: dict[str, int]) -> None:
    class Node(Strict):
        id: str

    results = _first_uses_at_once(lambda: Node.model_json_schema())

    assert all(isinstance(r, dict) and r["additionalProperties"] is False for r in results), results
    assert builds["most"] == 1


def test_an_explicit_rebuild_resolves_names_in_its_callers_namespace() -> None:
    class Holder(Model):
        inner: "Pending"  # defined below, found in this frame at the rebuild

    class Pending(Model):
        value: int

    assert Holder.model_rebuild() is True  # pydantic's answer: rebuilt
    assert Holder.model_validate({"inner": {"value": 3}}).inner == Pending(value=3)
