"""`LocalAws`: the moto server of local mode, started with the state file's state and snapshotting
it (once changes pause, at most every half minute while they go on, and on `stop()`)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from types import TracebackType

from werkzeug.serving import BaseWSGIServer, make_server

from etikett.local import (
    moto_actions,
    moto_attribute_values,
    moto_conditions,
    moto_item_size,
    moto_sessions,
    moto_transactions,
    moto_update_expressions,
    moto_wakes,
)
from etikett.local.aws.gateway import LockingMotoApp
from etikett.local.aws.locking import ReadWriteLock
from etikett.local.aws.options import check_options
from etikett.local.aws.pickling import Snapshot
from etikett.local.aws.snapshots import (
    dump_backends,
    load_state_file,
    replace_backends,
    write_state_file,
)
from etikett.local.moto_http import KeepAliveMotoRequestHandler

__all__ = ["LocalAws"]

logger = logging.getLogger(__name__)


class _IdleTimeouts(logging.Filter):
    """Drops http.server's "Request timed out" of a connection that sent no request in time."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Request timed out" not in record.getMessage()


# Waiting this long for in-flight requests means something is stuck (e.g. a request that calls
# back into this server); giving up lets blocked requests continue instead of deadlocking.
_PERIODIC_LOCK_TIMEOUT = 5.0
# A snapshot holds every request while it pickles the state, which takes longer the more the
# state holds (tenths of a second with tens of thousands of items): the next periodic one waits
# at least this many times as long, so that requests wait for snapshots at most a twentieth of
# the time, also while a bulk of writes (a sync of offline prints, an import) keeps the state
# dirty. (At a tenth, snapshots still took a sixth of local AWS's processor time in a sync.)
_WAIT_PER_HOLD = 19.0
# A snapshot comes once changes pause for the snapshot interval: pickling the state during a
# bulk of writes (a sync of offline prints, a stream of prints) took a fifth to a quarter of
# local AWS's processor time and held each request meanwhile (0.2-0.4 s a snapshot with a few
# thousand prints in the tables). While changes go on without a pause, one comes at most this
# often. What a crash can lose is that much: `etikett dev` killed is not such a crash, since
# this process still writes its final snapshot when its parent goes.
BUSY_SNAPSHOT_SECONDS = 30.0
_EXPLICIT_LOCK_TIMEOUT = 30.0


