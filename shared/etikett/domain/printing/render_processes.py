"""A long print job's labels rendered by several processes at once, joined in record order.

Rendering is CPU work that Pillow and FreeType do holding the interpreter lock, so threads would
only take turns; processes do not. Lambda gives a function one vCPU per 1,769 MB (the template's
print renderer has two) and runs forked processes with pipes (not multiprocessing's pools or
queues: it has no /dev/shm). The print-render function's process renders the first label, then
forks helpers, which start with its fonts, barcode library and compiled expressions; each renders
a contiguous slice of the records while the function's own process renders the first. The bytes
are the same as one process renders them (tests/unit/domain/test_render_processes.py).

A helper whose record cannot be rendered answers that record's index, and the function's process
renders it again to raise the record's own error: the first failing record in order decides, as
when one process renders everything. A helper that ends without answering (killed, out of
memory) fails the invocation, and the queue delivers the job again.
"""

from __future__ import annotations

import os
import signal
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

from etikett.domain import activity
from etikett.domain.printing.print_work import PROGRESS_EVERY, PrintWork
from etikett_engine.errors import EtikettError

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["MIN_RECORDS", "RenderProcessLost", "encode"]

MIN_RECORDS = 100  # per process: a slice smaller than this is not worth a fork
ANSWER_SECONDS = 240.0  # a helper's slice within the function's 300 s


class RenderProcessLost(RuntimeError):
    """A helper ended (or stalled) without answering: the invocation fails and is retried."""


def encode(work: PrintWork, processes: int, job_id: str | None = None) -> bytes:
    """Every record's label in order, rendered by up to `processes` processes."""
    total = len(work.records)
    parts = max(1, min(processes, total // MIN_RECORDS))
    if parts == 1:
        return work.encode(job_id)
    bounds = [total * part // parts for part in range(parts + 1)]
    label = work.labels()
    # The first label before the fork: the helpers start with its fonts, barcode library and
    # compiled expressions (and a first record that cannot be rendered forks nothing).
    chunks = [label(bounds[0])]
    helpers = [_Helper.start(work, bounds[k], bounds[k + 1]) for k in range(1, parts)]
    try:
        own = bounds[1] - bounds[0]
        for index in range(bounds[0] + 1, bounds[1]):
            if job_id is not None and index % PROGRESS_EVERY == 0:
                what = f"job {job_id}: rendering the first of {parts} parts:"
                activity.progress(what, index, own)
            chunks.append(label(index))
        for helper in helpers:
            chunks.append(helper.labels(work))
            if job_id is not None and total > PROGRESS_EVERY:
                activity.progress(f"job {job_id}: rendering", helper.stop_index, total)
    finally:
        for helper in helpers:
            helper.end()
    return b"".join(chunks)


@dataclass
class _Helper:
    pid: int
    answers: Connection
    start_index: int
    stop_index: int
    exit_status: int | None = None

    @classmethod
    def start(cls, work: PrintWork, start: int, stop: int) -> _Helper:
        """Fork a helper for records `start` to `stop` (exclusive). A bare fork, not
        `multiprocessing.Process`: its start-up closes standard input, whose lock a thread of
        the forking process may hold (local mode's workers read their parent's pipe)."""
        import multiprocessing  # loaded by the first long job, not at the function's cold start

        reader, writer = multiprocessing.Pipe(duplex=False)
        pid = os.fork()
        if pid == 0:  # the helper: render, answer, and leave without running the parent's exit
            status = 1
            try:
                reader.close()
                _render_slice(work, start, stop, writer)
                status = 0
            finally:
                os._exit(status)
        writer.close()  # the helper's copy stays open: its end is the pipe's end
        return cls(pid, reader, start, stop)

    def labels(self, work: PrintWork) -> bytes:
        """The slice's bytes, or its first failing record's error, raised here."""
        if not self.answers.poll(ANSWER_SECONDS):
            raise RenderProcessLost(
                f"records {self.start_index}–{self.stop_index - 1} were not rendered within "
                f"{ANSWER_SECONDS:.0f} s"
            )
        try:
            kind, value = self.answers.recv()
        except EOFError:
            raise RenderProcessLost(
                f"the process rendering records {self.start_index}–{self.stop_index - 1} ended "
                f"without answering (exit status {self._reap()})"
            ) from None
        if kind == "labels":
            return bytes(value)
        if kind == "failed":
            work.labels()(int(value))  # the record's own error, as rendering alone raises it
        raise RenderProcessLost(
            f"the process rendering records {self.start_index}–{self.stop_index - 1} failed: "
            f"{value}"
        )

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


def _render_slice(work: PrintWork, start: int, stop: int, answers: Connection) -> None:
    """In the helper: the slice's bytes, or the index of its first record that fails."""
    try:
        label = work.labels()
        chunks: list[bytes] = []
        for index in range(start, stop):
            try:
                chunks.append(label(index))
            except EtikettError:
                answers.send(("failed", index))
                return
        # Sent whole once rendered: the parent reads after its own slice, and a pipe holds 64 KB.
        answers.send(("labels", b"".join(chunks)))
    except BaseException:  # an unexpected error: its text, for the invocation's failure
        answers.send(("crashed", traceback.format_exc(limit=5)))
    finally:
        answers.close()
