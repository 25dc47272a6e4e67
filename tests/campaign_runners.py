"""Runners for campaign tests (the executors' `runner=` hook), run inside real worker processes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

WEDGED_MARK = "ARENA_TEST_WEDGED_MARK"  # a file the wedged runner writes its pid to


async def wedged(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """A run whose event loop never gets back (as one caught in a frame chain that never yields,
    issue 23): it blocks the worker's loop, which can then no longer act on a "stop"."""
    Path(os.environ[WEDGED_MARK]).write_text(str(os.getpid()))
    time.sleep(3600)
    return {}
