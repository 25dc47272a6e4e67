"""Where a run's process logs go: Pipecat's own lines to the log file, the terminal is ours.

Pipecat logs through loguru on stderr (its banner when imported, a line per ErrorFrame, the
websocket's "no close frame received or sent" on a disconnect). The terminal shows our own one-line
account of each event instead (the engine records every ErrorFrame as an `error` event, which the
progress prints); their lines go to `arena-tui.log` beside the database (`spine.paths.log_path`).
Its own module, importing nothing at import time: `models` calls it too and loads only what it needs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: the environment variable that tells a spawned worker process where its log lines go
LOG_ENV = "ARENA_TUI_LOG"


def quiet_logs(verbose: bool, log_file: Path | None = None) -> None:
    """Pipecat's lines (warnings up) to `log_file` (none: dropped); `verbose` puts every line,
    DEBUG included, on stderr as well. Call it before the engine is imported: Pipecat greets on
    import."""
    from loguru import logger  # deferred: loguru comes with Pipecat; it is configured only for a run

    from arena_tui.store.scrub import scrub_log_record  # deferred: aiosqlite and the store load only for commands that open a database

    logger.remove()
    if verbose:
        logger.add(sys.stderr, level="DEBUG", filter=scrub_log_record)
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            logger.add(log_file, level="WARNING", rotation="5 MB", filter=scrub_log_record)
        except OSError:  # an unwritable folder: the lines are lost, the run is not
            pass
        os.environ[LOG_ENV] = str(log_file)  # worker processes spawned from here log to it too


def worker_logs() -> None:
    """In a spawned worker: log where the coordinator does (its `LOG_ENV`), never on the terminal."""
    raw = os.environ.get(LOG_ENV)
    quiet_logs(False, Path(raw) if raw else None)
