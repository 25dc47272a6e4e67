"""The app's run launcher (`arena_tui.launcher.Launcher`), wired in by the CLI: the only way
the UI reaches the run engine.

Its preflight is what stops a run before it starts, checked before anything is recorded (the
new-run dialog): the one preflight `arena-tui run` and campaigns use too (`preflight.py`).
Nothing here imports the run engine or Pipecat at import time (the monitor starts without it);
the runner modules load on first call, so callers run these in a thread.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus, ThreadPublisher
from arena_tui.spine.settings import RunSettings
from ..launcher import ModelChoice
from .engine_thread import on_engine_loop
from .models import cascades, models
from .preflight import preflight
from .run_pool import RunPool


def model_choices() -> list[ModelChoice]:
    """Every model alias with what a run with it still needs (key names only, never values), the
    simulator first; last, the cascade spelling, typed in (`cascade:<stt>+<llm>+<tts>`)."""
    out = [ModelChoice(m.alias, m.provider, m.simulated, m.needs, m.needs_fake, manual_commit=m.manual_commit, effort=m.effort,
                       status=m.status(), status_fake=m.status(fake=True)) for m in models()]
    spelling = cascades()
    return [*sorted(out, key=lambda c: (not c.simulated, c.alias)),
            ModelChoice(spelling.spelling, "cascade", False, (), (), typed=spelling.examples[0])]


class EngineLauncher:
    """`arena_tui.launcher.Launcher` over the real run engine (`runners.engine`).

    pool: run each run in a worker process (`RunPool`, what `arena-tui` does); None: on the
    engine's thread in this process (tests that reach into a run's process use this).
    on_session: called with each session a run opens, on the engine's thread (a benchmark
    script reads the sessions' input pacing through it; runs on the engine thread only)."""

    on_session: Callable[[Any], None] | None = None

    def __init__(self, pool: RunPool | None = None) -> None:
        self.pool = pool

    def models(self) -> list[ModelChoice]:
        return model_choices()

    def preflight(self, benchmark: str, settings: RunSettings, data_dir: Path | None) -> list[str]:
        return preflight(benchmark, settings, data_dir).problems

    def load_engine(self) -> None:
        if self.pool is None:  # with a pool, Pipecat loads in the workers
            importlib.import_module("runners.engine")

    def start_run(self, benchmark: Benchmark, settings: RunSettings, bus: EventBus, run_id: str) -> Awaitable[Any]:
        """The run in a worker process (with a pool) or on the engine's own loop (`engine_thread`),
        its events handed to `bus` on the caller's loop: the monitor's loop stays free for keys and
        frames. Call it on that loop."""
        if self.pool is not None:
            return self.pool.run(benchmark, settings, bus, run_id)
        from runners.engine import run_benchmark  # deferred: the engine loads on first use, in a thread (the monitor starts without it)

        publisher = ThreadPublisher(bus, asyncio.get_running_loop())
        return on_engine_loop(lambda: run_benchmark(benchmark, settings, publisher, run_id=run_id,  # type: ignore[arg-type]  # the launcher's settings are a RunSettings by the time a run starts
                                                    on_session=self.on_session, preflighted=True))  # (the dialog's, run's preflight)

    async def close(self) -> None:
        """Stop the pool's workers (the monitor is closing; its runs were stopped first)."""
        if self.pool is not None:
            await self.pool.close()

