"""The processes a test started, read from /proc (Linux): who descends from whom, who is still
alive, and the ones carrying this session's mark. Used by the session's no-leftover check
(conftest.py) and by the tests that kill a coordinator and wait for its workers."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SESSION_ENV = "ARENA_TUI_TEST_SESSION"  # set by conftest for this test process; children inherit it
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    state: str  # R, S, D, Z (zombie: dead, not yet reaped), ...
    rss_mb: float
    cmd: str

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}, {self.rss_mb:.0f} MB): {self.cmd[:160]}"


def read(pid: int) -> Proc | None:
    """One process, or None when it is gone (or /proc is not there)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
    pages = int(rest[21]) if len(rest) > 21 else 0
    return Proc(pid, int(rest[1]), rest[0], pages * os.sysconf("SC_PAGE_SIZE") / 2**20, cmd or f"[{name}]")


def all_procs() -> list[Proc]:
    out = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit() and (p := read(int(entry.name))) is not None:
            out.append(p)
    return out


def descendants(root: int, procs: list[Proc] | None = None) -> list[Proc]:
    """Every process below `root` in the parent tree (children, their children, …)."""
    procs = all_procs() if procs is None else procs
    below: dict[int, list[Proc]] = {}
    for p in procs:
        below.setdefault(p.ppid, []).append(p)
    out, frontier = [], [root]
    while frontier:
        kids = [k for pid in frontier for k in below.get(pid, []) if k.pid != root]
        out.extend(kids)
        frontier = [k.pid for k in kids]
    return out


def marked(token: str, procs: list[Proc] | None = None) -> list[Proc]:
    """Processes whose environment carries SESSION_ENV=token (inherited from this session)."""
    needle = f"{SESSION_ENV}={token}".encode()
    out = []
    for p in all_procs() if procs is None else procs:
        try:
            env = Path(f"/proc/{p.pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and p.pid != os.getpid():
            out.append(p)
    return out


def alive(pid: int) -> bool:
    p = read(pid)
    return p is not None and p.alive


def wait_gone(pids: list[int], timeout: float, poll: float = 0.05) -> tuple[float, list[int]]:
    """Wait until none of `pids` is alive: (seconds waited, the ones still alive at the timeout)."""
    t0 = time.monotonic()
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() - t0 >= timeout:
            return time.monotonic() - t0, left
        time.sleep(poll)


def kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def reap(pids: list[int]) -> None:
    """Collect those of `pids` that are our dead children (orphans a subreaper adopted are)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux), so a child that dies before its
    own children (a coordinator killed by a timeout) leaves them in our tree, not under init."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
