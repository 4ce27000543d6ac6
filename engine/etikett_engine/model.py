"""The base of the service's pydantic models: each builds its validator and serializer on first
use, not when its module is imported.

A function imports the models of every operation its routes declare but uses those of the one
operation a request asks for; building all of them at import was the larger part of a cold start
(pydantic's `defer_build`, set per model as pydantic supports it, and inherited by subclasses).
Building is the same work either way, so the first use pays it once per process.

Modules that define models do without `from __future__ import annotations`: with it, pydantic
compiles every field's annotation string when the class is created (a model of ten fields,
315 µs against 235), and a function's cold start creates every model of its routes.
Self-references are `typing.Self`, forward references to a later class quoted.
"""

import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

# pydantic 2.13 builds a deferred model in `model_rebuild`, which changes the class as it goes
# (its core schema deleted and set again) and is not safe in two threads at once: concurrent
# first requests in one process (local mode's thread pool) answered 500 (pydantic#13419). As
# pydantic itself does from 2.14 (pydantic#13438): one reentrant lock for every build, since
# building one model builds the models it holds.
_BUILDING = threading.RLock()


class Model(BaseModel):
    """Built at its first use, one build at a time in a process."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Mapping[str, Any] | None = None,
    ) -> bool | None:
        if cls.__pydantic_complete__ and not force:
            return None  # built: no lock to wait for
        # This frame stands between pydantic's and the caller's, whose namespace a depth names
        # (0: none).
        depth = _parent_namespace_depth + 1 if _parent_namespace_depth > 0 else 0
        with _BUILDING:
            return super().model_rebuild(
                force=force,
                raise_errors=raise_errors,
                _parent_namespace_depth=depth,
                _types_namespace=_types_namespace,
            )
