"""A Ray worker's scratch folder: where it unpacks the benchmarks its runs need (once per worker
process), deleted when the worker is closed; a worker sweeps those of dead processes it finds
(only ours: this user, our prefix, a pid that no longer runs), and the coordinator deletes a
killed local worker's (`ray_executor.py`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from arena_tui.campaign.snapshot import BenchmarkSnapshot

SCRATCH_PREFIX = "arena-ray-"
_SCRATCH: Path | None = None
_BENCHMARKS: dict[str, Any] = {}


def scratch() -> Path:
    """This worker's folder for unpacked benchmarks; the pid in its name lets a sweep know it abandoned."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    return _SCRATCH


def sweep_scratch() -> None:
    """Delete our scratch folders whose process is gone (a worker killed with its coordinator):
    only ours (this user, our prefix with a pid) and only when that pid no longer runs."""
    root = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for p in root.glob(f"{SCRATCH_PREFIX}*-*"):
            pid = p.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                if p.stat().st_uid != os.getuid():
                    continue
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(p, ignore_errors=True)
            except OSError:
                continue


def unpacked(snap: BenchmarkSnapshot) -> Any:
    """Unpack a snapshot once per worker process (workers run many runs)."""
    if snap.key not in _BENCHMARKS:
        _BENCHMARKS[snap.key] = snap.materialize(scratch())
    return _BENCHMARKS[snap.key]


def remove_scratch() -> None:
    """This worker's scratch and the benchmarks unpacked in it, gone (the worker is closing)."""
    global _SCRATCH
    if _SCRATCH is not None:
        shutil.rmtree(_SCRATCH, ignore_errors=True)
        _SCRATCH = None
        _BENCHMARKS.clear()
