"""Loaded by a process whose PYTHONPATH names this folder (`bench/aws_calls.py` starts
`etikett dev` so): every botocore API call is appended to $ETIKETT_BENCH_CALL_LOG as one line,
`<monotonic seconds>\t<service>.<operation>\t<function>\t<request>`, where function and request
name the local function invocation the call was made in (`-` for the pollers' own calls)."""

from __future__ import annotations

import contextvars
import os
import threading
import time
from typing import Any

_PATH = os.environ.get("ETIKETT_BENCH_CALL_LOG")


def _install(path: str) -> None:
    from botocore.client import BaseClient

    from etikett.local.functions import FunctionRegistry

    lock = threading.Lock()
    log = open(path, "a", buffering=1)  # noqa: SIM115 - open for the process's lifetime
    # A context variable, not a thread-local: FastAPI runs a sync route on a worker thread,
    # which gets a copy of the invoking thread's context.
    current: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
        "invocation", default=("-", "-")
    )
    make_api_call = BaseClient._make_api_call
    invoke = FunctionRegistry.invoke

    def counted_call(self: BaseClient, operation_name: str, api_params: Any) -> Any:
        service = self.meta.service_model.service_name
        function, request = current.get()
        line = f"{time.monotonic():.6f}\t{service}.{operation_name}\t{function}\t{request}\n"
        with lock:
            log.write(line)
        return make_api_call(self, operation_name, api_params)

    def named_invoke(self: FunctionRegistry, logical_id: str, event: dict[str, Any]) -> Any:
        request = event.get("routeKey") or (event.get("Records") or [{}])[0].get("eventSource")
        token = current.set((logical_id, str(request).replace(" ", "_")))
        try:
            return invoke(self, logical_id, event)
        finally:
            current.reset(token)

    BaseClient._make_api_call = counted_call  # type: ignore[method-assign]
    FunctionRegistry.invoke = named_invoke  # type: ignore[method-assign]


if _PATH:
    _install(_PATH)
