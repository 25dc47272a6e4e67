"""The one folder `benchmarks import` reads: the folder it was given, nothing above or beside it.

Every path is resolved (links followed) and must stay inside that folder; only a regular file is
opened, and without blocking (a FIFO would hold the read for ever, a device never end it, a
socket refuse it); each file is read up to its limit and every byte read counts against one
budget per benchmark. A refusal says why in words the caller puts after the name it was reading.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_READ_BYTES = 64 << 20  # one benchmark's files together (the reference harness's: under 150 kB)

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotRead(Exception):
    """A file of theirs not read, and why (`str`): outside the folder, not a regular file, too big."""


def kind(mode: int) -> str | None:
    """What a file that is no regular file is ("a FIFO", "a socket", …); None for a regular file."""
    return None if stat.S_ISREG(mode) else next((name for test, name in _KINDS if test(mode)), "not a regular file")


class Folder:
    """The given folder (`root`, resolved) and the bytes read from it so far."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.given = Path(os.path.normpath(root.absolute()))  # as typed (a link on the way to it kept)
        self.read_bytes = 0

    def _lexical(self, path: Path) -> Path | None:
        """`path` relative to the folder as written (links not followed), or None when it names a place outside it."""
        p = Path(os.path.normpath(path.absolute()))
        for base in (self.root, self.given):
            if p.is_relative_to(base):
                return p.relative_to(base)
        return None

    def resolved(self, path: Path) -> Path | None:
        """`path` with its links followed, or None when that leaves the folder (or loops)."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a symlink loop
            return None
        return real if real.is_relative_to(self.root) else None

    def inside(self, path: Path) -> bool:
        return self.resolved(path) is not None

    def shown(self, path: Path) -> str:
        """`path` as the user reads it: relative to the folder where it is in it."""
        rel = self._lexical(path)
        return str(path) if rel is None else str(rel)

    def outside(self, path: Path) -> str:
        """Why `path` is not read: where it leads, outside the folder."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return f"{self.shown(path)} is a symlink loop"
        if self._lexical(path) is not None:
            return f"{self.shown(path)} links to {real}, outside {self.root}"
        return f"{path} is outside {self.root}"

    def problem(self, path: Path) -> str | None:
        """Why `path` (which exists) would not be read: outside the folder, or no regular file; None: it would."""
        real = self.resolved(path)
        if real is None:
            return self.outside(path)
        try:
            what = kind(os.stat(real).st_mode)
        except OSError as e:
            return f"cannot read {self.shown(path)}: {e.strerror or e}"
        return f"{self.shown(path)} is {what}, not a regular file" if what else None

    def read(self, path: Path, limit: int) -> bytes:
        """The bytes of a regular file inside the folder, at most `limit` of them and within what
        is left of `MAX_READ_BYTES`; NotRead saying why not; OSError as the system says it."""
        real = self.resolved(path)
        if real is None:
            raise NotRead(self.outside(path))
        if (what := kind(os.stat(real).st_mode)) is not None:  # (a socket cannot even be opened)
            raise NotRead(f"{self.shown(path)} is {what}, not a regular file")
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if (what := kind(st.st_mode)) is not None:
                raise NotRead(f"{self.shown(path)} is {what}, not a regular file")
            left = MAX_READ_BYTES - self.read_bytes
            if st.st_size > limit:
                raise NotRead(f"{self.shown(path)} is {_mib(st.st_size)}, more than the {_mib(limit)} a file may hold")
            if st.st_size > left:
                raise NotRead(f"{self.shown(path)} is {_mib(st.st_size)}: with what was read before it, more than the "
                              f"{_mib(MAX_READ_BYTES)} one benchmark's files may hold together")
            os.set_blocking(fd, True)
            chunks, got, most = [], 0, min(limit, left)
            while got <= most and (chunk := os.read(fd, min(1 << 20, most + 1 - got))):
                chunks.append(chunk)
                got += len(chunk)
            if got > most:  # it grew while read
                raise NotRead(f"{self.shown(path)} grew past {_mib(most)} while it was read")
        finally:
            os.close(fd)
        self.read_bytes += got
        return b"".join(chunks)


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"
