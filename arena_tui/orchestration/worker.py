"""The worker side of a job, shared by every executor: run it on a local bus, stream batches.

`execute` runs the runner (by default the engine) on a fresh `EventBus` in the worker process,
hands each event batch to `send_batch` as JSON bytes, and returns the outcome as a plain dict
(what crosses back besides events). Cancelling it cancels the run, which then publishes its
own `interrupted` ending; those last events are still sent before `execute` returns.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from typing import Any

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings

from .transport import batches, encode_batch_stepwise

Runner = Callable[..., Awaitable[dict[str, Any] | None]]


async def run_engine(benchmark: Benchmark, settings: RunSettings, bus: EventBus, run_id: str,
                     resume: dict[str, Any] | None = None) -> dict[str, Any]:
    """The default runner: one benchmark run through the engine (continued in place with `resume`)."""
    from runners.engine import run_benchmark  # deferred: the engine (Pipecat, ~1 s) loads in the worker process, never in the coordinator

    # (every job's run was preflighted where it was made: a campaign's cells, the monitor's runs)
    await run_benchmark(benchmark, settings, bus, run_id, resume=resume_seed(resume) if resume else None, preflighted=True)
    return {}


def resume_seed(resume: dict[str, Any]) -> Any:
    """The engine's Seed from a job's `resume` (the coordinator's plan, as JSON): the finished
    turns' history by the history rule, the timeline's continuation, the turn to go on at, and
    the last stored session number (sessions go on after it; without it in the plan, the
    finished turns' highest)."""
    from arena_tui.spine.events import TurnResult  # deferred: with the engine, in the worker process only
    from runners.engine import Seed, history_from_results  # deferred: the engine (Pipecat, ~1 s) loads in the worker process, never in the coordinator

    done = [TurnResult.model_validate(r) for r in resume["done"]]
    return Seed(history=history_from_results(done), start_ms=float(resume["start_ms"]),
                resumed_from=int(resume["from_turn"]), detail=f"resumed at turn {resume['from_turn']}",
                last_session=int(resume.get("last_session", max((r.session for r in done), default=0))))


def load_runner(spec: str) -> Runner:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


async def execute(runner: Runner, benchmark: Benchmark, settings: RunSettings, run_id: str,
                  send_batch: Callable[[bytes], None], resume: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one job; returns {"status": finished|error|cancelled, "message", "result"}."""
    from runners.engine import RunError  # deferred: the engine (Pipecat, ~1 s) loads in the worker process, never in the coordinator

    bus = EventBus()
    sub = bus.subscribe()

    async def forward() -> None:
        async for batch in batches(sub):
            send_batch(await encode_batch_stepwise(batch))

    pump = asyncio.create_task(forward())
    out: dict[str, Any]
    try:
        extra = {"resume": resume} if resume else {}
        result = await runner(benchmark, settings, bus, run_id, **extra)
        out = {"status": "finished", "message": "", "result": result or {}}
    except asyncio.CancelledError:
        out = {"status": "cancelled", "message": "cancelled", "result": {}}
    except RunError as e:
        out = {"status": "error", "message": str(e), "result": {}}
    except Exception as e:  # noqa: BLE001 - reported to the coordinator, which names the run
        out = {"status": "error", "message": f"{type(e).__name__}: {e}", "result": {}}
    finally:
        bus.close()
        await pump
    return out
