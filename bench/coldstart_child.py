"""One cold-start measurement in a fresh interpreter; started by bench/run.py, never imported.

Usage (plain string arguments, so that nothing but the loader is imported before timing):

    coldstart_child.py modules [after=NAME,NAME] NAME [NAME ...]
    coldstart_child.py modules @LIST_FILE
    coldstart_child.py floor LIST_FILE
    coldstart_child.py handler FILE ATTRIBUTE [EVENT FUNCTION_NAME MEMORY_MB]
    coldstart_child.py anatomy FILE ATTRIBUTE LIST_FILE

`after=` imports those modules first, untimed, so that only the increment is measured. A LIST_FILE
holds module names as a JSON list, as written by a `handler` run with BENCH_LIST_MODULES=LIST_FILE:
every module outside etikett (third-party and stdlib) that the handler's import brought in.
`floor` imports the modules of a LIST_FILE as a function entry would with nothing of ours: under
the same cold-start settings (`etikett.coldstart` first, its `done()` last), all of it timed.

What-if switches, from the environment: BENCH_BLOCK_MODULES (comma-separated) makes those packages
unimportable, as if not installed (to emulate the deployed dependency layer, which lacks some of
the venv's extras); BENCH_GC_OFF=1 disables the cyclic garbage collector before timing;
BENCH_SOURCE_ONLY=1 loads every module outside the standard library without bytecode, compiled
from source in the process, as from a layer without .pyc files on Lambda's read-only /opt.

Prints one line `BENCH-RESULT {json}` with the figures in milliseconds. Everything else on stdout
(the handler's Powertools log and metric lines) is ignored by the parent.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

MARKER = "BENCH-RESULT "
ENTRY_MODULE = "bench_function_entry"


class BenchContext:
    """The minimal Lambda context object Powertools reads."""

    def __init__(self, function_name: str, memory_mb: int) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = memory_mb
        self.invoked_function_arn = (
            f"arn:aws:lambda:eu-central-1:123456789012:function:{function_name}"
        )
        self.aws_request_id = "bench-cold-request"
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 15_000


def load(file: str) -> ModuleType:
    """Imports an entry module from its file, as the Lambda runtime (and local mode) do."""
    spec = importlib.util.spec_from_file_location(ENTRY_MODULE, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[ENTRY_MODULE] = module
    spec.loader.exec_module(module)
    return module


def ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def cpu_ms(since: float) -> float:
    """CPU time of this process since `since` (time.process_time): unlike the wall clock, it
    leaves out the time the process waited for a core of a busy machine."""
    return (time.process_time() - since) * 1000


def read_list(path: str) -> list[str]:
    import json

    with open(path) as stream:
        names: list[str] = json.load(stream)
    return names


def import_all(names: list[str]) -> int:
    """Imports each module; returns how many could not be imported on their own (a few aliases,
    e.g. vendored `six.moves` entries, exist only as a side effect of their parent)."""
    failed = 0
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            failed += 1
    return failed


def modules(names: list[str]) -> dict[str, Any]:
    if names and names[0].startswith("after="):
        import_all(names.pop(0).removeprefix("after=").split(","))
    if len(names) == 1 and names[0].startswith("@"):
        names = read_list(names[0][1:])
        start = time.perf_counter()
        failed = import_all(names)
        return {"import_ms": ms(start), "modules": len(names), "failed": failed}
    start = time.perf_counter()
    for name in names:
        importlib.import_module(name)
    return {"import_ms": ms(start)}


def floor(listing: str) -> dict[str, Any]:
    """A handler's third-party modules alone, under the cold-start settings its entry has."""
    names = read_list(listing)
    start, cpu = time.perf_counter(), time.process_time()
    coldstart = importlib.import_module("etikett.coldstart")
    failed = import_all(names)
    coldstart.done()
    return {
        "import_ms": ms(start),
        "import_cpu_ms": cpu_ms(cpu),
        "modules": len(names),
        "failed": failed,
    }


def compile_from_source() -> None:
    """Modules outside the standard library load from source only (see BENCH_SOURCE_ONLY)."""
    import importlib.machinery as machinery
    import sysconfig

    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])

    class SourceOnly(machinery.SourceFileLoader):
        def get_data(self, path: str) -> bytes:
            if path.endswith(".pyc"):
                raise OSError("no bytecode here")
            return super().get_data(path)

        def set_data(self, *args: Any, **kwargs: Any) -> None:
            pass  # read-only: nothing is cached for the next process

    source_only = machinery.FileFinder.path_hook(
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (SourceOnly, machinery.SOURCE_SUFFIXES),
    )

    def hook(entry: str) -> Any:
        if os.path.realpath(entry or ".").startswith(stdlib):
            raise ImportError("the standard library keeps its bytecode")
        return source_only(entry)

    sys.path_hooks.insert(0, hook)
    sys.path_importer_cache.clear()


