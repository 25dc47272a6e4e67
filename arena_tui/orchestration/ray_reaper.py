"""A Ray cluster we start dies with its coordinator at once, and leaves no session folder behind.

Ray gives the processes a driver starts a parent-death signal, so the GCS and the raylet die with
a coordinator killed by kill -9 or the OOM killer; but the raylet's own children (`DashboardAgent`,
`RuntimeEnvAgent`) notice only by polling, then try for 60 s to tell the dead GCS before they exit
(measured: 61 s), and nobody deletes the session folder. So a coordinator that starts a cluster
also starts this small process (no Ray import):

    python -m arena_tui.orchestration.ray_reaper COORDINATOR_PID SESSION_DIR [--remove-root]

It notes the cluster's processes twice a second (the coordinator's children whose command line
names the session, and everything below them, each with its start time so that a reused pid is
never killed) and waits on its stdin, a pipe only the coordinator holds. The coordinator writes
`done` once it has shut the cluster down itself; a pipe that closes without it means the
coordinator died: the reaper kills what is left of the cluster, deletes the session folder (its
`session_latest` link, and Ray's folder when we created it and it is empty) and exits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

SAMPLE_S = 0.5
GONE_TIMEOUT_S = 10.0
DONE = b"done"


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process, or None (gone, or a zombie)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rindex(")") + 2:].split()
    return None if rest[0] in ("Z", "X") else (int(rest[1]), int(rest[19]))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cluster_processes(coordinator: int, session: str) -> dict[int, int]:
    """{pid: start time} of the cluster's processes: the coordinator's children naming `session`
    in their command line (GCS, raylet, log monitor, …) and every process below those."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            parents.setdefault(st[0], []).append(int(entry.name))
            starts[int(entry.name)] = st[1]
    roots = [pid for pid in parents.get(coordinator, []) if session in _cmdline(pid)]
    found, todo = {}, list(roots)
    while todo:
        pid = todo.pop()
        if pid in starts and pid not in found and pid != os.getpid():
            found[pid] = starts[pid]
            todo += parents.get(pid, [])
    return found


def kill_noted(noted: dict[int, int], timeout_s: float = GONE_TIMEOUT_S) -> list[int]:
    """SIGKILL each noted process still running as the same process; the pids still alive after."""
    def same(pid: int) -> bool:
        st = _stat(pid)
        return st is not None and st[1] == noted[pid]

    for pid in noted:
        if same(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + timeout_s
    while (left := [pid for pid in noted if same(pid)]) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def remove_session(session: Path, remove_root: bool) -> None:
    """The session folder, its `session_latest` link when it points there, and Ray's folder when
    we created it and nothing else is in it (the one rule for a normal close and for the reaper)."""
    shutil.rmtree(session, ignore_errors=True)
    latest = session.parent / "session_latest"
    with contextlib.suppress(OSError):
        if latest.is_symlink() and Path(os.readlink(latest)).name == session.name:
            latest.unlink()
    if remove_root:
        with contextlib.suppress(OSError):
            session.parent.rmdir()  # only if empty: anyone else's files stay


def main(argv: list[str]) -> int:
    coordinator, session = int(argv[0]), Path(argv[1])
    remove_root = "--remove-root" in argv[2:]
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):  # a terminal's ctrl+c or hang-up is the coordinator's to handle
        signal.signal(sig, signal.SIG_IGN)
    said: list[bytes] = []
    closed = threading.Event()

    def listen() -> None:
        said.append(sys.stdin.buffer.read())  # until EOF: the coordinator closed it, or died
        closed.set()

    threading.Thread(target=listen, daemon=True).start()
    noted: dict[int, int] = {}
    while not closed.is_set():
        noted.update(cluster_processes(coordinator, session.name))
        closed.wait(SAMPLE_S)
    if DONE in b"".join(said):
        return 0
    kill_noted(noted)
    remove_session(session, remove_root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
