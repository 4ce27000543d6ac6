"""The SDK's stateless session manager, one per event loop, held running: a manager's `run()` may be
entered once, and under Mangum (lifespan off) no application lifespan holds one open, so a task on
the loop does. Stateless managers keep nothing of a request once it is answered (no session, no
caller, no authorization): holding one saves only its set-up, per request about 0.2 ms."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from aws_lambda_powertools import Logger
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

logger = Logger(child=True)


@dataclass
class _Held:
    manager: StreamableHTTPSessionManager
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self.ready.is_set() and self.task is not None and not self.task.done()


# Per loop: Lambda runs every invocation of a container on one loop, local mode one loop per
# gateway worker thread. (The held task refers to its loop, so a weak mapping would keep every
# entry: a closed loop's entry is dropped when the next manager is made.)
_held: dict[asyncio.AbstractEventLoop, _Held] = {}


async def running(make: Callable[[], StreamableHTTPSessionManager]) -> StreamableHTTPSessionManager:
    """This loop's manager, made by `make` and started on first use; a manager whose run has
    ended (it never should) is replaced."""
    loop = asyncio.get_running_loop()
    held = _held.get(loop)
    if held is None or (held.ready.is_set() and not held.running):
        for closed in [other for other in _held if other.is_closed()]:
            del _held[closed]
        held = _Held(make())
        _held[loop] = held  # before any await: a concurrent first request waits for this one
        held.task = loop.create_task(_hold(held), name="etikett-mcp-manager")
    await held.ready.wait()
    if not held.running:
        raise RuntimeError("the MCP session manager could not start")
    return held.manager


async def _hold(held: _Held) -> None:
    try:
        async with held.manager.run():
            held.ready.set()
            await asyncio.Event().wait()  # until the loop ends
    except Exception:
        logger.exception("the MCP session manager stopped")
    finally:
        held.ready.set()  # waiters wake and see that it does not run
