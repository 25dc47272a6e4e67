"""The engine's public entry point: `run_benchmark` picks the turn loop for the provider's
`mode` (`runners.run.audio` or `runners.run.text`, and `runners.run.full_duplex` for an audio
model that is full duplex; their shared run life is `runners.run.base`) and runs it. Nothing else is its output but events on the bus: the
store, the UI and the judge are subscribers.
"""

from __future__ import annotations

from collections.abc import Callable

from arena_tui.spine.ids import new_run_id
from arena_tui.spine.bus import EventBus
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.settings import RunSettings

from .base import ProviderRunner, RunError, get_runner
from .providers.service import service_runner
from .run.audio import AudioRun
from .run.base import RunBase
from .run.session_base import SessionBase
from .run.full_duplex import FullDuplexRun
from .run.history import CONTINUE_PROMPT, Seed, history_from_results
from .run.rehydrate import RehydratedRun
from .run.text import TextRun

__all__ = [
    "CONTINUE_PROMPT", "RunError", "Seed", "check_run", "history_from_results", "run_benchmark", "runner_for",
]

LOOPS: dict[str, type[AudioRun] | type[TextRun]] = {"audio": AudioRun, "text": TextRun}


def runner_for(model: str, service: str | None = None) -> ProviderRunner:
    """The runner registered for the alias `model`, or for a user's own Pipecat class
    (`--service`, `model` then being the id it is given); RunError naming the problem."""
    if service:
        return service_runner(service)
    try:
        return get_runner(model)
    except ValueError as e:
        raise RunError(str(e)) from None


def check_run(config: RunSettings, provider: ProviderRunner, benchmark: Benchmark | None = None) -> list[str]:
    """What stops this run before it starts, one line each: the provider's own preflight (key
    set, packages installed, speed, input it cannot honour) and, given the benchmark, the settings
    against it (`RunSettings.check_benchmark`: its turns, the faults' turns). `run_benchmark`
    refuses a run on these (a provider's limits on the benchmark, `check_benchmark`, fail the run
    as it starts); the one preflight before a run starts (`arena_tui.orchestration.preflight`)
    checks all of them."""
    return list(provider.preflight(config)) + (config.check_benchmark(benchmark) if benchmark is not None else [])


async def run_benchmark(
    benchmark: Benchmark,
    config: RunSettings,
    bus: EventBus,
    run_id: str | None = None,
    *,
    on_session: Callable[[SessionBase], None] | None = None,
    provider: ProviderRunner | None = None,
    resume: Seed | None = None,
    preflighted: bool = False,
) -> str:
    """Run `benchmark` under `config`, publishing every event on `bus`; returns the run id.

    Cancelling the task stops the run cleanly: the turn under way is recorded as
    `interrupted`, its audio is flushed, and `run_ended(status="interrupted")` is published.
    `on_session` sees each session as it opens (instrumentation: scripts/bench_pacing.py).
    `provider` is a runner instance to use instead of the one registered for `config.model`
    (tests keep it to inspect its fake).

    `resume` continues the interrupted run `run_id` at `resume.resumed_from`: the run's turns
    from there on, in a new session given `resume.history` (the finished turns) through the
    provider's replay path, on the run's timeline after `resume.start_ms`; `run_resumed` is
    published instead of `run_started`. `config.mode == "rehydrated"` plays every turn in its
    own session seeded with the golden turns before it (`run.rehydrate`).

    `preflighted`: the one preflight (`arena_tui.orchestration.preflight`, which runs `check_run`)
    has just found nothing to stop this run, so it is not checked twice; else it is checked here.
    """
    run_id = run_id or new_run_id()
    if provider is None:
        provider = runner_for(config.model, config.service)
    if not preflighted and (problems := check_run(config, provider, benchmark)):  # refused before anything starts
        raise RunError("; ".join(problems))
    turns = config.turns_of(benchmark)
    loop = FullDuplexRun if provider.caps.duplex and provider.mode == "audio" else LOOPS[provider.mode]
    if resume is not None:
        if resume.resumed_from is None:
            raise RunError("resume: no turn to resume from")
        if config.mode == "rehydrated":
            raise RunError("resume: a rehydrated run is not resumed (re-run its turns instead)")
        order = [t.turn_index for t in turns]
        if resume.resumed_from not in order:
            raise RunError(f"resume: turn {resume.resumed_from} is not among the run's turns")
        turns = turns[order.index(resume.resumed_from) :]
    if config.mode == "rehydrated":
        await RehydratedRun(loop, benchmark, config, bus, run_id, provider, on_session).execute(turns)
        return run_id
    run: RunBase = loop(benchmark, config, bus, run_id, provider, on_session, seed=resume)
    await run.execute(turns)
    return run_id
