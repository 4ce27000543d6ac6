"""In-process moto server whose state survives a restart of the process.

moto keeps everything in memory, so `LocalAws` pickles all of moto's per-region backends into
one state file (atomically, on a timer while requests change state, and on `stop()`) and
assigns them back into moto's live backend dicts on `start()`.

moto has no request lock of its own: a snapshot taken during a request fails or catches a
half-done write, and concurrent requests race each other (a TransactWriteItems deep-copies the
whole table, and fails with "dictionary changed size during iteration" if another request
writes to it meanwhile). So requests run under a reader/writer lock: read-only requests share
it, state-changing requests and snapshots take it exclusively. SQS long polls are answered by
polling moto with ``WaitTimeSeconds=0`` (capped at `max_wait_seconds`) and waiting outside the
lock, so a waiting consumer never blocks other requests or a snapshot.

The state file is a pickle: it is as trusted as the code that reads it, so keep it private
(it is written with mode 0600). One `LocalAws` per process: moto's state is process-wide.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import copyreg
import io
import json
import logging
import os
import pickle
import sys
import tempfile
import threading
import time
import typing
import weakref
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import moto
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes
from moto.core.base_backend import AccountSpecificBackend, BackendDict, BaseBackend, backend_lock
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wsgi import get_input_stream

from etikett.local import moto_attribute_values, moto_transactions
from etikett.local.faults import Faults

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["LocalAws"]

logger = logging.getLogger(__name__)

Snapshot = dict[str, dict[str, dict[str, BaseBackend]]]
_Response = tuple[str, list[tuple[str, str]], bytes]

_MAGIC = b"ETIKETT-LOCAL-AWS-SNAPSHOT\n"
_FORMAT = 1
# moto's own bookkeeping (e.g. its reset API), not AWS state.
_SKIPPED_SERVICES = frozenset({"moto_api"})
# Waiting this long for in-flight requests means something is stuck (e.g. a request that calls
# back into this server); giving up lets blocked requests continue instead of deadlocking.
_PERIODIC_LOCK_TIMEOUT = 5.0
_EXPLICIT_LOCK_TIMEOUT = 30.0
# A request that waits this long is answered 503, which SDKs retry; see _PERIODIC_LOCK_TIMEOUT.
_REQUEST_LOCK_TIMEOUT = 10.0
# A long poll also re-checks this often, for messages whose delay or visibility timeout ends.
_POLL_RECHECK_SECONDS = 0.25
# SQS operations after which a message may be receivable on the queue they name; a long poll
# on that queue wakes up. Other state-changing SQS operations wake every long poll (their
# effects on queues are less direct), and no other service's do.
_MAKES_RECEIVABLE = frozenset(
    {"SendMessage", "SendMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch"}
)
_TAKES_AWAY = frozenset({"ReceiveMessage", "DeleteMessage", "DeleteMessageBatch"})
_READ_ONLY_PREFIXES = ("List", "Describe")
# Deliberately short: a state-changing operation taken for read-only would race other requests
# and could be left out of snapshots; the other mistake only costs some concurrency and a
# snapshot. ("Get*" is not a safe prefix: GetShardIterator, cognito GetId...)
_READ_ONLY_OPERATIONS = frozenset(
    {
        "BatchGetItem",
        "GetCallerIdentity",
        "GetItem",
        "GetParameter",
        "GetParameters",
        "GetParametersByPath",
        "GetQueueAttributes",
        "GetQueueUrl",
        "Query",
        "Scan",
        "TransactGetItems",
    }
)


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
    ) -> None:
        if snapshot_interval <= 0:
            raise ValueError("snapshot_interval must be positive")
        if not 0 <= max_wait_seconds <= 20:
            raise ValueError("max_wait_seconds must be between 0 and 20")
        self._state_file = Path(state_file) if state_file is not None else None
        self._host = host
        self._port = port
        self._snapshot_interval = snapshot_interval
        self._max_wait_seconds = max_wait_seconds
        self._lock = _ReadWriteLock()
        self._snapshot_mutex = threading.Lock()
        self._dirty = False
        self._stopping = threading.Event()
        self._server: BaseWSGIServer | None = None
        self._app: _LockingMotoApp | None = None
        self._server_thread: threading.Thread | None = None
        self._snapshot_thread: threading.Thread | None = None
        self._last_snapshot_error: str | None = None

    def start(self) -> None:
        """Replace moto's process-wide state with the state file's (or with nothing), then
        serve in daemon threads."""
        if self._server is not None:
            raise RuntimeError("LocalAws is already started")
        # werkzeug logs every request at INFO; errors still come through.
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        moto_transactions.install()
        moto_attribute_values.install()
        snapshot: Snapshot = {}
        if self._state_file is not None:
            self._state_file.parent.mkdir(parents=True, exist_ok=True)
            snapshot = _load_state_file(self._state_file) or {}
        with self._lock.exclusive(timeout=None):
            _replace_backends(snapshot)
            self._dirty = False
        self._app = _LockingMotoApp(self._lock, self._mark_dirty, self._max_wait_seconds)
        self._server = make_server(
            self._host, self._port, self._app, threaded=True, request_handler=MotoRequestHandler
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
        self._dirty = True

    def _snapshot_loop(self) -> None:
        while not self._stopping.wait(self._snapshot_interval):
            if not self._dirty:
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

    def _take_snapshot(self, lock_timeout: float) -> bool:
        assert self._state_file is not None
        # Keeps two snapshots from overtaking each other between pickling and the rename.
        with self._snapshot_mutex:
            with self._lock.exclusive(timeout=lock_timeout) as acquired:
                if not acquired:
                    return False
                # Cleared before pickling: a request after the lock is released dirties it again.
                self._dirty = False
                try:
                    payload = _dump_backends()
                except BaseException:
                    self._dirty = True
                    raise
            header = json.dumps(
                {"format": _FORMAT, "moto": moto.__version__, "created": _now_iso()}
            ).encode()
            try:
                _write_atomically(self._state_file, (_MAGIC, header, b"\n", payload))
            except BaseException:
                self._dirty = True
                raise
        return True


class _ReadWriteLock:
    """Writer-preferring reader/writer lock; both sides can give up after a timeout."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self, timeout: float | None) -> Iterator[bool]:
        with self._cond:
            # Waiting writers go first, or a steady stream of reads would starve them.
            acquired = self._wait(lambda: self._writer or self._writers_waiting > 0, timeout)
            if acquired:
                self._readers += 1
        try:
            yield acquired
        finally:
            if acquired:
                with self._cond:
                    self._readers -= 1
                    if not self._readers:
                        self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self, timeout: float | None) -> Iterator[bool]:
        with self._cond:
            self._writers_waiting += 1
            try:
                acquired = self._wait(lambda: self._writer or self._readers > 0, timeout)
                self._writer = acquired
            finally:
                self._writers_waiting -= 1
                if not self._writers_waiting:
                    # Readers held back for waiting writers may go once none are left waiting.
                    self._cond.notify_all()
        try:
            yield acquired
        finally:
            if acquired:
                with self._cond:
                    self._writer = False
                    self._cond.notify_all()

    def _wait(self, blocked: Callable[[], bool], timeout: float | None) -> bool:
        """With the condition held: wait until not `blocked()`; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while blocked():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self._cond.wait(remaining)
        return True


class _Dispatcher(DomainDispatcherApplication):
    """moto's dispatcher, remembering which backend serves a host: moto finds it anew for
    every request by listing its package directory (a stat call per service), under a lock
    that all requests share."""

    def __init__(self, create_app: Callable[[str], Any]) -> None:
        super().__init__(create_app)
        self._backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        try:
            return self._backends[host]
        except KeyError:
            backend = self._backends[host] = super().get_backend_for_host(host)
            return backend


class _LockingMotoApp:
    """moto's WSGI app behind the reader/writer lock, with SQS long polls done outside it."""

    def __init__(
        self, lock: _ReadWriteLock, mark_dirty: Callable[[], None], max_wait_seconds: int
    ) -> None:
        self._app: WSGIApplication = _Dispatcher(create_backend_app)
        self._lock = lock
        self._mark_dirty = mark_dirty
        self._max_wait_seconds = max_wait_seconds
        # Bumped per queue (and for all queues) after SQS requests that can make messages
        # receivable, so that long polls wake up early, and only those that may find something.
        self._activity = threading.Condition()
        self._generations: collections.Counter[str] = collections.Counter()
        self._closed = False
        self.faults = Faults()  # throttling on request, for fault tests (local/faults.py)

    def close(self) -> None:
        """Refuse all further requests."""
        self._closed = True

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # Read up front, not under the lock: a slow or stalled client must not hold it.
        request_body = _read_body(environ)
        faulted = self.faults.answer(
            environ["REQUEST_METHOD"],
            environ.get("PATH_INFO", ""),
            environ.get("HTTP_X_AMZ_TARGET", ""),
            request_body,
        )
        if faulted is not None:
            start_response(faulted[0], faulted[1])
            return [faulted[2]]
        operation = _operation(environ, request_body)
        wait, queue = None, None
        if operation == "ReceiveMessage":
            queue = _queue_key(environ, request_body)
            wait = self._rewrite_receive(environ, request_body)
        if wait is not None:
            status, headers, body = self._long_poll(environ, wait, queue)
        elif _is_read_only(environ["REQUEST_METHOD"], operation):
            status, headers, body = self._call(environ, exclusive=False, dirty_if=_never)
        else:
            status, headers, body = self._call(environ, exclusive=True, dirty_if=_always)
            self._wake(operation, environ, request_body)
        start_response(status, headers)
        return [body]

    def _call(
        self, environ: WSGIEnvironment, *, exclusive: bool, dirty_if: Callable[[bytes], bool]
    ) -> _Response:
        captured: list[tuple[str, list[tuple[str, str]]]] = []
        chunks: list[bytes] = []

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured.append((status, headers))
            return chunks.append

        lock = self._lock.exclusive if exclusive else self._lock.shared
        with lock(_REQUEST_LOCK_TIMEOUT) as acquired:
            if not acquired:
                return _unavailable("lock timed out")
            # Checked under the lock: whatever got in before stop()'s final snapshot is in it.
            if self._closed:
                return _unavailable("stopped")
            body = b""
            try:
                result = self._app(environ, capture)
                # Consumed under the lock too: the body may still be read from live state.
                try:
                    chunks.extend(result)
                finally:
                    close = getattr(result, "close", None)
                    if close is not None:
                        close()
                body = b"".join(chunks)
            finally:
                # Also after an exception: the request may have changed some state already.
                if dirty_if(body):
                    self._mark_dirty()
        status, headers = captured[-1]
        return status, headers, body

    def _rewrite_receive(self, environ: WSGIEnvironment, body: bytes) -> float | None:
        """Set WaitTimeSeconds to 0 in the request; return how long to poll, or None.

        An absent WaitTimeSeconds would make moto use the queue's default, which can be 20 s,
        so it is treated as a request for the maximum wait. None leaves the request as it is:
        invalid values (moto answers with a validation error at once) and query protocol
        GETs (moto ignores their parameters anyway; no SDK sends them).
        """
        if environ.get("HTTP_X_AMZ_TARGET"):
            try:
                params = json.loads(body or b"{}")
                requested = params.get("WaitTimeSeconds", self._max_wait_seconds)
            except (ValueError, AttributeError):
                return None
            if type(requested) is not int or not 0 <= requested <= 20:
                return None
            params["WaitTimeSeconds"] = 0
            _set_body(environ, json.dumps(params).encode())
        elif environ.get("REQUEST_METHOD") == "POST" and _is_form(environ):
            try:
                pairs = parse_qsl(body.decode(), keep_blank_values=True)
                values = [value for key, value in pairs if key == "WaitTimeSeconds"]
                requested = int(values[-1]) if values else self._max_wait_seconds
            except ValueError:  # includes UnicodeDecodeError
                return None
            if not 0 <= requested <= 20:
                return None
            pairs = [(key, value) for key, value in pairs if key != "WaitTimeSeconds"]
            pairs.append(("WaitTimeSeconds", "0"))
            _set_body(environ, urlencode(pairs).encode())
        else:
            return None
        return float(min(requested, self._max_wait_seconds))

    def _wake(self, operation: str | None, environ: WSGIEnvironment, body: bytes) -> None:
        if not _is_sqs(environ) or operation in _TAKES_AWAY:
            return
        queue = _queue_key(environ, body) if operation in _MAKES_RECEIVABLE else None
        with self._activity:
            self._generations[queue or _ALL_QUEUES] += 1
            self._activity.notify_all()

    def _seen(self, queue: str | None) -> tuple[int, int]:
        return self._generations[_ALL_QUEUES], self._generations[queue] if queue else 0

    def _long_poll(self, environ: WSGIEnvironment, wait: float, queue: str | None) -> _Response:
        body = environ["wsgi.input"].read()
        deadline = time.monotonic() + wait
        while True:
            with self._activity:
                seen = self._seen(queue)
            attempt = dict(environ)
            attempt["wsgi.input"] = io.BytesIO(body)
            # An empty receive changes nothing worth a snapshot (at most it moves a message to
            # the DLQ, which the next receive after a restart would do again).
            status, headers, payload = self._call(attempt, exclusive=True, dirty_if=_has_messages)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not status.startswith("200") or _has_messages(payload):
                return status, headers, payload
            with self._activity:
                self._activity.wait_for(
                    lambda seen=seen: self._seen(queue) != seen,
                    min(remaining, _POLL_RECHECK_SECONDS),
                )


