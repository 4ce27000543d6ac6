"""The folders a Runner's deployed flows may watch and write: its data folder and the roots its
site named when installing it (`--watch-root`). A folder a flow names counts by where it really
is (every symbolic link followed), and the state directory (key, certificate, journal) never
overlaps an allowed root, so no flow can reach it."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PATH_OUTSIDE_ROOTS = "flow.path_outside_roots"
# Inside the roots, but a link, pipe, device or hard-linked file: never followed, read or moved.
PATH_NOT_REGULAR = "flow.path_not_regular"
WATCH_ROOTS_ENV = "ETIKETT_RUNNER_WATCH_ROOTS"
DATA_FOLDER = "data"  # the state directory's one subfolder that holds no state

log = logging.getLogger(__name__)


class PathRefused(Exception):
    """A path a flow may not use; `code` says which rule (the message starts with it too, so
    a deployment's status and a run's errors carry it)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class RootsOverlap(ValueError):
    """The state directory and an allowed root overlap: the Runner does not start."""


def real(path: Path | str) -> Path:
    """Where `path` really is: absolute, every symbolic link and `..` resolved (what exists of
    it; the rest as written)."""
    return Path(os.path.realpath(os.path.abspath(path)))


def within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def from_environment() -> list[str]:
    """`ETIKETT_RUNNER_WATCH_ROOTS`: folders separated by the system's path separator."""
    value = os.environ.get(WATCH_ROOTS_ENV, "")
    return [part for part in value.split(os.pathsep) if part.strip()]


@dataclass(frozen=True)
class AllowedRoots:
    """The data folder first, then the site's watch roots, as given (absolute). Where each
    really is, is looked up at every use, so a root that is a link (or becomes one) counts by
    its target, and one that comes to overlap the state directory stops counting."""

    roots: tuple[Path, ...]
    state: Path | None = None  # the state directory, kept apart from every root

    @classmethod
    def of(
        cls, data_dir: Path, watch_roots: Iterable[Path | str] = (), state: Path | None = None
    ) -> AllowedRoots:
        found: list[Path] = []
        for root in (data_dir, *watch_roots):
            absolute = Path(os.path.abspath(root))
            if absolute not in found:
                found.append(absolute)
        return cls(tuple(found), state)

    @property
    def data_dir(self) -> Path:
        return self.roots[0]

    def describe(self) -> str:
        return ", ".join(str(root) for root in self.roots)

    def real_roots(self) -> list[Path]:
        """Where the roots really are now, without any that overlap the state directory."""
        found = []
        for root in self.roots:
            resolved = real(root)
            if self.state is not None and self.overlap(resolved):
                log.error("%s", self.overlap(resolved))
                continue
            found.append(resolved)
        return found

    def inside(self, path: Path | str, what: str) -> Path:
        """Where `path` really is, if that is inside an allowed root; PathRefused otherwise.
        `what` names the path in the message ("the watched folder 'in'")."""
        resolved = real(path)
        if any(within(resolved, root) for root in self.real_roots()):
            return resolved
        shown = f" (it resolves to {resolved})" if str(resolved) != str(path) else ""
        raise PathRefused(
            PATH_OUTSIDE_ROOTS,
            f"{what}{shown} is outside the folders this Runner may use ({self.describe()}); "
            "the site adds one with --watch-root when installing the Runner",
        )

    def overlap(self, root: Path) -> str | None:
        """Why the (real) root and the state directory overlap, or None. The one exception:
        the state directory's own `data` folder (the default data folder), which holds nothing
        of the state."""
        if self.state is None:
            return None
        state = real(self.state)
        if within(state, root):
            where = f"the state directory {state} lies inside the allowed folder {root}"
        elif within(root, state) and root != state / DATA_FOLDER:
            where = f"the allowed folder {root} lies inside the state directory {state}"
        else:
            return None
        return (
            f"{where}: a deployed flow could read or move its key. Keep the state directory "
            "apart from --data-dir and every --watch-root"
        )

    def check_state_dir(self) -> None:
        """RootsOverlap unless the state directory and every allowed root are apart."""
        for root in self.roots:
            why = self.overlap(real(root))
            if why is not None:
                raise RootsOverlap(why)
