"""The triggers of deployed flows on the Runner: watched folders and schedules (`POST
/flows/<path>` on the Runner's local HTTP port is `http_triggers`). Each turns an event into
records and hands them to its flow (`Deployed.run_event`), which runs them and journals the
run."""

from __future__ import annotations

import fnmatch
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etikett_runner.flow_runs import RUN_ID, EventFile, new_run_id
from etikett_runner.roots import PATH_NOT_REGULAR, AllowedRoots, PathRefused
from etikett_runner.site_folders import Entry, Folder

if TYPE_CHECKING:
    from etikett_runner.deployed_flow import Deployed

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 50_000_000
SUBFOLDERS = ("processing", "done", "failed")


class TriggerUnusable(Exception):
    """The trigger cannot start here; the message says why (reported as the deployment's
    failure on this Runner)."""


# --- folders --------------------------------------------------------------------------------


class FolderWatch:
    """Files that appear in `folder` (matching `pattern`) become records. A file is taken by
    renaming it into `processing/` (so nobody else takes it, and it is never taken twice),
    read once, run, and left there until its run is delivered; then it moves to `done/` or
    `failed/` (with `<name>.reason.txt`). A file counts as arrived once its size and time
    stood still between two looks.

    The folder must lie inside the Runner's allowed roots where it really is (symbolic links
    followed); it is then held open (`site_folders`), and inside it only regular files are
    taken: a symbolic link, a pipe or a file with other names is never read or moved, and said
    so once (a failed run and the Runner's log) for as long as it stays."""

    def __init__(
        self,
        flow: Deployed,
        node_id: str,
        folder: Path,
        fields: dict[str, Any],
        poll_seconds: float,
        roots: AllowedRoots,
    ) -> None:
        self.flow = flow
        self.node_id = node_id
        self.folder = folder
        self.named = str(fields.get("path"))
        self.pattern = str(fields.get("pattern") or "*")
        self.format = str(fields.get("format") or "csv")
        self.delimiter = str(fields.get("delimiter") or ",")
        self.poll_seconds = poll_seconds
        self.roots = roots
        self.processing = folder / "processing"
        self._seen: dict[str, tuple[int, int]] = {}
        self._skipped: dict[str, tuple[int, str]] = {}  # told once: name → (inode, why)
        self._open: list[Folder] = []
        self._watched: Folder | None = None
        self._claims: Folder | None = None

    @property
    def real(self) -> Path:
        """Where the watched folder really is (once `check` opened it)."""
        return self._watched.path if self._watched is not None else self.folder

    def check(self) -> None:
        """Open the folder and its subfolders, or TriggerUnusable saying why not."""
        what = f"the watched folder {self.named!r}"
        try:
            watched = Folder.open(self.folder, self.roots, what)
        except PathRefused as refused:
            raise TriggerUnusable(str(refused)) from None
        except (FileNotFoundError, NotADirectoryError):
            raise TriggerUnusable(f"the watched folder {self.folder} does not exist") from None
        self._open.append(watched)
        self._watched = watched
        try:
            for name in SUBFOLDERS:
                self._open.append(watched.sub(name))
        except PathRefused as refused:
            self.close()
            raise TriggerUnusable(str(refused)) from None
        except OSError as error:
            self.close()
            raise TriggerUnusable(
                f"the watched folder {self.folder} is not writable ({error.strerror or error})"
            ) from None
        self._claims = self._open[1]
        self.processing = watched.path / "processing"
        if not os.access(watched.path, os.R_OK | os.W_OK | os.X_OK):
            self.close()
            raise TriggerUnusable(f"the watched folder {self.folder} is not writable")

    def close(self) -> None:
        opened, self._open = self._open, []
        self._watched = self._claims = None
        for folder in opened:
            folder.close()

    def run(self, stop: threading.Event) -> None:
        try:
            self._watch(stop)
        finally:
            self.close()

    def _watch(self, stop: threading.Event) -> None:
        watched, claims = self._watched, self._claims
        if watched is None or claims is None:
            self.check()
            watched, claims = self._watched, self._claims
            assert watched is not None and claims is not None
        # Files taken before a crash whose run was never journaled: nothing of them was sent.
        for entry in claims.entries():
            if stop.is_set():
                return
            claimed = self.processing / entry.name
            if (
                entry.kind != "folder"
                and not entry.name.startswith(".")
                and not self.flow.owns(claimed)
            ):
                run_id, _, name = entry.name.partition(".")
                if not RUN_ID.fullmatch(run_id) or not name:
                    run_id, name = new_run_id(), entry.name
                log.info("%s: taken before the restart, never run; running it now", name)
                self._run(claims, entry.name, name, run_id)
        while not stop.wait(self.poll_seconds):
            for name in self._arrived(watched):
                if stop.is_set():
                    return
                run_id = new_run_id()
                taken = f"{run_id}.{name}"
                try:
                    watched.move(name, claims, taken)  # atomic: this file is ours now, once
                except OSError:
                    continue  # gone meanwhile, or another reader was faster
                self._run(claims, taken, name, run_id)

    def _arrived(self, watched: Folder) -> list[str]:
        arrived, seen = [], {}
        try:
            entries = watched.entries()
        except OSError as error:
            log.warning("cannot read %s: %s", self.folder, error)
            return []
        present = set()
        for entry in entries:
            if entry.name.startswith(".") or not fnmatch.fnmatch(entry.name, self.pattern):
                continue
            if entry.kind == "folder":
                continue  # processing/, done/, failed/ and the site's own
            present.add(entry.name)
            if entry.kind != "file":
                self._skip(entry)
                continue
            mark = (entry.size, entry.mtime_ns)
            seen[entry.name] = mark
            if self._seen.get(entry.name) == mark:
                arrived.append(entry.name)
        self._seen = seen
        self._skipped = {n: s for n, s in self._skipped.items() if n in present}
        return arrived

    def _skip(self, entry: Entry) -> None:
        """Tell once (per name and file) that an entry is never taken."""
        told = (entry.inode, entry.kind)
        if self._skipped.get(entry.name) == told:
            return
        self._skipped[entry.name] = told
        why = (
            f"{PATH_NOT_REGULAR}: {self.folder / entry.name} is {entry.kind}; a Runner takes only "
            "regular files from a watched folder and never follows a link: skipped, nothing "
            "read or moved"
        )
        log.warning("flow %s: %s", self.flow.flow_id, why)
        self.flow.run_event(self.node_id, [], entry.name, problem=why, note=why)

    def _run(self, claims: Folder, taken: str, name: str, run_id: str) -> None:
        from etikett_engine.flows.records import parse, record_format

        claimed = self.processing / taken
        event = EventFile(folder=str(self.real), name=name, claimed=str(claimed))
        try:
            data = claims.read(taken, MAX_FILE_BYTES)
            records = parse(data, record_format(self.format), self.delimiter)
        except PathRefused as refused:
            log.warning("flow %s: %s", self.flow.flow_id, refused)
            self.flow.run_event(
                self.node_id,
                [],
                name,
                run_id=run_id,
                file=event,
                problem=f"{name}: {refused}",
                note=str(refused),
            )
            return
        except (ValueError, OSError) as error:  # not CSV/JSON (SourceInvalid), too large, gone
            self.flow.run_event(
                self.node_id, [], name, run_id=run_id, file=event, problem=f"{name}: {error}"
            )
            return
        self.flow.run_event(self.node_id, records, name, run_id=run_id, file=event)


# --- schedules ------------------------------------------------------------------------------


def schedule(flow: Deployed, node_id: str, every: float) -> Callable[[threading.Event], None]:
    """One empty record per tick."""

    def ticks(stop: threading.Event) -> None:
        while not stop.wait(every):
            flow.run_event(node_id, [{}], "schedule")

    return ticks