_ALL_QUEUES = ""


def _is_sqs(environ: WSGIEnvironment) -> bool:
    target: str = environ.get("HTTP_X_AMZ_TARGET", "")
    if target:
        return target.startswith("AmazonSQS.")
    return "/sqs/" in environ.get("HTTP_AUTHORIZATION", "")


def _queue_key(environ: WSGIEnvironment, body: bytes) -> str | None:
    """The queue a request names, as the path of its URL (`/<account>/<name>`)."""
    url: str | None = None
    if environ.get("HTTP_X_AMZ_TARGET"):
        with contextlib.suppress(ValueError, AttributeError):
            url = json.loads(body or b"{}").get("QueueUrl")
    elif _is_form(environ):
        with contextlib.suppress(UnicodeDecodeError):
            url = dict(parse_qsl(body.decode())).get("QueueUrl")
    if not isinstance(url, str) or not url:
        path: str = environ.get("PATH_INFO", "")
        return path.rstrip("/") if path.count("/") >= 2 else None
    return urlsplit(url).path.rstrip("/") or None


def _operation(environ: WSGIEnvironment, body: bytes) -> str | None:
    """The API operation for JSON and query protocol requests; None for REST requests."""
    target: str = environ.get("HTTP_X_AMZ_TARGET", "")
    if target:
        return target.rpartition(".")[2]
    for key, value in parse_qsl(environ.get("QUERY_STRING", "")):
        if key == "Action":
            return value
    if environ.get("REQUEST_METHOD") == "POST" and _is_form(environ):
        try:
            for key, value in parse_qsl(body.decode()):
                if key == "Action":
                    return value
        except UnicodeDecodeError:
            pass
    return None


