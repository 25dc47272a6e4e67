"""A local worker's tie to its coordinator: the worker ends within seconds of the coordinator's death.

Seen without it: after a kill -9 of `campaign run`, both workers went on running sessions for
minutes (1.7 and 2.7 GB), because stopping relied on the worker's event loop reading a "stop"
that the pipe's EOF queued, and a loop busy in a long frame chain never got back to it.

Two signs of the death, either enough, and neither needs the event loop:
  - the kernel's parent-death signal (Linux `prctl(PR_SET_PDEATHSIG)`): SIGTERM as soon as the
    parent dies, kill -9 included. It fires when the parent *thread* that started us ends, so
    the coordinator starts workers from its event loop's thread, which outlives the executor;
    and a parent that died before we asked is caught by re-reading `getppid()` after asking.
  - EOF on the worker's pipe (the coordinator's end closes with it), read by a thread.
Either asks the loop to stop (runs cancelled, scratch removed) and arms a hard exit `GRACE_S`
later, from a thread of its own: a wedged loop, a hung cancellation or a blocked thread at
interpreter exit cannot keep the worker alive. Nobody is left to receive the runs' last events,
so nothing is lost by not waiting longer; the campaign resumes the runs in place.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GRACE_S = 2.0  # a worker with a live loop stops well within this
EXIT_ORPHANED = 3  # the exit status of a worker that ended because its coordinator was gone


def signal_on_parent_death(parent_pid: int, sig: int = signal.SIGTERM) -> bool:
    """Have the kernel send `sig` to this process when its parent dies (Linux; elsewhere the pipe
    alone tells). False when the parent is already gone: no signal would ever come."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        except (OSError, AttributeError):  # no libc prctl: the pipe's EOF still ends us
            pass
    return os.getppid() == parent_pid


class Lifeline:
    """What a worker does once its coordinator is gone: ask to stop, and exit soon regardless."""

    def __init__(self, grace_s: float = GRACE_S) -> None:
        self.grace_s = grace_s
        self.why: str | None = None
        self._stop: Callable[[], None] | None = None
        self._scratch: list[Path] = []
        self._lock = threading.Lock()

    def on_stop(self, request: Callable[[], None]) -> None:
        """How to ask the running worker to stop (thread-safe; its loop may never act on it)."""
        self._stop = request
        if self.why is not None:  # the coordinator went while we were starting
            self._request()

    def remove_on_exit(self, path: Path) -> None:
        self._scratch.append(path)

    def orphaned(self, why: str) -> None:
        """The coordinator is gone (called from the signal handler or the pipe's reader thread)."""
        if not self._lock.acquire(blocking=False):  # the other sign is already handling it
            return
        try:
            if self.why is not None:
                return
            self.why = why
            threading.Thread(target=self._exit_later, daemon=True, name="arena-worker-lifeline").start()
            self._request()
        finally:
            self._lock.release()

    def install(self) -> None:
        """SIGTERM (what the parent-death signal sends) means: the coordinator is gone."""
        signal.signal(signal.SIGTERM, lambda *_: self.orphaned("SIGTERM (coordinator gone)"))

    def _request(self) -> None:
        if self._stop is not None:
            try:
                self._stop()
            except RuntimeError:  # the loop already closed: the exit below is all there is
                pass

    def _exit_later(self) -> None:
        time.sleep(self.grace_s)
        for path in self._scratch:
            shutil.rmtree(path, ignore_errors=True)
        os._exit(EXIT_ORPHANED)
