"""cel-python (`celpy`), imported once per process on first use.

Importing celpy costs about 0.1 s, and building its parser (`etikett_engine.cel.programs`, on
the first compile) about 0.3 s more: a Lambda cold start that never converts a value or evaluates an
expression should pay neither. Values, the label helpers and programs reach celpy through `celpy()`.
"""

from __future__ import annotations

import threading
from typing import Any


class Celpy:
    """celpy's modules: the package, its value types and its evaluation error."""

    def __init__(self) -> None:
        # celpy loads with the first environment: importing the engine stays light
        # (tests/unit/test_cel.py).
        import celpy
        import celpy.celtypes
        import celpy.evaluation

        self.celpy: Any = celpy
        self.celtypes: Any = celpy.celtypes
        self.eval_error: type[Exception] = celpy.evaluation.CELEvalError


_CELPY: Celpy | None = None
_CELPY_LOCK = threading.Lock()


def celpy() -> Celpy:
    """celpy, imported on the first call."""
    global _CELPY
    loaded = _CELPY
    if loaded is None:
        with _CELPY_LOCK:
            if _CELPY is None:
                _CELPY = Celpy()
            loaded = _CELPY
    return loaded