def _is_read_only(method: str, operation: str | None) -> bool:
    if operation is None:
        return method in ("GET", "HEAD", "OPTIONS")
    return operation.startswith(_READ_ONLY_PREFIXES) or operation in _READ_ONLY_OPERATIONS


def _always(_: bytes) -> bool:
    return True


def _never(_: bytes) -> bool:
    return False


def _has_messages(payload: bytes) -> bool:
    if payload.lstrip().startswith(b"{"):
        try:
            return bool(json.loads(payload).get("Messages"))
        except (ValueError, AttributeError):
            return True
    return b"<Message>" in payload


def _is_form(environ: WSGIEnvironment) -> bool:
    content_type: str = environ.get("CONTENT_TYPE", "")
    return content_type.startswith("application/x-www-form-urlencoded")


def _read_body(environ: WSGIEnvironment) -> bytes:
    """Read the request body and put it back as a re-readable stream."""
    body = get_input_stream(environ).read()
    _set_body(environ, body)
    return body


def _set_body(environ: WSGIEnvironment, body: bytes) -> None:
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    # The body is now plain bytes of known length, whatever the client sent.
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    environ.pop("wsgi.input_terminated", None)


def _unavailable(reason: str) -> _Response:
    body = f"local AWS: {reason}\n".encode()
    headers = [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
    return "503 Service Unavailable", headers, body


# --- snapshot format -------------------------------------------------------------------------


def _dump_backends() -> bytes:
    """Pickle every per-region backend in one dump, so references between them stay shared."""
    state: Snapshot = {}
    for backend_dict in list(BackendDict._instances):
        if backend_dict.service_name in _SKIPPED_SERVICES:
            continue
        accounts = {
            account_id: dict(dict.items(regions))
            for account_id, regions in dict.items(backend_dict)
            if len(regions)
        }
        if accounts:
            state[_backend_dict_key(backend_dict)] = accounts
    known_types = len(_reducers_by_type)
    try:
        payload = _pickle(state)
        if len(_reducers_by_type) > known_types:
            # New kinds of objects (always so in a process's first snapshot): make sure that
            # they load, too, or the next start would have to set the whole file aside.
            pickle.loads(payload)
        return payload
    except Exception:
        # One service whose models do not round-trip must not cost all the others their state.
        failures: dict[str, Exception] = {}
        for key, accounts in state.items():
            try:
                pickle.loads(_pickle({key: accounts}))
            except Exception as exc:
                failures[key] = exc
        if not failures:
            raise
        for key, exc in failures.items():
            if key not in _unpicklable_warned:
                _unpicklable_warned.add(key)
                logger.warning(
                    "moto state of %s cannot be saved and will be lost on restart (%s: %s)",
                    key,
                    type(exc).__name__,
                    exc,
                )
        return _pickle({key: value for key, value in state.items() if key not in failures})


_unpicklable_warned: set[str] = set()


def _pickle(state: Snapshot) -> bytes:
    buffer = io.BytesIO()
    _SnapshotPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return buffer.getvalue()


def _load_state_file(path: Path) -> Snapshot | None:
    """Read a snapshot; move an unreadable file aside rather than lose or overwrite it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _decode(data)
    except Exception as exc:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        aside = path.with_name(f"{path.name}.unreadable-{stamp}")
        os.replace(path, aside)
        logger.warning(
            "could not load local AWS state from %s (%s: %s); moved it to %s, starting empty",
            path,
            type(exc).__name__,
            exc,
            aside,
        )
        return None


def _decode(data: bytes) -> Snapshot:
    if not data.startswith(_MAGIC):
        raise ValueError("not a local AWS snapshot")
    header_line, _, payload = data[len(_MAGIC) :].partition(b"\n")
    header = json.loads(header_line)
    if header.get("format") != _FORMAT:
        raise ValueError(f"unknown snapshot format {header.get('format')!r}")
    # moto's model classes change between releases; a pickle from another version may load
    # and then fail on the first request that touches a missing attribute.
    if header.get("moto") != moto.__version__:
        raise ValueError(f"written by moto {header.get('moto')}, this is moto {moto.__version__}")
    state = pickle.loads(payload)
    if not isinstance(state, dict):
        raise ValueError("snapshot payload is not a dict")
    for key in state:
        _backend_dict_by_key(key)  # fail now, not halfway through the restore
    return typing.cast(Snapshot, state)


def _replace_backends(state: Snapshot) -> None:
    """Make moto's process-wide state exactly `state`."""
    with backend_lock:
        for backend_dict in list(BackendDict._instances):
            if backend_dict.service_name not in _SKIPPED_SERVICES:
                backend_dict.clear()
        for key, accounts in state.items():
            backend_dict = _backend_dict_by_key(key)
            for account_id, regions in accounts.items():
                # Indexing creates the account's dict and registers the BackendDict with moto.
                account_backends = backend_dict[account_id]
                for region, backend in regions.items():
                    dict.__setitem__(account_backends, region, backend)
        _register_buckets()


def _register_buckets() -> None:
    """moto's S3 keeps a process-wide bucket name -> (partition, account) registry beside its
    backends. It must name the buckets of the backends now in place: a name left from earlier
    state points at a backend without the bucket, whose lookup then recurses forever."""
    from moto.s3.models import s3_backends

    registry = s3_backends.bucket_accounts
    registry.clear()
    for account_id, partitions in dict.items(s3_backends):
        for partition, backend in dict.items(partitions):
            for name in backend.buckets:
                registry[name] = (partition, account_id)


def _write_atomically(path: Path, chunks: Iterable[bytes]) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), 0o600)
            for chunk in chunks:
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    # The rename is only durable once the directory entry is on disk.
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


