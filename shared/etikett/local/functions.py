"""Loads a template function's handler from its CodeUri, as the Lambda runtime would, and gives
it a Lambda context object."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from etikett.local.template import LOCAL_ACCOUNT, Function

Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class LambdaContext:
    """The runtime's context object (what Powertools reads), not an emulation of any AWS service."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    timeout_seconds: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = "local"
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self._deadline = time.monotonic() + self.timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class FunctionRegistry:
    """Imports each function's handler once (a warm container) and invokes it."""

    def __init__(self, functions: dict[str, Function], region: str) -> None:
        self._functions = functions
        self._region = region
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()

    def handler(self, logical_id: str) -> Handler:
        with self._lock:
            if logical_id not in self._handlers:
                self._handlers[logical_id] = self._import(self._functions[logical_id])
            return self._handlers[logical_id]

    def _import(self, function: Function) -> Handler:
        module_name, _, attribute = function.handler.rpartition(".")
        source = function.code_uri / (module_name.replace(".", "/") + ".py")
        unique = f"etikett_function_{function.logical_id}"
        spec = importlib.util.spec_from_file_location(unique, source)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {source}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[unique] = module
        spec.loader.exec_module(module)
        handler = getattr(module, attribute)
        if not callable(handler):
            raise ImportError(f"{function.handler} is not callable")
        return cast(Handler, handler)

    def context(self, logical_id: str) -> LambdaContext:
        function = self._functions[logical_id]
        name = f"etikett-local-{logical_id}"
        return LambdaContext(
            function_name=name,
            memory_limit_in_mb=function.memory,
            invoked_function_arn=f"arn:aws:lambda:{self._region}:{LOCAL_ACCOUNT}:function:{name}",
            timeout_seconds=function.timeout,
        )

    def invoke(self, logical_id: str, event: dict[str, Any]) -> Any:
        _ensure_event_loop()
        return self.handler(logical_id)(event, self.context(logical_id))

    def warm_all(self) -> None:
        for logical_id in self._functions:
            self.handler(logical_id)


_thread_state = threading.local()


def _ensure_event_loop() -> None:
    """Lambda runs handlers on a main thread that has an event loop (Mangum asks for it); the
    gateway's worker threads get one each, kept for the thread's life like a warm container's."""
    if getattr(_thread_state, "loop", None) is None:
        _thread_state.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(_thread_state.loop)
