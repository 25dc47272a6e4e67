"""Run supervision: each run the app starts is an async worker (several at once) that loads the
engine off the UI loop, reads the benchmark, attaches the run's judge and awaits the launcher's
run; a run that cannot start or fails is said (its `run_ended` published when it had started),
and a run counts as finished only once its last events are committed and shown; its end is said
when another screen is on top."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from textual.worker import Worker, WorkerState

from arena_tui.spine.events import ErrorEvent, RunEnded, wall_now
from arena_tui.spine.heap import settle_heap
from arena_tui.spine.ids import new_run_id
from arena_tui.spine.settings import RunSettings
from arena_tui.spine.times import duration_text

from ..launcher import Judge
from ..messages import RunFinished
from ..run_view import RunState, specs_from_benchmark
from ..screens.notices import run_notice, tell, watching


class RunSupervision:
    """A part of `ArenaApp`: `live` (every run it started, by id) and `run_workers`; it reads the
    app's `launcher`, `launch`, `launched`, `bus`, `data_dir`, `judging`, `pump`, `store_life`
    and `_shutdown_task` (a run's end is said elsewhere only while the app is not closing)."""

    live: dict[str, RunState]
    run_workers: dict[str, Worker]

    def running(self, run_id: str) -> bool:
        w = self.run_workers.get(run_id)
        return w is not None and w.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def start_run(self, benchmark: Any, settings: RunSettings, *, judge: Judge = "auto") -> str | None:
        """Start a run in a worker and return its id (None, with a notice, if it cannot start).

        benchmark: a name (loaded from the data dir, with the settings' speaker) or an already
        loaded Benchmark; judge: a `--judge` kind or a callable that builds the judge backend.
        """
        run_id = new_run_id()
        planned = (str(getattr(benchmark, "name", benchmark)), settings.model)
        self.live[run_id] = RunState(run_id, clock=time.monotonic, planned=planned)
        worker = self.run_worker(
            self._run(run_id, benchmark, settings, judge),
            name=f"run:{run_id}",
            group="runs",
            exit_on_error=False,
        )
        self.run_workers[run_id] = worker
        return run_id

    async def _run(self, run_id: str, benchmark_name: Any, settings: RunSettings, judge: Judge) -> None:
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
            self.notify(f"run {run_id}: {error}", severity="error", timeout=10)
        finally:
            await self._settle()
            self.post_message(RunFinished(run_id, status, error))

    async def _settle(self) -> None:
        """Before a run counts as finished: its last events committed, and shown (they are shown
        only once committed, see CommitGate)."""
        await self.store_life.flush()
        self._pump_if_shown()

    async def stop_runs(self, run_ids: Iterable[str] | None = None) -> None:
        ids = list(run_ids) if run_ids is not None else list(self.run_workers)
        workers = [self.run_workers[i] for i in ids if i in self.run_workers]
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
            self.pump()
        except Exception:  # no screen any more (the app is closing)
            pass

    def on_run_finished(self, message: RunFinished) -> None:
        self.pump()
        state = self.live.get(message.run_id)
        then = ""
        if self.launch and self.launch.then and state is not None and message.run_id == self.launched:
            # what to do next, once the run it was started for ends (`arena-tui demo`): its run screen
            # says it in two lines of its own (covering nothing; any key hides it), never a toast over
            # the answer it points at; the commands (`launch.then`) print when the monitor closes
            then = (f"run {message.status} in {duration_text(state.elapsed_ms())} (wall clock) · enter: a turn's detail, "
                    "why it passed or failed · q quits and prints the commands to run next")
        for screen in self.screen_stack:
            screen.post_message(RunFinished(message.run_id, message.status, message.error, then))
        if not watching(self.screen, run_id=message.run_id) and self._shutdown_task is None:
            tell(self, *run_notice(message.run_id, message.status, message.error, state))