# --- pickling what moto keeps in its backends -------------------------------------------------

# BackendDicts are module globals; a key names one as "module:attribute".
_keys_by_backend_dict: dict[int, str] = {}


def _backend_dict_key(backend_dict: BackendDict[Any]) -> str:
    key = _keys_by_backend_dict.get(id(backend_dict))
    if key is not None:
        return key
    home = backend_dict.backend.__module__
    candidates = [home, *sorted(name for name in sys.modules if name.startswith("moto."))]
    for module_name in candidates:
        module = sys.modules.get(module_name)
        for attribute, value in sorted(vars(module).items()) if module else ():
            if value is backend_dict:
                key = f"{module_name}:{attribute}"
                _keys_by_backend_dict[id(backend_dict)] = key
                return key
    raise LookupError(f"cannot name the moto backends of {backend_dict.service_name!r}")


def _backend_dict_by_key(key: str) -> BackendDict[Any]:
    """The live BackendDict, imported if this process has not used the service yet."""
    module_name, _, attribute = key.partition(":")
    if not module_name.startswith("moto."):
        raise ValueError(f"not a moto backend: {key!r}")
    module = __import__(module_name, fromlist=[attribute])
    backend_dict = getattr(module, attribute)
    if not isinstance(backend_dict, BackendDict):
        raise TypeError(f"{key!r} is not a moto BackendDict")
    return backend_dict


