"""The documented refusals of a context value PUT (etikett.domain.runners.context_limits): the
Runners' and groups' context and a deployment's share them, so each router declares them without
the other's modules."""

from __future__ import annotations

from etikett.api.routing import Responses

CONTEXT_BOUNDS: Responses = {
    413: {"description": "A value over 4 KB as JSON (`context.value_too_large`)"},
    422: {
        "description": "`request.invalid`, or the owner's parameters over 64 KB together or "
        "more than 100 (`context.too_large`)"
    },
}
