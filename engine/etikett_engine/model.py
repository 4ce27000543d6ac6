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

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
