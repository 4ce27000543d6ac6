"""A long print job's labels rendered by several processes at once, joined in record order.

Rendering is CPU work that Pillow and FreeType do holding the interpreter lock, so threads would
only take turns; processes do not. Lambda gives a function one vCPU per 1,769 MB (the template's
print renderer has two) and runs forked processes with pipes (not multiprocessing's pools or
queues: it has no /dev/shm). The print-render function's process renders the first label, then
forks helpers, which start with its fonts, barcode library and compiled expressions. The other
records are cut into batches, and every process, the function's own included, takes the next
batch whenever it is done with one, until none is left: a process whose records are quicker
(texts it has drawn before, shorter ones) or which gets more of the machine takes more batches,
and none waits for a slower one's fixed share. The batches' numbers wait in a pipe filled before
the fork; Linux hands each read of one number to one process whole. The bytes are the same as one
process renders them (tests/unit/domain/test_render_processes.py).

A process stops taking batches at its first record that cannot be rendered, and a helper answers
that record's index; the function's process renders the first such record in order again, to
raise the record's own error. Batches are taken in order, so every batch before that record was
rendered by someone: the first failing record in order decides, as when one process renders
everything. A helper that ends without answering (killed, out of memory) fails the invocation,
and the queue delivers the job again.
"""

from __future__ import annotations

import os
import signal
import struct
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from etikett.domain import activity
from etikett.domain.printing.print_work import PROGRESS_EVERY, PrintWork
from etikett_engine.errors import EtikettError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["MIN_RECORDS", "RenderProcessLost", "encode"]

MIN_RECORDS = 100  # per process: fewer records than this each are not worth a fork
BATCH_RECORDS = 25  # records a process takes at a time (≈ 50 ms of rendering)
MAX_BATCHES = 4096  # numbers waiting in the pipe (4 bytes each: well within its 64 KB)
ANSWER_SECONDS = 240.0  # a helper's batches within the function's 300 s
_NUMBER = struct.Struct("<I")


class RenderProcessLost(RuntimeError):
    """A helper ended (or stalled) without answering: the invocation fails and is retried."""