def _account_backends(key: str, account_id: str) -> AccountSpecificBackend[Any]:
    return _backend_dict_by_key(key)[account_id]


def _load_private_key(der: bytes) -> PrivateKeyTypes:
    return serialization.load_der_private_key(der, password=None)


def _load_public_key(der: bytes) -> PublicKeyTypes:
    return serialization.load_der_public_key(der)


def _load_certificate(der: bytes) -> x509.Certificate:
    return x509.load_der_x509_certificate(der)


class _EmptyLike:
    """Picklable stand-in for a factory like ``lambda: defaultdict(dict)``: copies of the
    (empty) value the original factory made."""

    def __init__(self, sample: object) -> None:
        self.sample = sample

    def __call__(self) -> object:
        return copy.deepcopy(self.sample)


_EMPTY_CONTAINER_TYPES = (dict, list, set, collections.defaultdict, collections.OrderedDict)
_NO_FACTORY = "no default_factory"


def _picklable_factory(factory: Callable[[], Any] | None) -> Callable[[], Any] | None:
    if factory is None or "<" not in getattr(factory, "__qualname__", ""):
        return factory
    # moto builds some defaultdicts with lambdas (SSM tags, Lambda aliases), which pickle
    # cannot name. Only a factory of fresh empty containers can be replaced safely.
    sample = factory()
    if type(sample) not in _EMPTY_CONTAINER_TYPES or sample:
        raise pickle.PicklingError(f"cannot pickle default_factory {factory!r}")
    return _EmptyLike(sample)