class LocalAws:
    """A moto server on `host`:`port` whose state is kept in `state_file`."""

    def __init__(
        self,
        state_file: Path | None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        snapshot_interval: float = 1.0,
        max_wait_seconds: int = 1,
        busy_snapshot_seconds: float = BUSY_SNAPSHOT_SECONDS,
    ) -> None:
        check_options(snapshot_interval, max_wait_seconds)
        self._state_file = Path(state_file) if state_file is not None else None
        self._host = host
        self._port = port
        self._snapshot_interval = snapshot_interval
        self._busy_snapshot_seconds = max(busy_snapshot_seconds, snapshot_interval)
        self._max_wait_seconds = max_wait_seconds
        self._lock = ReadWriteLock()
        self._snapshot_mutex = threading.Lock()
        self._dirty = False
        self._dirty_since = 0.0  # monotonic: the first change since the last snapshot
        self._changed_at = 0.0  # monotonic: the last change
        self._stopping = threading.Event()
        self._server: BaseWSGIServer | None = None
        self._app: LockingMotoApp | None = None
        self._server_thread: threading.Thread | None = None
        self._snapshot_thread: threading.Thread | None = None
        self._last_snapshot_error: str | None = None
        self._last_hold = 0.0  # seconds the last snapshot held requests
        self._last_taken = 0.0  # monotonic: when the last snapshot released the requests

    def start(self) -> None:
        """Replace moto's process-wide state with the state file's (or with nothing), then
        serve in daemon threads."""
        if self._server is not None:
            raise RuntimeError("LocalAws is already started")
        # werkzeug logs every request at INFO; errors still come through, but not the idle
        # keep-alive connections of the SDKs' pools that the server times out (not an error).
        werkzeug = logging.getLogger("werkzeug")
        werkzeug.setLevel(logging.WARNING)
        if not any(isinstance(f, _IdleTimeouts) for f in werkzeug.filters):
            werkzeug.addFilter(_IdleTimeouts())
        moto_transactions.install()
        moto_attribute_values.install()
        moto_item_size.install()
        moto_conditions.install()
        moto_sessions.install()
        moto_update_expressions.install()
        moto_actions.install()
        moto_wakes.install()
        snapshot: Snapshot = {}
        if self._state_file is not None:
            self._state_file.parent.mkdir(parents=True, exist_ok=True)
            snapshot = load_state_file(self._state_file) or {}
        with self._lock.exclusive(timeout=None):
            replace_backends(snapshot)
            self._dirty = False
        self._app = LockingMotoApp(self._lock, self._mark_dirty, self._max_wait_seconds)
        self._server = make_server(
            self._host,
            self._port,
            self._app,
            threaded=True,
            request_handler=KeepAliveMotoRequestHandler,
        )
        self._stopping.clear()
        self._server_thread = threading.Thread(
            # A short poll interval keeps stop() quick.
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="local-aws-server",
            daemon=True,
        )
        self._server_thread.start()
        if self._state_file is not None:
            self._snapshot_thread = threading.Thread(
                target=self._snapshot_loop, name="local-aws-snapshots", daemon=True
            )
            self._snapshot_thread.start()

    @property
    def endpoint_url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalAws is not started")
        host = self._host
        # A wildcard address is fine to bind to but not to connect to.
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self._server.server_port}"

    def snapshot(self) -> None:
        """Write the current state to the state file now (no-op without a state file)."""
        if self._state_file is None:
            return
        if not self._take_snapshot(_EXPLICIT_LOCK_TIMEOUT):
            raise TimeoutError("in-flight requests did not finish; no snapshot taken")

    def stop(self) -> None:
        """Stop serving and write a final snapshot."""
        if self._server is None:
            return
        self._stopping.set()
        if self._snapshot_thread is not None:
            self._snapshot_thread.join()
            self._snapshot_thread = None
        # Refuse requests before the final snapshot, so that no write can land after it: the
        # handler threads of connections accepted before the shutdown live on.
        if self._app is not None:
            self._app.close()
            self._app = None
        self._server.shutdown()
        if self._server_thread is not None:
            self._server_thread.join()
            self._server_thread = None
        self._server = None
        if self._state_file is not None and not self._take_snapshot(_EXPLICIT_LOCK_TIMEOUT):
            logger.error("requests still running at stop; final snapshot of AWS state skipped")

    def __enter__(self) -> LocalAws:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _mark_dirty(self) -> None:
        now = time.monotonic()
        if not self._dirty:
            self._dirty_since = now
            self._dirty = True
        self._changed_at = now

    def _snapshot_loop(self) -> None:
        while not self._stopping.wait(self._next_check()):
            if not self._snapshot_due(time.monotonic()):
                continue
            try:
                if not self._take_snapshot(_PERIODIC_LOCK_TIMEOUT):
                    logger.warning("requests kept running; AWS state snapshot postponed")
                self._last_snapshot_error = None
            except Exception as exc:
                # Retried on the next tick; log each distinct failure once, not every tick.
                if repr(exc) != self._last_snapshot_error:
                    logger.exception("snapshot of local AWS state failed")
                    self._last_snapshot_error = repr(exc)

    def _next_check(self) -> float:
        return min(self._snapshot_interval, 0.5) / 2

    def _snapshot_due(self, now: float) -> bool:
        """Changed, and either quiet for the interval or changing for `busy_snapshot_seconds`;
        never sooner after the last snapshot than `_WAIT_PER_HOLD` times its hold."""
        if not self._dirty:
            return False
        if now - self._last_taken < max(self._snapshot_interval, _WAIT_PER_HOLD * self._last_hold):
            return False
        quiet = now - self._changed_at >= self._snapshot_interval
        return quiet or now - self._dirty_since >= self._busy_snapshot_seconds

    def _take_snapshot(self, lock_timeout: float) -> bool:
        assert self._state_file is not None
        # Keeps two snapshots from overtaking each other between pickling and the rename.
        with self._snapshot_mutex:
            with self._lock.exclusive(timeout=lock_timeout) as acquired:
                if not acquired:
                    return False
                # Cleared before pickling: a request after the lock is released dirties it again.
                self._dirty = False
                held = time.monotonic()
                try:
                    payload = dump_backends()
                except BaseException:
                    self._dirty = True
                    raise
                finally:
                    self._last_taken = time.monotonic()
                    self._last_hold = self._last_taken - held
            try:
                write_state_file(self._state_file, payload)
            except BaseException:
                self._dirty = True
                raise
        return True