@dataclass(frozen=True)
class _Batches:
    """Records 1.. cut into batches of `size`; their numbers wait in a pipe to be taken."""

    total: int
    size: int
    count: int
    reader: int

    @classmethod
    def fill(cls, total: int) -> _Batches:
        size = max(BATCH_RECORDS, -(-(total - 1) // MAX_BATCHES))
        count = -(-(total - 1) // size)
        reader, writer = os.pipe()
        try:
            os.write(writer, b"".join(_NUMBER.pack(number) for number in range(count)))
        finally:
            os.close(writer)  # once taken, the pipe reads empty: no batch is left
        return cls(total, size, count, reader)

    def records(self, number: int) -> range:
        start = 1 + number * self.size
        return range(start, min(self.total, start + self.size))

    def taken(self) -> Iterator[int]:
        """The numbers of the batches this process takes, until none is left."""
        while packed := os.read(self.reader, _NUMBER.size):
            if len(packed) != _NUMBER.size:  # never split: one read copies it whole
                raise RuntimeError(f"a batch number read in part: {packed!r}")
            yield _NUMBER.unpack(packed)[0]

    def close(self) -> None:
        os.close(self.reader)


@dataclass
class _Rendered:
    """What one process rendered: its batches' bytes, and its first record that failed."""

    batches: dict[int, bytes]
    failed: int | None = None


def encode(work: PrintWork, processes: int, job_id: str | None = None) -> bytes:
    """Every record's label in order, rendered by up to `processes` processes."""
    total = len(work.records)
    parts = max(1, min(processes, total // MIN_RECORDS))
    if parts == 1:
        return work.encode(job_id)
    label = work.labels()
    # The first label before the fork: the helpers start with its fonts, barcode library and
    # compiled expressions (and a first record that cannot be rendered forks nothing).
    first = label(0)
    batches = _Batches.fill(total)
    helpers: list[_Helper] = []
    try:
        helpers = [_Helper.start(work, batches) for _ in range(1, parts)]
        what = f"job {job_id}: rendering in {parts} processes, by this one:" if job_id else None
        found = [_render_batches(work, batches, what)]
        done = 1 + sum(len(batches.records(number)) for number in found[0].batches)
        for helper in helpers:
            found.append(helper.rendered())
            done += sum(len(batches.records(number)) for number in found[-1].batches)
            if job_id is not None and total > PROGRESS_EVERY:
                activity.progress(f"job {job_id}: rendering", done, total)
    finally:
        for helper in helpers:
            helper.end()
        batches.close()
    failed = [rendered.failed for rendered in found if rendered.failed is not None]
    if failed:
        label(min(failed))  # the record's own error, as rendering alone raises it
        raise RenderProcessLost(f"record {min(failed)} failed in a helper, not here")
    joined = {number: data for rendered in found for number, data in rendered.batches.items()}
    if len(joined) != batches.count:  # every batch is taken once, and rendered or failed
        raise RenderProcessLost(f"{batches.count - len(joined)} batches were not rendered")
    return first + b"".join(joined[number] for number in sorted(joined))


def _render_batches(work: PrintWork, batches: _Batches, what: str | None) -> _Rendered:
    """Take batches until none is left or a record fails (in the function's process, with a
    progress line `what` every PROGRESS_EVERY records of its own)."""
    label = work.labels()
    rendered = _Rendered({})
    own = 0
    for number in batches.taken():
        labels: list[bytes] = []
        for index in batches.records(number):
            try:
                labels.append(label(index))
            except EtikettError:
                rendered.failed = index
                return rendered
            own += 1
            if what is not None and own % PROGRESS_EVERY == 0:
                activity.progress(what, own, batches.total)
        rendered.batches[number] = b"".join(labels)
    return rendered


@dataclass
class _Helper:
    pid: int
    answers: Connection
    exit_status: int | None = None

    @classmethod
    def start(cls, work: PrintWork, batches: _Batches) -> _Helper:
        """Fork a helper that takes batches too. A bare fork, not `multiprocessing.Process`: its
        start-up closes standard input, whose lock a thread of the forking process may hold
        (local mode's workers read their parent's pipe)."""
        import multiprocessing  # loaded by the first long job, not at the function's cold start

        reader, writer = multiprocessing.Pipe(duplex=False)
        pid = os.fork()
        if pid == 0:  # the helper: render, answer, and leave without running the parent's exit
            status = 1
            try:
                reader.close()
                _help(work, batches, writer)
                status = 0
            finally:
                os._exit(status)
        writer.close()  # the helper's copy stays open: its end is the pipe's end
        return cls(pid, reader)

    def rendered(self) -> _Rendered:
        """The helper's batches, or its first failing record."""
        if not self.answers.poll(ANSWER_SECONDS):
            raise RenderProcessLost(
                f"a rendering process (pid {self.pid}) did not answer within {ANSWER_SECONDS:.0f} s"
            )
        try:
            kind, value = self.answers.recv()
        except EOFError:
            raise RenderProcessLost(
                f"a rendering process (pid {self.pid}) ended without answering "
                f"(exit status {self._reap()})"
            ) from None
        if kind == "labels":
            return _Rendered(dict(value))
        if kind == "failed":
            return _Rendered({}, int(value))
        raise RenderProcessLost(f"a rendering process (pid {self.pid}) failed: {value}")

    def end(self) -> None:
        """Stop the helper if it still runs, and reap it."""
        if self._reap(block=False) is None:
            os.kill(self.pid, signal.SIGKILL)
        self._reap()
        self.answers.close()

    def _reap(self, *, block: bool = True) -> int | None:
        if self.exit_status is None:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
            if pid:
                self.exit_status = os.waitstatus_to_exitcode(status)
        return self.exit_status


def _help(work: PrintWork, batches: _Batches, answers: Connection) -> None:
    """In the helper: its batches' bytes, or the index of its first record that fails."""
    try:
        rendered = _render_batches(work, batches, None)
        if rendered.failed is not None:
            answers.send(("failed", rendered.failed))
        else:
            # Sent whole once rendered: the parent reads after its own batches, and a pipe holds
            # 64 KB.
            answers.send(("labels", rendered.batches))
    except BaseException:  # an unexpected error: its text, for the invocation's failure
        answers.send(("crashed", traceback.format_exc(limit=5)))
    finally:
        answers.close()
