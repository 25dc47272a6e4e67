"""Run supervision: each run the app starts is an async worker (several at once) that loads the
engine off the UI loop, reads the benchmark, attaches the run's judge and awaits the launcher's
run; a run that cannot start or fails is said (its `run_ended` published when it had started),
and a run counts as finished only once its last events are committed and shown (`RunFinished`
to the app, which says its end)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual.message import Message
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import ErrorEvent, RunEnded, wall_now
from arena_tui.spine.heap import settle_heap
from arena_tui.spine.ids import new_run_id
from arena_tui.spine.settings import RunSettings

from ..launcher import Judge, Launcher
from ..messages import RunFinished
from ..run_view import RunState, specs_from_benchmark

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark


class RunHost(Protocol):
    """What run supervision calls back on the app: a worker run on it, a notice, a message to it
    (`RunFinished`), and its pump (what the bus delivered, folded and shown now)."""

    def run_worker(self, work: Coroutine[Any, Any, None], name: str | None = ..., group: str = ...,
                   *, exit_on_error: bool = ...) -> Worker[None]: ...

    def notify(self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def pump(self) -> None: ...


class JudgeStarter(Protocol):
    """Who attaches a run's judge to the bus (`judging.JudgeSupervisor`)."""

    def start(self, run_id: str, benchmark: Benchmark, judge: Judge) -> None: ...


class Flushes(Protocol):
    """Who commits what has been published (`store_life.StoreLife`)."""

    async def flush(self) -> None: ...


class RunSupervisor:
    """The app's runs: `live` (every run it started, by id: its `RunState`) and `workers` (each one's worker)."""

    def __init__(self, host: RunHost, launcher: Launcher, bus: EventBus, data_dir: Path | None,
                 judging: JudgeStarter, store: Flushes) -> None:
        self.host, self.launcher, self.bus, self.data_dir = host, launcher, bus, data_dir
        self.judging, self.store = judging, store
        self.live: dict[str, RunState] = {}
        self.workers: dict[str, Worker] = {}

    def running(self, run_id: str) -> bool:
        w = self.workers.get(run_id)
        return w is not None and w.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def still_running(self) -> list[str]:
        return [r for r in self.workers if self.running(r)]

    def start(self, benchmark: str | Benchmark, settings: RunSettings, *, judge: Judge = "auto") -> str | None:
        """Start a run in a worker and return its id (None, with a notice, if it cannot start).

        benchmark: a name (loaded from the data dir, with the settings' speaker) or an already
        loaded Benchmark; judge: a `--judge` kind or a callable that builds the judge backend.
        """
        run_id = new_run_id()
        planned = (str(getattr(benchmark, "name", benchmark)), settings.model)
        self.live[run_id] = RunState(run_id, clock=time.monotonic, planned=planned)
        worker = self.host.run_worker(
            self._run(run_id, benchmark, settings, judge),
            name=f"run:{run_id}",
            group="runs",
            exit_on_error=False,
        )
        self.workers[run_id] = worker
        return run_id

    async def _run(self, run_id: str, benchmark_name: str | Benchmark, settings: RunSettings, judge: Judge) -> None:
        state = self.live[run_id]
        status, error = "failed", None
        try:
            # Pipecat's import takes ~1 s of CPU: do it off the UI loop so the screen stays live
            try:
                await asyncio.to_thread(self.launcher.load_engine)
            except ImportError as e:
                raise RuntimeError(f"the run engine is not available yet ({e})") from None
            from benchmarks.registry import load_benchmark  # deferred: loads with the engine, not at app start

            try:
                bench = benchmark_name if not isinstance(benchmark_name, str) else (
                    await asyncio.to_thread(load_benchmark, benchmark_name, self.data_dir, speaker=settings.speaker))
            except Exception as e:
                raise RuntimeError(f"cannot load benchmark {benchmark_name!r}: {e}") from None
            state.specs, state.benchmark_data = specs_from_benchmark(bench), bench
            settle_heap("first run")  # what it loaded: the engine's settings, the benchmark
            for row in state.turns.values():
                row.spec = state.specs.get(row.index)
            run = self.launcher.start_run(bench, settings, self.bus, run_id)
            self.judging.start(run_id, bench, judge)
            await run
            status = state.ended.status if state.ended else "completed"
        except asyncio.CancelledError:
            status = "interrupted"
            raise
        except Exception as e:
            error = str(e) or type(e).__name__
            if state.started is not None and state.ended is None:
                t = state.last_ms
                self.bus.publish(ErrorEvent(run_id=run_id, t_ms=t, where="engine", message=error, fatal=True))
                self.bus.publish(RunEnded(run_id=run_id, t_ms=t, status="failed", reason=error, wall_time=wall_now()))
            else:
                state.log_local(f"run could not start: {error}")
            self.host.notify(f"run {run_id}: {error}", severity="error", timeout=10)
        finally:
            await self._settle()
            self.host.post_message(RunFinished(run_id, status, error))

    async def _settle(self) -> None:
        """Before a run counts as finished: its last events committed, and shown (they are shown
        only once committed, see CommitGate)."""
        await self.store.flush()
        self._pump_if_shown()

    async def stop(self, run_ids: Iterable[str] | None = None) -> None:
        ids = list(run_ids) if run_ids is not None else list(self.workers)
        workers = [self.workers[i] for i in ids if i in self.workers]
        for w in workers:
            if w.state in (WorkerState.PENDING, WorkerState.RUNNING):
                w.cancel()
        for w in workers:
            try:
                await asyncio.wait_for(w.wait(), 15)
            except Exception:
                pass
        self._pump_if_shown()

    def _pump_if_shown(self) -> None:
        try:
            self.host.pump()
        except Exception:  # no screen any more (the app is closing)
            pass
