"""The monitor's runs in local worker processes, so they never share the screen's interpreter.

On the engine's thread (engine_thread.py) a run's pacing and Pipecat hops held the GIL the screen
needed: with 8 runs streaming, opening a turn's detail took p95 52-56 ms and the runs' own input
pacing p99 41-55 ms (scripts/bench_ui_pacing.py --keys 8). Here each run is a `Job` on a
`LocalExecutor` the monitor owns: the workers (spawned on the first run, kept until the monitor
closes, dying with it) run the sessions, and every event comes back onto the monitor's bus in
order, where the store records it and the judge scores it, as for a run on the engine thread.

`run` behaves like awaiting the run in place: it returns when the run has ended, raises its
error, and cancelled it cancels the run and returns only after the run has published its
`interrupted` ending.
"""

from __future__ import annotations

import asyncio
from typing import Any

from arena_tui.campaign.snapshot import SnapshotError, snapshot
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings

from .executor import DEFAULT_RUNNER, Job, JobOutcome
from .local import ExecutorError, LocalExecutor


class RunPool:
    """Worker processes for the monitor's runs: `workers` of them (default: one per core), each
    holding up to `per_worker` sessions as admission control allows (`LocalExecutor`)."""

    def __init__(self, *, runner: str = DEFAULT_RUNNER, workers: int | None = None, per_worker: int = 8) -> None:
        self.runner = runner
        self.workers = workers
        self.per_worker = per_worker
        self._executor: LocalExecutor | None = None
        self._starting: asyncio.Task[LocalExecutor] | None = None
        self._waiting: dict[str, asyncio.Future[JobOutcome]] = {}

    @property
    def executor(self) -> LocalExecutor | None:
        """The pool's executor once its workers are up (tests and benchmarks read its pids)."""
        return self._executor

    async def run(self, benchmark: Benchmark, settings: RunSettings, bus: EventBus, run_id: str) -> dict[str, Any]:
        """Run `benchmark` with `settings` in a worker; its events go to `bus`."""
        executor = await self._ready(bus)
        try:  # every turn's audio read here, in a thread: a worker runs from its own copy (campaign.snapshot)
            snap = await asyncio.to_thread(snapshot, benchmark, missing_ok=True)
        except SnapshotError as e:
            raise RuntimeError(str(e)) from None
        done: asyncio.Future[JobOutcome] = asyncio.get_running_loop().create_future()
        self._waiting[run_id] = done
        executor.submit(Job(run_id, snap, settings))
        try:
            outcome = await asyncio.shield(done)
        except asyncio.CancelledError:
            executor.cancel(run_id)
            await asyncio.wait([done])  # until it has ended (its `interrupted` is on the bus) or was lost
            if not done.cancelled():
                done.exception()  # a loss now is no news to a caller that stopped the run
            raise
        finally:
            self._waiting.pop(run_id, None)
        if outcome.status == "error":
            raise RuntimeError(outcome.message)
        return outcome.result

    async def close(self) -> None:
        """Stop the workers (runs still going end `interrupted`); the pool can start again after."""
        starting, self._starting = self._starting, None
        if starting is not None and not starting.done():
            starting.cancel()
        executor, self._executor = self._executor, None
        if executor is not None:
            await executor.close()

    async def _ready(self, bus: EventBus) -> LocalExecutor:
        if self._executor is not None:  # a pool serves one monitor: its bus
            return self._executor
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start(bus))
        return await asyncio.shield(self._starting)

    async def _start(self, bus: EventBus) -> LocalExecutor:
        # speed: no cap, each run goes at the speed it was started with (admission control still
        # decides how many sessions a worker holds)
        executor = LocalExecutor(bus, on_lost=self._lost, on_done=self._done, workers=self.workers,
                                 per_worker=self.per_worker, speed=float("inf"), runner=self.runner)
        try:
            await executor.start()
        except ExecutorError as e:
            await executor.close()
            raise RuntimeError(f"the run workers could not start: {e}") from None
        except BaseException:
            await executor.close()
            raise
        self._executor = executor
        return executor

    def _done(self, job: Job, outcome: JobOutcome) -> None:
        done = self._waiting.get(job.run_id)
        if done is not None and not done.done():
            done.set_result(outcome)

    def _lost(self, job: Job, reason: str) -> None:
        done = self._waiting.get(job.run_id)
        if done is not None and not done.done():
            done.set_exception(RuntimeError(reason))
