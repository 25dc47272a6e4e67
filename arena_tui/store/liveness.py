"""Is the process that is recording something still there? The one rule, for runs and campaigns.

A row that something is working on names that process (pid, host) and carries a heartbeat it
renews every `HEARTBEAT_S` while it lives. On this host the pid decides at once (a kill -9
included: an unreaped zombie counts as gone); for a process on another host only the heartbeat
can tell, and it is stale after `STALE_AFTER_S`. `runs` (through `Store.mark_interrupted_stale`)
and `campaign show|list` (a cell's run and its campaign's coordinator) judge with this alone.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from pathlib import Path

HEARTBEAT_S = 10.0  # idle heartbeat of live runs and of a running campaign's coordinator
STALE_AFTER_S = 120.0  # a process on another host with no heartbeat this long is dead
THIS_HOST = socket.gethostname()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an unreaped zombie still answers kill(0)
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def recorder_alive(pid: int | None, host: str | None, last_beat: datetime | None, *,
                   now: datetime | None = None, this_host: str = THIS_HOST,
                   stale_after_s: float = STALE_AFTER_S) -> bool:
    """Whether the process (pid on host) whose last sign of life was `last_beat` still runs.

    No beat at all (nothing recorded one) reads as alive: only evidence makes a process dead."""
    if host == this_host and pid:
        return pid_alive(int(pid))
    if last_beat is None:
        return True
    return ((now or datetime.now(UTC)) - last_beat).total_seconds() <= stale_after_s
