"""The engine's public entry point: `run_benchmark` picks the turn loop for the provider's
`mode` (`runners.run.audio` or `runners.run.text`; their shared run life is
`runners.run.base`) and runs it. Nothing else is its output but events on the bus: the
store, the UI and the judge are subscribers.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from arena_tui.spine.bus import EventBus
from arena_tui.spine.benchmark import Benchmark

from .base import ProviderRunner, RunError, get_runner
from .config import RunConfig
from .run.audio import AudioRun
from .run.base import CONTINUE_PROMPT, RunBase, SessionBase, select_turns
from .run.text import TextRun

__all__ = ["CONTINUE_PROMPT", "RunError", "run_benchmark", "select_turns"]

LOOPS: dict[str, type[AudioRun] | type[TextRun]] = {"audio": AudioRun, "text": TextRun}


async def run_benchmark(
    benchmark: Benchmark,
    config: RunConfig,
    bus: EventBus,
    run_id: str | None = None,
    *,
    on_session: Callable[[SessionBase], None] | None = None,
    provider: ProviderRunner | None = None,
) -> str:
    """Run `benchmark` under `config`, publishing every event on `bus`; returns the run id.

    Cancelling the task stops the run cleanly: the turn under way is recorded as
    `interrupted`, its audio is flushed, and `run_ended(status="interrupted")` is published.
    `on_session` sees each session as it opens (instrumentation: scripts/bench_pacing.py).
    `provider` is a runner instance to use instead of the one registered for `config.model`
    (tests keep it to inspect its fake).
    """
    run_id = run_id or uuid.uuid4().hex
    if provider is None:
        try:
            provider = get_runner(config.model)
        except ValueError as e:
            raise RunError(str(e)) from None
    problems = provider.preflight(config)
    if problems:
        raise RunError("; ".join(problems))
    try:  # faults on turns the benchmark does not have: refused before anything starts
        config.check_benchmark(benchmark)
    except ValueError as e:
        raise RunError(str(e)) from None
    turns = select_turns(benchmark, config.turns)
    run: RunBase = LOOPS[provider.mode](benchmark, config, bus, run_id, provider, on_session)
    await run.execute(turns)
    return run_id
