"""Files in the site's folders that deployed flows watch and write, touched without ever
following a symbolic link: a folder is opened where it really is (inside an allowed root), one
path component at a time with `O_NOFOLLOW`, and held open, so what is read, moved and written
stays in that folder even if someone swaps a name for a link meanwhile. A file is read only if
it is a regular file with one name (`O_NOFOLLOW`, `O_NONBLOCK`, checked with fstat after
opening). Where the system has no `dir_fd` operations (Windows), each step checks the path
with lstat instead."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from etikett_runner.roots import PATH_NOT_REGULAR, PATH_OUTSIDE_ROOTS, AllowedRoots, PathRefused

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
# Pinned folders need openat, renameat, mkdirat, fstatat and fdopendir (POSIX).
PINNED = (
    bool(_NOFOLLOW)
    and {os.open, os.rename, os.mkdir, os.stat, os.unlink} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


@dataclass(frozen=True)
class Entry:
    """What a folder holds under one name, as lstat sees it. `kind`: `file` (a regular file
    with one name), `folder`, or why it is never taken (`a symbolic link`, …)."""

    name: str
    kind: str
    size: int
    mtime_ns: int
    inode: int


def kind_of(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISLNK(mode) or getattr(info, "st_file_attributes", 0) & _REPARSE_POINT:
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "folder"
    if not stat.S_ISREG(mode):
        return "not a regular file (a pipe, socket or device)"
    if info.st_nlink > 1:
        return "a file with other names (hard links)"
    return "file"


def _name(name: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise PathRefused(PATH_NOT_REGULAR, f"{name!r} is not a file name")
    return name


class Folder:
    """One folder, opened where it really is; use as a context manager (or `close`)."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path  # where it really is
        self._fd = fd

    @classmethod
    def open(cls, path: Path | str, roots: AllowedRoots, what: str) -> Folder:
        """`path` (symbolic links resolved) if inside `roots`: PathRefused if outside or if a
        link appears while it is opened; FileNotFoundError / NotADirectoryError if missing."""
        resolved = roots.inside(path, what)
        if not PINNED:
            info = os.lstat(resolved)  # FileNotFoundError if missing
            if kind_of(info) != "folder":
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(resolved))
            return cls(resolved, None)
        fd = os.open(resolved.anchor, _DIRECTORY)
        try:
            for part in resolved.parts[1:]:
                try:
                    inner = os.open(part, _DIRECTORY, dir_fd=fd)
                except OSError as error:
                    if error.errno == errno.ELOOP:
                        raise PathRefused(
                            PATH_NOT_REGULAR,
                            f"{what} changed while it was opened: {part} became a symbolic link",
                        ) from None
                    raise
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return cls(resolved, fd)

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _at(self, name: str) -> str:
        """The name relative to the held folder (pinned), or its full path (not pinned)."""
        return _name(name) if PINNED else str(self.path / _name(name))

    def _dir_fd(self) -> int | None:
        if PINNED and self._fd is None:
            raise ValueError(f"{self.path} is closed")
        return self._fd

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self._at(name), dir_fd=self._dir_fd(), follow_symlinks=False)

    def exists(self, name: str) -> bool:
        try:
            self.lstat(name)
        except FileNotFoundError:
            return False
        return True

    def sub(self, name: str, *, create: bool = True) -> Folder:
        """A folder inside this one (made if missing); PathRefused if it is a link or a file."""
        where = self.path / name
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self._at(name), dir_fd=self._dir_fd())
        if not PINNED:
            kind = kind_of(self.lstat(name))
            if kind != "folder":
                raise PathRefused(PATH_NOT_REGULAR, f"{where} is {_article(kind)}, not a folder")
            return Folder(where, None)
        try:
            fd = os.open(self._at(name), _DIRECTORY, dir_fd=self._dir_fd())
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                kind = kind_of(self.lstat(name))
                raise PathRefused(
                    PATH_NOT_REGULAR,
                    f"{where} is {_article(kind)}, not a folder; a Runner never follows a "
                    "symbolic link",
                ) from None
            raise
        return Folder(where, fd)

    def entries(self) -> list[Entry]:
        """Everything in the folder by name, as lstat sees it (nothing followed)."""
        found = []
        fd = self._dir_fd()
        with os.scandir(fd) if fd is not None else os.scandir(self.path) as listing:
            for item in listing:
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone meanwhile
                found.append(
                    Entry(item.name, kind_of(info), info.st_size, info.st_mtime_ns, info.st_ino)
                )
        return sorted(found, key=lambda e: e.name)

    def read(self, name: str, limit: int) -> bytes:
        """A regular file's bytes (at most `limit`, else ValueError); PathRefused for a link or
        anything else, without reading it."""
        flags = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
        flags |= getattr(os, "O_BINARY", 0)
        if not PINNED:
            kind = kind_of(self.lstat(name))
            if kind != "file":
                raise PathRefused(PATH_NOT_REGULAR, f"{name} is {_article(kind)}; nothing read")
        try:
            fd = os.open(self._at(name), flags, dir_fd=self._dir_fd())
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise PathRefused(
                    PATH_NOT_REGULAR, f"{name} is a symbolic link; nothing read"
                ) from None
            raise
        with os.fdopen(fd, "rb") as handle:
            kind = kind_of(os.fstat(handle.fileno()))
            if kind != "file":
                raise PathRefused(PATH_NOT_REGULAR, f"{name} is {_article(kind)}; nothing read")
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise ValueError(f"more than {limit} bytes")
        return data

    def move(self, name: str, to: Folder, new_name: str) -> None:
        """Rename `name` into `to` (a link moves as the link, never its target)."""
        os.replace(
            self._at(name), to._at(new_name), src_dir_fd=self._dir_fd(), dst_dir_fd=to._dir_fd()
        )

    def write(self, name: str, data: bytes) -> None:
        """Replace `name` with `data` atomically: a new file (never opened through a link), then
        renamed over whatever had the name."""
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        flags |= getattr(os, "O_BINARY", 0)
        fd = os.open(self._at(temporary), flags, 0o644, dir_fd=self._dir_fd())
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            self.move(temporary, self, name)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self._at(temporary), dir_fd=self._dir_fd())
            raise
        self.sync()

    def sync(self) -> None:
        """Make renames and new files in this folder durable (POSIX)."""
        if self._fd is not None:
            os.fsync(self._fd)


def _article(kind: str) -> str:
    return "a folder" if kind == "folder" else kind


def write_inside(base: Path, relative: str, data: bytes) -> str:
    """Write `data` to `relative` inside the folder `base` (made as needed), never through a
    link and never outside: PathRefused otherwise. The path written, relative to `base`."""
    parts = relative.replace("\\", "/").split("/")
    if (
        not relative
        or "\0" in relative
        or relative.startswith(("/", "\\"))
        or (len(relative) > 1 and relative[1] == ":")  # a drive
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise PathRefused(PATH_OUTSIDE_ROOTS, f"{relative!r} is outside the Runner's data folder")
    roots = AllowedRoots.of(base)
    base.mkdir(parents=True, exist_ok=True)
    folder = Folder.open(base, roots, "the data folder")
    try:
        for part in parts[:-1]:
            inner = folder.sub(part)
            folder.close()
            folder = inner
        folder.write(parts[-1], data)
    finally:
        folder.close()
    return "/".join(parts)
