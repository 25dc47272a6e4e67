"""Why a file a benchmark names is not there to read, said as what it is: missing, a symlink
loop, a symlink to nothing, a folder, unreadable. A loop and a dangling link are broken copies,
not audio still to be synthesised, so they are reported whether or not the rest is recorded."""

from __future__ import annotations

import errno
import os
from pathlib import Path

MISSING = "WAV missing"


def absent_reason(path: Path) -> str:
    """One line saying why `path` is not a WAV to read (`MISSING: path` when it just is not there)."""
    try:
        path.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            return f"WAV is a symlink loop (each link leads back to another): {path}"
        if path.is_symlink():
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return f"WAV is a symlink to nothing ({target} does not exist): {path}"
        if e.errno in (errno.EACCES, errno.EPERM):
            return f"WAV cannot be read ({e.strerror}): {path}"
        return f"{MISSING}: {path}"
    if path.is_dir():
        return f"WAV is a folder, not a file: {path}"
    return f"{MISSING}: {path}"


def broken(reason: str) -> bool:
    """Whether `absent_reason`'s answer is a broken file (a loop, a dangling link, a folder, no
    permission) rather than a WAV not made yet."""
    return not reason.startswith(MISSING)
