"""The WSGI app of local AWS: moto's app behind the reader/writer lock, SQS long polls outside it.

Read-only requests share the lock, state-changing ones take it exclusively (see locking.py). An
SQS long poll is answered by polling moto with ``WaitTimeSeconds=0`` (capped at
`max_wait_seconds`) and waiting outside the lock, so a waiting consumer never blocks other
requests or a snapshot.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.wsgi import get_input_stream

from etikett.local.aws.locking import ReadWriteLock
from etikett.local.faults import Faults
from etikett.local.moto_json_protocol import DirectJsonApp
from etikett.local.moto_sessions import SIGNED_BODY

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["LockingMotoApp"]

_Response = tuple[str, list[tuple[str, str]], bytes]

# A request that waits this long is answered 503, which SDKs retry (a stuck snapshot gives up
# sooner: server.py).
_REQUEST_LOCK_TIMEOUT = 10.0
# A long poll whose queue moto cannot be asked about re-checks this often, for messages whose
# delay or visibility timeout ends; otherwise it sleeps until the first of those ends (or a
# request wakes it), so that hundreds of idle Runners' polls cost nothing while they wait.
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


class _Dispatcher(DomainDispatcherApplication):
    """moto's dispatcher, remembering which backend serves a host: moto finds it anew for
    every request by listing its package directory (a stat call per service), under a lock
    that all requests share."""

    def __init__(self) -> None:
        super().__init__(create_backend_app)
        self._backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        try:
            return self._backends[host]
        except KeyError:
            backend = self._backends[host] = super().get_backend_for_host(host)
            return backend


class LockingMotoApp:
    """moto's WSGI app behind the reader/writer lock, with SQS long polls done outside it."""

    def __init__(
        self, lock: ReadWriteLock, mark_dirty: Callable[[], None], max_wait_seconds: int
    ) -> None:
        # JSON-protocol calls of DynamoDB, its streams and SQS skip Flask (moto_json_protocol).
        self._app: WSGIApplication = DirectJsonApp(_Dispatcher())
        self._lock = lock
        self._mark_dirty = mark_dirty
        self._max_wait_seconds = max_wait_seconds
        # Bumped per queue (and for all queues) after SQS requests that can make messages
        # receivable, so that long polls wake up early, and only those that may find something.
        self._activity = threading.Lock()
        self._generations: collections.Counter[str] = collections.Counter()
        # One condition per queue waited on (all sharing `_activity`): a message sent to one
        # queue wakes only the polls on that queue, not every Runner's (500 threads woken for
        # each send was the fleet's bottleneck in local mode).
        self._waiting: dict[str, threading.Condition] = {}
        self._closed = False
        self.faults = Faults()  # throttling on request, for fault tests (local/faults.py)

    def close(self) -> None:
        """Refuse all further requests."""
        self._closed = True

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == STREAM_END_PATH:
            status, headers, body = _stream_end(environ)
            start_response(status, headers)
            return [body]
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
            environ[SIGNED_BODY] = request_body  # session credentials' signature covers it
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
            if queue:
                if queue in self._waiting:
                    self._waiting[queue].notify_all()
            else:
                for condition in self._waiting.values():
                    condition.notify_all()

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
            with self._lock.shared(_REQUEST_LOCK_TIMEOUT) as acquired:
                due = _next_receivable(environ, queue) if acquired else _POLL_RECHECK_SECONDS
            with self._activity:
                condition = self._waiting.get(queue or _ALL_QUEUES)
                if condition is None:
                    condition = threading.Condition(self._activity)
                    self._waiting[queue or _ALL_QUEUES] = condition
                condition.wait_for(
                    _changed(self._seen, queue, seen), min(remaining, due, _POLL_RECHECK_CAP)
                )


_ALL_QUEUES = ""
# An idle poll is not re-checked before its end: with 500 Runners waiting, a re-check every
# 5 s was 100 exclusive receives a second, and prints waited 28 s behind them. (A message made
# receivable in a way no request names, such as a DLQ redrive, is found by the next poll.)
_POLL_RECHECK_CAP = 20.0


def _next_receivable(environ: WSGIEnvironment, queue: str | None) -> float:
    """Seconds until a message in `queue` becomes receivable by its delay or visibility timeout
    ending (infinity if none will; the re-check interval if moto's queue cannot be found). Read
    from moto's state in this process, under the shared lock."""
    # moto loads a service's models with its first request; this runs during an SQS one.
    from moto.sqs.models import sqs_backends

    region = _signed_region(environ)
    parts = (queue or "").strip("/").split("/")
    if region is None or len(parts) != 2:
        return _POLL_RECHECK_SECONDS
    account, name = parts
    try:
        messages = list(sqs_backends[account][region].queues[name]._messages)
    except (KeyError, AttributeError):
        return _POLL_RECHECK_SECONDS
    now_ms = time.time() * 1000
    due = [
        max(m.visible_at, m.delayed_until)
        for m in messages
        if max(m.visible_at, m.delayed_until) >= now_ms
    ]
    # moto's `visible` is "now > visible_at" in whole milliseconds: wake just after.
    return (min(due) - now_ms) / 1000 + 0.002 if due else float("inf")


def _signed_region(environ: WSGIEnvironment) -> str | None:
    """The region of a SigV4 request's credential scope (`Credential=key/date/region/...`)."""
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    _, found, scope = authorization.partition("Credential=")
    fields = scope.split("/")
    return fields[2] if found and len(fields) > 3 else None


# Local mode's stream poller asks here, when moto runs in a process of its own, whether a table's
# stream has new records: the answer comes from memory, without a GetRecords call, which would
# change moto's state (process.py).
STREAM_END_PATH = "/_etikett/stream-end"


def _stream_end(environ: WSGIEnvironment) -> _Response:
    # The pollers' module, for the one path that asks where a stream ends.
    from etikett.local.streams import moto_shard_end

    query = dict(parse_qsl(environ.get("QUERY_STRING", "")))
    region, table = query.get("region"), query.get("table")
    if not region or not table:
        body = b'{"message": "region and table are required"}'
        status = "400 Bad Request"
    else:
        body = json.dumps({"end": moto_shard_end(region)(table)}).encode()
        status = "200 OK"
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    return status, headers, body


def _changed(
    seen_now: Callable[[str | None], tuple[int, int]], queue: str | None, seen: tuple[int, int]
) -> Callable[[], bool]:
    """Whether there was activity on `queue` since it was `seen`."""
    return lambda: seen_now(queue) != seen


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
    query: str = environ.get("QUERY_STRING", "")
    for key, value in parse_qsl(query):
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
