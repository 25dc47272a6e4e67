"""The one-node Ray cluster a campaign starts when it has none to join: lean, and gone with it.

Lean. `ray.init(include_dashboard=False)` still starts Ray's API server (`dashboard.py --minimal`)
and the autoscaler's monitor: two more Python processes importing and polling beside the paced
sessions, for a web UI and an autoscaler a loopback cluster of one node never uses. Neither is
started. Ray runs its workers at nice 15 by default: beside two CPU hogs at nice 0 they got so
little of the cores that every run at 8x lost pace (0/3 cells complete, 41-83 s start-up, the
engine's import alone 31 s per worker) where the local pool's workers completed; ours run at
nice 0, as local workers do.

Gone. Ray's parent-death signal takes the GCS and the raylet with a killed coordinator, but not
the raylet's agents, which lived 61 s more, nor the session folder: `ray_reaper` does that.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from .ray_reaper import DONE, remove_session

log = logging.getLogger("arena_tui.ray")

#: Ray's `worker_niceness` for a cluster we start (Ray's default: 15)
WORKER_NICENESS = 0
#: what the head node of a cluster we start does not run (methods of Ray's `Node` that start them)
NOT_STARTED = ("start_api_server", "start_monitor")


@contextlib.contextmanager
def _head_without_extras() -> Iterator[None]:
    """While a head node starts in this process: Ray's API server and autoscaler monitor are not
    started (private: `ray._private.node.Node`; a Ray without these methods starts them, as before)."""
    try:
        node_cls = importlib.import_module("ray._private.node").Node
    except (ImportError, AttributeError):
        node_cls = None
    saved = {name: getattr(node_cls, name) for name in NOT_STARTED if hasattr(node_cls, name)}
    for name in saved:
        setattr(node_cls, name, lambda self, *a, **kw: None)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(node_cls, name, fn)


class OwnCluster:
    """A cluster this process started: its session folder, and the reaper that removes it all if
    this process dies before `close`."""

    def __init__(self, session: Path | None, root_existed: bool) -> None:
        self.session = session
        self.root_existed = root_existed
        self._reaper: subprocess.Popen[bytes] | None = None

    @classmethod
    def start(cls, ray: ModuleType, root: Path, **init: object) -> OwnCluster:
        """`ray.init(address="local", **init)` without the extras, workers at `WORKER_NICENESS`,
        and the reaper watching. Blocking (seconds): call it in a worker thread."""
        root_existed = root.exists()
        with _head_without_extras():
            ray.init(address="local", include_dashboard=False, _system_config={"worker_niceness": WORKER_NICENESS},
                     **init)
        session = None
        with contextlib.suppress(Exception):  # (private, but the only place the session dir is)
            session = Path(ray._private.worker._global_node.get_session_dir_path())
        own = cls(session, root_existed)
        if session is not None:
            own._reaper = subprocess.Popen(
                [sys.executable, "-m", "arena_tui.orchestration.ray_reaper", str(os.getpid()), str(session),
                 *([] if root_existed else ["--remove-root"])],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        return own

    def close(self) -> None:
        """After `ray.shutdown()`: the session folder goes, and the reaper with nothing to do."""
        if self.session is not None:
            remove_session(self.session, remove_root=not self.root_existed)
        if self._reaper is not None:
            with contextlib.suppress(OSError, ValueError):
                self._reaper.stdin.write(DONE)  # type: ignore[union-attr]  # started with stdin=PIPE
                self._reaper.stdin.close()  # type: ignore[union-attr]  # started with stdin=PIPE
            try:
                self._reaper.wait(5)
            except subprocess.TimeoutExpired:
                log.warning("the Ray reaper (pid %d) did not exit: killed", self._reaper.pid)
                self._reaper.kill()
                self._reaper.wait()
