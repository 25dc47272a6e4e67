"""The app's run launcher (`arena_tui.launcher.Launcher`), wired in by the CLI: the only way
the UI reaches the run engine.

Its preflight is what stops a run before it starts, checked before anything is recorded (the
new-run dialog), the same checks as `arena-tui run`: the model alias, faults only against the
simulator, the settings, the runner's own preflight (key set, packages installed, speed), the
benchmark and the audio of the selected turns. Nothing here imports the run engine or Pipecat at
import time (every command module is imported to build `--help`); the runner modules load on
first call, so callers run these in a thread.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from arena_tui.spine.bus import ThreadPublisher
from arena_tui.spine.errors import CliError
from ..launcher import ModelChoice
from .engine_thread import on_engine_loop
from .models import cascades, models
from .run_pool import RunPool


def model_choices() -> list[ModelChoice]:
    """Every model alias with what a run with it still needs (key names only, never values), the
    simulator first; last, the cascade spelling, typed in (`cascade:<stt>+<llm>+<tts>`)."""
    out = [ModelChoice(m.alias, m.provider, m.simulated, m.needs, m.needs_fake, manual_commit=m.manual_commit,
                       status=m.status(), status_fake=m.status(fake=True)) for m in models()]
    spelling = cascades()
    return [*sorted(out, key=lambda c: (not c.simulated, c.alias)),
            ModelChoice(spelling.spelling, "cascade", False, (), (), typed=spelling.examples[0])]


def preflight(benchmark: str, config: dict[str, Any], data_dir: Path | None) -> list[str]:
    """Every problem that would make this run fail at its start, each a line naming what to fix:
    the engine's own check (`runners.engine.check_run`), then what only a run's start would
    find (the benchmark, its turns, the provider's limits, the audio)."""
    from benchmarks.registry import load_benchmark, missing_audio  # deferred: loads on first use, in a thread (--help imports this module)
    from runners.config import RunConfig  # deferred: the engine loads on first use, in a thread (--help imports this module)
    from runners.engine import RunError, check_run, runner_for, select_turns  # deferred: the engine loads on first use, in a thread (--help imports this module)

    try:
        runner = runner_for(str(config.get("model", "")), config.get("service"))
    except RunError as e:
        return [str(e)]
    try:
        cfg = RunConfig(**config)
    except ValueError as e:  # ConfigError: one line naming the flag (faults, speed, …)
        return [str(e)]
    try:
        bench = load_benchmark(benchmark, data_dir, speaker=cfg.speaker)
    except Exception as e:
        return check_run(cfg, runner) + [f"benchmark {benchmark!r}: {e}"]
    try:
        turns = select_turns(bench, cfg.turns)
    except (RunError, ValueError) as e:
        return check_run(cfg, runner) + [str(e)]
    problems = check_run(cfg, runner, bench)  # the provider's preflight; the settings against the benchmark
    try:  # the provider's limits (GLM's prompt cap)
        runner.check_benchmark(bench)
    except (RunError, ValueError) as e:
        problems.append(str(e))
    if runner.mode != "text" and (line := missing_audio(bench, [t.turn_index for t in turns], benchmark)):
        problems.append(line)
    return problems


def plays_audio(model: str, service: str | None) -> bool | None:
    """Whether a model's runs play the benchmark's audio, from the providers' catalog (no Pipecat);
    None when only loading it would tell (a user's own `--service` class, an unknown alias)."""
    from runners import catalog  # deferred: the catalog is data, read only when a run is checked

    if service:
        return None
    try:
        return catalog.find(model).mode != "text"
    except ValueError:
        return None


def check_start(config: Any) -> None:
    """`arena-tui run`'s check once its first line is out: the engine's own (`runners.engine.check_run`;
    the benchmark's part was checked before that line) as one CliError."""
    from runners.engine import RunError, check_run, runner_for  # deferred: after the headline and the data checks, which need no provider

    try:
        runner = runner_for(config.model, config.service)
    except RunError as e:
        raise CliError(str(e)) from None
    problems = check_run(config, runner)
    if problems:
        raise CliError("cannot run: " + "; ".join(problems))


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

    def preflight(self, benchmark: str, config: dict[str, Any], data_dir: Path | None) -> list[str]:
        return preflight(benchmark, config, data_dir)

    def parse_turns(self, spec: str) -> list[int]:
        from runners.config import parse_turns  # deferred: the engine loads on first use, in a thread (--help imports this module)

        return parse_turns(spec)

    def load_engine(self) -> None:
        # with a pool, only what checks a run's settings here: Pipecat loads in the workers
        importlib.import_module("runners.config" if self.pool is not None else "runners.engine")

    def start_run(self, benchmark: Any, config: dict[str, Any], bus: Any, run_id: str) -> Awaitable[Any]:
        """The run in a worker process (with a pool) or on the engine's own loop (`engine_thread`),
        its events handed to `bus` on the caller's loop: the monitor's loop stays free for keys and
        frames. Call it on that loop."""
        from runners.config import RunConfig  # deferred: the engine loads on first use, in a thread (--help imports this module)

        try:
            cfg = RunConfig(**config)
        except Exception as e:
            raise ValueError(f"bad run settings: {e}") from None
        if self.pool is not None:
            return self.pool.run(benchmark, cfg.model_dump(exclude_defaults=True), bus, run_id)
        from runners.engine import run_benchmark  # deferred: the engine loads on first use, in a thread (--help imports this module)

        publisher = ThreadPublisher(bus, asyncio.get_running_loop())
        return on_engine_loop(lambda: run_benchmark(benchmark, cfg, publisher, run_id=run_id,  # type: ignore[arg-type]
                                                    on_session=self.on_session))

    async def close(self) -> None:
        """Stop the pool's workers (the monitor is closing; its runs were stopped first)."""
        if self.pool is not None:
            await self.pool.close()

