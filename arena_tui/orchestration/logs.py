"""What a run's process logs: Pipecat's lines on stderr, quieted for a run that prints its own progress.

Its own module, importing nothing at import time: `models` calls it too and loads only what it needs.
"""

from __future__ import annotations

import sys
from typing import Any


#: (module, function) of Pipecat's own log lines about an ErrorFrame: the frame pushed, the worker told of it
_ERROR_FRAME_LOGS = frozenset({
    ("pipecat.processors.frame_processor", "push_error_frame"),
    ("pipecat.pipeline.worker", "_source_push_frame"),
})


def quiet_logs(verbose: bool) -> None:
    """Pipecat logs every frame (and the whole system prompt) at DEBUG; a headless run shows
    warnings, but not Pipecat's two lines per ErrorFrame: the engine records every ErrorFrame as
    an `error` event, which the progress prints (an unreachable endpoint put 8 such lines on
    stderr before the run's one line saying it failed)."""
    from loguru import logger  # deferred: loguru comes with Pipecat; it is configured only for a run

    from arena_tui.store.scrub import scrub_log_record  # deferred: aiosqlite and the store load only for commands that open a database

    def keep(record: Any) -> bool:
        return verbose or (record["name"], record["function"]) not in _ERROR_FRAME_LOGS

    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if verbose else "WARNING", filter=lambda r: keep(r) and scrub_log_record(r))
