"""`LocalAwsProcess`: local AWS (`LocalAws`: moto's server, its request lock and its snapshots) in a
Python process of its own, started and stopped by local mode.

In one process, moto's work (Flask dispatch, request parsing and validation, responses, pickling
the snapshots) shared one interpreter lock with the gateway, the functions and the pollers: about
two fifths of what a print costs. In its own process it runs on another core. The service talks to
it exactly as before, boto3 and pynamodb over HTTP; the stream poller, which read moto's memory to
learn whether a shard has new records, asks this process instead (`shard_end`).

The child process belongs to its parent: it ignores Ctrl-C and SIGTERM (both reach the whole
process group, and the parent decides when local AWS stops: after its pollers, so that what they
wrote is in the final snapshot), and stops with a final snapshot when its standard input closes,
which also happens when the parent dies. It holds the state file from loading it to its final
snapshot, so a local mode started again at once waits for that snapshot.

    python -m etikett.local.aws.process [--state-file F] [--host H] [--port P]
        [--snapshot-interval S] [--max-wait-seconds W]

prints `LISTENING <endpoint URL>` once it serves.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from urllib.parse import urlencode, urlsplit

from etikett.local import children
from etikett.local.aws.gateway import STREAM_END_PATH
from etikett.local.aws.options import check_options

__all__ = ["LocalAwsProcess"]

READY = "LISTENING "
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 60.0


class LocalAwsProcess:
    """Local AWS in a child process, with the interface of `LocalAws` that local mode uses."""

    def __init__(
        self,
        state_file: Path | None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        snapshot_interval: float = 1.0,
        max_wait_seconds: int = 1,
    ) -> None:
        check_options(snapshot_interval, max_wait_seconds)
        self._arguments = ["--host", host, "--port", str(port)]
        self._arguments += ["--snapshot-interval", str(snapshot_interval)]
        self._arguments += ["--max-wait-seconds", str(max_wait_seconds)]
        if state_file is not None:
            self._arguments += ["--state-file", str(state_file)]
        self._process: subprocess.Popen[str] | None = None
        self._endpoint_url: str | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        if self._process is not None:
            raise RuntimeError("LocalAwsProcess is already started")
        process = subprocess.Popen(
            [sys.executable, "-m", "etikett.local.aws.process", *self._arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._process = process
        assert process.stdout is not None
        line = children.first_line(process.stdout, _START_TIMEOUT)
        if not line.startswith(READY):
            self._process = None
            process.kill()
            process.wait()
            raise RuntimeError(f"local AWS did not start (exit {process.returncode}): {line!r}")
        self._endpoint_url = line.removeprefix(READY).strip()

    @property
    def endpoint_url(self) -> str:
        if self._endpoint_url is None:
            raise RuntimeError("LocalAwsProcess is not started")
        return self._endpoint_url

    def stop(self) -> None:
        """Local AWS stops serving, writes its final snapshot and exits."""
        process, self._process = self._process, None
        if process is not None:
            children.stop(process, _STOP_TIMEOUT, "local AWS", left="; its last snapshot stays")

    def shard_end(self, region: str) -> ShardEndOverHttp:
        """For the stream poller: a table's last stream sequence number, from the child."""
        return ShardEndOverHttp(self.endpoint_url, region)

    def __enter__(self) -> LocalAwsProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ShardEndOverHttp:
    """`streams.moto_shard_end` of the child process, over one keep-alive connection per
    thread (each stream source polls from a thread of its own)."""

    def __init__(self, endpoint_url: str, region: str) -> None:
        parts = urlsplit(endpoint_url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._region = region
        self._local = threading.local()

    def __call__(self, table_name: str) -> int | None:
        query = urlencode({"region": self._region, "table": table_name})
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more, anew
            connection = self._connection()
            try:
                connection.request("GET", f"{STREAM_END_PATH}?{query}")
                answer = connection.getresponse()
                body = answer.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                self._local.connection = None
                if attempt == 2:
                    raise
                continue
            if answer.status != 200:
                raise RuntimeError(f"local AWS answered {answer.status} to {STREAM_END_PATH}")
            end: int | None = json.loads(body)["end"]
            return end
        raise AssertionError("unreachable")

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=10)
            self._local.connection = connection
        return connection


# moto keeps each item as a tree of small objects (half a million for a state of ten thousand
# items), nearly all of them long-lived. With Python's default the collector walked them again and
# again in a bulk of writes (a young collection every 700 allocations, a full one whenever the old
# objects grew by a quarter): a quarter of local AWS's time in a sync of offline prints.
_ALLOCATIONS_PER_COLLECTION = 20_000  # Python's default: 700
_COLLECTIONS_PER_OLDER = 20  # Python's default: 10


def tune_collector() -> None:
    """This process's garbage collector, for moto's many long-lived objects: what is loaded
    now (the modules, the state from the file) kept out of its walks, young collections rarer.
    Cycles are still collected, a little later."""
    gc.freeze()
    gc.set_threshold(_ALLOCATIONS_PER_COLLECTION, _COLLECTIONS_PER_OLDER, _COLLECTIONS_PER_OLDER)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m etikett.local.aws.process")
    parser.add_argument("--state-file", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--snapshot-interval", type=float, default=1.0)
    parser.add_argument("--max-wait-seconds", type=int, default=1)
    arguments = parser.parse_args(argv)
    # Ctrl-C reaches the whole process group, and so does the SIGTERM with which systemd (or a
    # container) stops a service: the parent stops this process when it is time, after its
    # pollers, so that what they write is in the final snapshot.
    children.leave_stopping_to_the_parent()
    # moto loads in this child only, once its signals are set: the parent never loads it.
    from etikett.local.aws.server import LocalAws

    with _state_held(arguments.state_file):
        aws = LocalAws(
            arguments.state_file,
            arguments.host,
            arguments.port,
            snapshot_interval=arguments.snapshot_interval,
            max_wait_seconds=arguments.max_wait_seconds,
        )
        aws.start()
        tune_collector()
        try:
            children.ready_until_the_parent_closes(f"{READY}{aws.endpoint_url}")
        finally:
            aws.stop()
    return 0


@contextmanager
def _state_held(state_file: Path | None) -> Iterator[None]:
    """The state file to this process alone, from loading it to the final snapshot.

    A parent killed and started again at once (a crash, then `make dev`) starts a second child
    while the first one still writes its final snapshot: the second waits here and loads that
    snapshot, instead of older state that the first one's snapshot would then overwrite.
    """
    if state_file is None:
        yield
        return
    with children.held(state_file, "local AWS", "save"):
        yield


if __name__ == "__main__":
    sys.exit(main())