def _reduce_defaultdict(value: collections.defaultdict[Any, Any]) -> Any:
    factory = _picklable_factory(value.default_factory)
    if factory is value.default_factory:
        return NotImplemented  # pickles as usual
    return collections.defaultdict, (factory,), None, None, iter(dict.items(value))


def _reduce_dict_subclass(value: dict[Any, Any]) -> Any:
    """Pickle a dict subclass by its real contents, and load it without calling its methods.

    The default goes through the subclass's items() and __setitem__ (and a defaultdict's
    through __init__), which moto overrides: S3's _VersionedKeyStore yields only the latest
    version of each key, DynamoDB's LimitedSizeDict re-validates its size on every insert,
    SSM's ParameterDict takes other __init__ arguments.
    """
    factory: Any = _NO_FACTORY
    if isinstance(value, collections.defaultdict):
        factory = _picklable_factory(value.default_factory)
    state = (getattr(value, "__dict__", None) or None, dict(dict.items(value)), factory)
    return copyreg.__newobj__, (type(value),), state, None, None, _set_dict_state


def _set_dict_state(value: dict[Any, Any], state: tuple[Any, dict[Any, Any], Any]) -> None:
    attributes, items, factory = state
    if attributes:
        value.__dict__.update(attributes)
    dict.update(value, items)
    if factory != _NO_FACTORY:
        value.default_factory = factory  # type: ignore[attr-defined]