def handler(file: str, attribute: str, invoke: list[str]) -> dict[str, Any]:
    before = set(sys.modules)
    start, cpu = time.perf_counter(), time.process_time()
    entry = getattr(load(file), attribute)
    result: dict[str, Any] = {"import_ms": ms(start), "import_cpu_ms": cpu_ms(cpu)}
    brought = [
        name
        for name, module in list(sys.modules.items())
        if name not in before
        and module is not None
        and name != ENTRY_MODULE
        and name.partition(".")[0] not in ("etikett", "etikett_engine")
    ]
    import json  # after timing: the handler's imports are what is measured

    listing = os.environ.get("BENCH_LIST_MODULES")
    if listing:
        with open(listing, "w") as stream:
            json.dump(brought, stream)
    if invoke:
        event_file, function_name, memory = invoke
        with open(event_file) as stream:
            event = json.load(stream)
        context = BenchContext(function_name, int(memory))
        start = time.perf_counter()
        response = entry(event, context)
        result["invoke_ms"] = ms(start)
        result["status"] = int(response.get("statusCode", 0))
        # The same request again: what a warm container answers, for comparison.
        context.aws_request_id = "bench-warm-request"
        start = time.perf_counter()
        entry(event, context)
        result["second_invoke_ms"] = ms(start)
    return result


class GcClock:
    """Time spent in the cyclic garbage collector, per phase of the anatomy."""

    def __init__(self) -> None:
        self.phase = "start"
        self.spent: dict[str, float] = {}
        self._start = 0.0
        gc.callbacks.append(self)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.spent[self.phase] = self.spent.get(self.phase, 0.0) + ms(self._start)


def anatomy(file: str, attribute: str, listing: str, clock: GcClock) -> dict[str, Any]:
    """The same import, split into phases: everything outside etikett first (the modules the
    handler's import brings in, in the same order), then etikett's app/entry/groups modules, then
    the entry module with each group's router import, create_app() and http_handler() timed apart.
    """
    names = read_list(listing)
    clock.phase = "outside"
    start = time.perf_counter()
    failed = import_all(names)
    phases: dict[str, Any] = {"outside": ms(start), "failed_imports": failed}

    clock.phase = "etikett_core"
    start = time.perf_counter()
    app_module = importlib.import_module("etikett.api.app")
    entry_module = importlib.import_module("etikett.api.entry")
    groups_module = importlib.import_module("etikett.api.groups")
    phases["etikett_core"] = ms(start)

    spent: dict[str, float] = {"create_app": 0.0, "http_handler": 0.0}
    routers: dict[str, float] = {}

    def timed(function: Callable[..., Any], key: str | None) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            outer = clock.phase
            # routes_of(group): the group's router module and everything it imports
            clock.phase = f"router:{args[0]}" if key is None else key
            begin = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                if key is None:
                    routers[args[0]] = routers.get(args[0], 0.0) + ms(begin)
                else:
                    spent[key] += ms(begin)
                clock.phase = outer

        return wrapper

    # The entry modules do `from etikett.api.app import create_app` (etc.) and all_routes() calls
    # routes_of() through its module globals: all of them pick up the timed wrappers.
    app_module.create_app = timed(app_module.create_app, "create_app")
    entry_module.http_handler = timed(entry_module.http_handler, "http_handler")
    groups_module.routes_of = timed(groups_module.routes_of, None)

    clock.phase = "routers"  # what the entry module does outside the timed calls
    start = time.perf_counter()
    getattr(load(file), attribute)
    entry_ms = ms(start)
    phases["routers"] = entry_ms - spent["create_app"] - spent["http_handler"]
    phases.update(spent)
    phases["total"] = phases["outside"] + phases["etikett_core"] + entry_ms
    phases["per_router"] = routers
    return phases


def main(argv: list[str]) -> int:
    for name in filter(None, os.environ.get("BENCH_BLOCK_MODULES", "").split(",")):
        sys.modules[name] = None  # type: ignore[assignment]  # now `import name` fails
    if os.environ.get("BENCH_SOURCE_ONLY") == "1":
        compile_from_source()
    if os.environ.get("BENCH_GC_OFF") == "1":
        gc.disable()
    kind, *rest = argv
    if kind == "modules":
        result = modules(rest)
    elif kind == "floor":
        result = floor(rest[0])
    elif kind == "handler":
        result = handler(rest[0], rest[1], rest[2:])
    elif kind == "anatomy":
        clock = GcClock()
        result = anatomy(rest[0], rest[1], rest[2], clock)
        result["gc"] = clock.spent
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    import json

    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