def _has_own_pickling(cls: type) -> bool:
    """Whether a class between `cls` and its builtin base defines how it pickles."""
    own = {"__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__slots__"}
    for klass in cls.__mro__:
        if klass.__module__ in ("builtins", "collections"):
            return False
        if own & vars(klass).keys():
            return True
    return False


_PRIVATE_KEY_CLASSES = typing.get_args(PrivateKeyTypes)
_PUBLIC_KEY_CLASSES = typing.get_args(PublicKeyTypes)
_LOCK_TYPE = type(threading.Lock())
_RLOCK_TYPE = type(threading.RLock())

_Reducer = Callable[[Any], tuple[Any, ...]]


def _reducer_for(cls: type) -> _Reducer | None:
    if cls is _LOCK_TYPE:
        # Nobody holds a lock during a snapshot (requests are excluded), so a fresh one is equal.
        return lambda _: (threading.Lock, ())
    if cls is _RLOCK_TYPE:
        return lambda _: (threading.RLock, ())
    if issubclass(cls, threading.Condition):
        # SQS queues wait on one; its waiters are gone with the process anyway.
        return lambda cond: (threading.Condition, (cond._lock,))
    if issubclass(cls, _PRIVATE_KEY_CLASSES):
        # KMS keys hold cryptography keys, which do not pickle.
        return lambda key: (
            _load_private_key,
            (
                key.private_bytes(
                    serialization.Encoding.DER,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                ),
            ),
        )
    if issubclass(cls, _PUBLIC_KEY_CLASSES):
        return lambda key: (
            _load_public_key,
            (
                key.public_bytes(
                    serialization.Encoding.DER,
                    serialization.PublicFormat.SubjectPublicKeyInfo,
                ),
            ),
        )
    if issubclass(cls, x509.Certificate):
        return lambda cert: (
            _load_certificate,
            (cert.public_bytes(serialization.Encoding.DER),),
        )
    if issubclass(cls, BackendDict):
        # A reference to moto's live registry must come back as the live one, not a copy.
        return lambda backend_dict: (_backend_dict_by_key, (_backend_dict_key(backend_dict),))
    if issubclass(cls, AccountSpecificBackend):
        return _reduce_account_backends
    if cls is collections.defaultdict:
        return _reduce_defaultdict
    if issubclass(cls, (collections.OrderedDict, collections.Counter)):
        return None  # their own reduction keeps their internals consistent
    if issubclass(cls, dict) and cls is not dict and not _has_own_pickling(cls):
        return _reduce_dict_subclass
    if issubclass(cls, (weakref.WeakValueDictionary, weakref.WeakKeyDictionary)):
        # Lambda's ARN index; the entries stay alive through the objects' other owners.
        return lambda mapping: (type(mapping), (dict(mapping.items()),))
    if issubclass(cls, weakref.WeakSet):
        return lambda items: (type(items), (list(items),))
    return None


def _reduce_account_backends(account_backends: AccountSpecificBackend[Any]) -> tuple[Any, ...]:
    for backend_dict in list(BackendDict._instances):
        for account_id, candidate in dict.items(backend_dict):
            if candidate is account_backends:
                return _account_backends, (_backend_dict_key(backend_dict), account_id)
    raise pickle.PicklingError("moto account backends outside of any BackendDict")


_reducers_by_type: dict[type, _Reducer | None] = {}


class _SnapshotPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        try:
            reducer = _reducers_by_type[cls]
        except KeyError:
            reducer = _reducers_by_type[cls] = _reducer_for(cls)
        if reducer is None:
            return NotImplemented
        return reducer(obj)
