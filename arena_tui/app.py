"""The Textual app: owns the event bus, the store and the run workers; screens render state.

Runs execute as async workers of the app (several at once). One bus subscription folds
every event into a per-run `RunState`; a `REFRESH_HZ` (30 Hz) timer drains it (coalescing,
never a repaint per event) and tells the active screen what changed. The app never imports the
runners or Pipecat: runs start through the `launcher` the CLI gives it (`arena_tui.launcher`).
The store and the judge are imported lazily so the UI starts (and degrades with a message)
without them.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from arena_tui.spine.ids import new_run_id
from arena_tui.spine.bus import EventBus
from arena_tui.spine.heap import settle_heap
from .commit_gate import CommitGate
from .launcher import Judge, Launcher, NoLauncher, RunRequest
from arena_tui.spine.events import ErrorEvent, RunEnded, wall_now
from arena_tui.spine.paths import exports_dir, log_path
from arena_tui.spine.settings import RunSettings
from arena_tui.spine.times import duration_text
from .messages import LiveUpdate, RunFinished
from .playback import Player
from .run_view import RunState, specs_from_benchmark
from .screens.base import ArenaScreen
from .screens.notices import CAMPAIGN_POLL_S, CampaignWatch, run_notice, tell, watching

if TYPE_CHECKING:
    from .store import Store
    from .surface import Arena

REFRESH_HZ = 30  # ≥ 15 meter refreshes/s (levels arrive at uneven 40/60 ms gaps); an idle tick costs nothing


def _trust_the_terminal_size() -> None:
    """Drop inherited COLUMNS/LINES when the real terminal can be asked for its size.

    Textual sizes the screen with `shutil.get_terminal_size()`, which prefers those variables; a stale
    pair (test runners and some shells export COLUMNS=80 LINES=24) would pin the app at that size and
    make it ignore every resize.
    """
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            os.get_terminal_size(stream.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            continue
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
        return


class ArenaApp(App):
    """The monitor. Its screens see it as `arena_tui.surface.Arena` (what they may use of it)."""

    CSS_PATH = "app.tcss"
    TITLE = "arena-tui"
    SUB_TITLE = "Audio Arena live-run monitor"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
    ]

    def __init__(
        self,
        db_path: str | Path | None = None,
        data_dir: str | Path | None = None,
        *,
        launch: RunRequest | None = None,
        open_run: str | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        """launch: a run to start and open at once, as the new-run dialog gives it. launcher: how
        runs start (`arena_tui.orchestration.launch.EngineLauncher`); without one, recorded runs only."""
        super().__init__()
        self.launcher: Launcher = launcher if launcher is not None else NoLauncher()
        self.db_path = Path(db_path) if db_path else None
        self.data_dir = Path(data_dir) if data_dir else None
        self.launch = launch
        self.open_run_id = open_run
        self.launched: str | None = None  # the run `launch` started (its `then` is said when it ends)
        self.bus = EventBus()
        self.store: Store | None = None
        self.store_error: str | None = None
        self._recorder: asyncio.Task | None = None
        self.live: dict[str, RunState] = {}
        self.run_workers: dict[str, Worker] = {}
        self.judges: dict[str, Any] = {}
        self.player = Player()
        self._sub = self.bus.subscribe(accept=lambda e: e.kind != "audio")
        self._shutdown_task: asyncio.Future[None] | None = None
        self._gate: CommitGate | None = None  # live turns are shown once the store has committed them
        self.left_interrupted: list[RunState] = []  # runs still streaming when the app shut down (stopped by it)
        self.campaigns = CampaignWatch()  # campaigns whose end is said while another screen is shown

    # --- lifecycle -----------------------------------------------------------------------
    def run(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("headless") and kwargs.get("size") is None:
            _trust_the_terminal_size()
        return super().run(*args, **kwargs)

    async def on_mount(self) -> None:
        from .screens.runs import RunsScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        self._route_logs()
        await self.open_store()
        self.set_interval(1 / REFRESH_HZ, self.pump)
        self.set_interval(CAMPAIGN_POLL_S, self._watch_campaigns)
        await self.push_screen(RunsScreen())
        settle_heap("start")
        if self.launch is not None:
            run_id = self.launched = self.start_run(self.launch.benchmark, self.launch.settings, judge=self.launch.judge)
            if run_id:
                self.open_run(run_id)
        elif self.open_run_id:
            self.open_run(self.open_run_id)

    def _route_logs(self) -> None:
        """Pipecat logs through loguru straight to the real stderr, which would tear the screen:
        send warnings and errors to a file next to the database instead."""
        try:
            from loguru import logger  # deferred: loguru comes with Pipecat; it is configured only for a run
        except ImportError:
            return
        logger.remove()
        if self.db_path is not None:
            try:
                from .store.scrub import scrub_log_record  # deferred: the UI starts, and says why, even when the store cannot load

                logger.add(log_path(self.db_path), level="WARNING", rotation="5 MB",
                           filter=scrub_log_record)
            except Exception:
                pass

    async def open_store(self) -> None:
        if self.db_path is None:
            self.store_error = "no database configured"
            return
        try:
            from .store import Store  # deferred: the UI starts, and says why, even when the store cannot load
        except ImportError as e:
            self.store_error = f"the store module is not available ({e})"
            return
        try:
            self.store = await Store.open(self.db_path)
            await self.store.mark_interrupted_stale()
            self._recorder = self.store.start_recording(self.bus)
            acks = self.store.committed.subscribe(accept=lambda e: e.kind == "turn_ended")
            self._gate = CommitGate(acks, lambda run_id: run_id in self.live)
        except Exception as e:  # a corrupt or unreadable DB must not crash the UI
            self.store, self.store_error = None, f"cannot open database {self.db_path.name}: {e}"
            self.notify(self.store_error, severity="error", timeout=10)

    async def on_unmount(self) -> None:
        await self.shutdown()  # also when the app exits other than by `q` (tests, ctrl+c)

    def action_quit(self) -> None:
        """With runs still streaming, ask first (they would be left interrupted); then stop runs and
        save in a worker, and exit: the screen stays responsive meanwhile. `q` again in the
        question quits."""
        from .screens.dialogs.confirm import QuitDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        live = [r for r in self.run_workers if self.running(r)]
        if isinstance(self.screen, QuitDialog):  # ctrl+q (a priority key) while it asks
            self.screen.dismiss(True)
            return
        if live and self._shutdown_task is None:
            self.push_screen(QuitDialog(quit_question([self.live[r] for r in live]), yes="Quit", no="Keep running",
                                        id=QUIT_DIALOG),
                             lambda yes: self.quit_now() if yes else None)  # fmt: skip
            return
        self.quit_now()

    def quit_now(self) -> None:
        if self._shutdown_task is None and any(self.running(r) for r in self.run_workers):
            self.notify("stopping runs (kept as interrupted) and saving…", timeout=30)
        self.run_worker(self._quit(), group="quit", exclusive=True)

    async def _quit(self) -> None:
        await self.shutdown()
        self.exit()

    async def shutdown(self) -> None:
        """Stop running runs (they end as interrupted), then make sure everything is committed.

        Idempotent and shared: `q` and unmount await the same task, so neither cuts the other short.
        """
        if self._shutdown_task is None:
            self._shutdown_task = asyncio.ensure_future(self._shutdown_once())
        await asyncio.shield(self._shutdown_task)

    async def _shutdown_once(self) -> None:
        self.player.stop()
        self.left_interrupted = [self.live[r] for r in self.run_workers if self.running(r)]
        await self.stop_runs()
        try:
            await asyncio.wait_for(self.launcher.close(), 60)  # worker processes, once their runs have ended
        except Exception as e:
            self.log.error(f"launcher close: {e}")
        await self._stop_judges()
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
                await asyncio.wait_for(self.store.close(), 15)
            except Exception as e:
                self.log.error(f"store close: {e}")
            self.store = None

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
        try:
            self.pump()
        except Exception:  # no screen any more (the app is closing)
            pass

    # --- runs ----------------------------------------------------------------------------
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
            self.start_judge(run_id, bench, judge)
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
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
            except Exception:  # a store that cannot write has said so already (_check_store_failure)
                pass
        try:
            self.pump()
        except Exception:  # no screen any more (the app is closing)
            pass

    def start_judge(self, run_id: str, benchmark: Any, judge: Any) -> None:
        """Attach a judge to the bus for this run (before the run publishes anything).

        A judge that cannot start is a notice, not an error: the run goes on unjudged.
        """
        if judge == "none":
            return
        try:
            from .judge import JudgeWorker, make_backend  # deferred: the UI starts, and says why, even when the judge cannot load
        except ImportError as e:
            self.notify(f"judge unavailable ({e}): turns will not be scored", severity="warning")
            return
        try:
            backend = judge() if callable(judge) else make_backend(judge)
            worker = JudgeWorker(benchmark, backend, self.bus, run_id)
        except Exception as e:
            self.notify(f"judge could not start ({e}): turns will not be scored", severity="warning", timeout=10)
            return
        self.judges[run_id] = (worker, worker.start(), backend)

    def judge_for(self, state: RunState) -> tuple[Any, str]:
        """(backend, label) to re-judge a run with: its own judge when it has one here, else the kind
        it was judged with, else auto (the configured LLM judge, else the offline heuristic).

        A recorded judge that cannot be rebuilt here (e.g. `reference:<model>` of an imported
        run, or an LLM judge without its key) falls back to auto; the label says so.
        """
        from .judge import BACKENDS, make_backend  # deferred: the UI starts, and says why, even when the judge cannot load
        from .judge.choice import pick_judge  # deferred: the UI starts, and says why, even when the judge cannot load

        if state.run_id in self.judges:
            backend = self.judges[state.run_id][2]
            return backend, _judge_label(backend)
        names = sorted(state.judges)
        if state.any_heuristic:
            backend = make_backend("heuristic")
            return backend, _judge_label(backend)
        why = ""
        if names:
            recorded = pick_judge("recorded", names)  # the judge it was judged with
            if recorded.kind in BACKENDS and recorded.kind != "auto":
                try:
                    backend = make_backend(recorded.kind, recorded.model)
                    return backend, _judge_label(backend)
                except Exception as e:
                    why = f"{names[0]} is not available here ({e})"
            else:
                why = f"{names[0]} cannot be re-run here"
        try:
            backend = make_backend("auto")
        except Exception as e:  # the configured LLM judge cannot start: the offline one always can
            why = f"{why}; " if why else ""
            why += f"auto judge unavailable ({e})"
            backend = make_backend("heuristic")
        label = _judge_label(backend)
        return backend, f"{label}, by auto: {why}" if why else label

    async def _stop_judges(self) -> None:
        for _worker, task, backend in list(self.judges.values()):
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except Exception:
                task.cancel()
            try:
                await backend.aclose()
            except Exception:
                pass
        self.judges.clear()

    def on_run_finished(self, message: RunFinished) -> None:
        self.pump()
        for screen in self.screen_stack:
            screen.post_message(RunFinished(message.run_id, message.status, message.error))
        state = self.live.get(message.run_id)
        if not watching(self.screen, run_id=message.run_id) and self._shutdown_task is None:
            tell(self, *run_notice(message.run_id, message.status, message.error, state))
        if self.launch and self.launch.then and state is not None and message.run_id == self.launched:
            # what to do next, once the run it was started for ends (`arena-tui demo`)
            took = duration_text(state.elapsed_ms())
            self.notify(self.launch.then, title=f"run {message.status} in {took} (wall clock)", timeout=90)

    def _watch_campaigns(self) -> None:
        """Say when a campaign (run in this or another process) has ended, unless its screen is on top."""
        store = self.store
        if store is None or self._shutdown_task is not None:
            return

        async def look() -> None:
            for cid, said, severity in await self.campaigns.ended(store):
                if not watching(self.screen, campaign_id=cid):
                    tell(self, f"campaign {cid} ended", said, severity)

        self.run_worker(look(), group="campaign-watch", exclusive=True, exit_on_error=False)

    # --- coalescing pump -----------------------------------------------------------------
    def pump(self) -> None:
        events = self._sub.drain()
        if self._gate is not None:
            self._check_store_failure()
            events, dropped = self._gate.release(events)
            for ev in dropped:
                if ev.run_id in self.live:
                    self.live[ev.run_id].log_local(f"turn {ev.turn_index} not recorded: the database cannot be written")
        if not events:
            return
        changed: set[str] = set()
        kinds: set[str] = set()
        for ev in events:
            state = self.live.get(ev.run_id)
            if state is None:
                continue  # a run started elsewhere on this bus (e.g. a test) that nobody watches
            if state.apply(ev):
                changed.add(ev.run_id)
                kinds.add(ev.kind)
        if changed:
            self.screen.post_message(LiveUpdate(frozenset(changed), frozenset(kinds)))

    def _check_store_failure(self) -> None:
        """The file refused a write: say so once and stop the runs (nothing more is recorded)."""
        failure = self.store.write_failure if self.store is not None else None
        if failure is None or self._gate is None or self._gate.failed:
            return
        self._gate.failed = True
        self.store_error = str(failure)
        self.notify(f"{failure}; runs stopped", severity="error", timeout=30)
        self.run_worker(self.stop_runs(), exclusive=False)

    # --- navigation ----------------------------------------------------------------------
    def open_run(self, run_id: str) -> None:
        from .screens.run import RunScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if run_id in self.live:
            self.push_screen(RunScreen(self.live[run_id], live=self.running(run_id)))
        else:
            self.open_replay(run_id)

    def open_replay(self, run_id: str, *, stepping: bool = False) -> None:
        from .screens.replay import ReplayScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if self.store is None:
            self.notify(f"cannot replay: {self.store_error}", severity="error")
            return
        self.push_screen(ReplayScreen(run_id, stepping=stepping))

    def action_leaderboard(self, benchmark: str | None = None) -> None:
        from .screens.leaderboard import LeaderboardScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.screen, LeaderboardScreen):
            self.push_screen(LeaderboardScreen(benchmark=benchmark))

    def action_campaigns(self) -> None:
        from .screens.campaigns import CampaignsScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.screen, CampaignsScreen):
            self.push_screen(CampaignsScreen())

    def action_help(self) -> None:
        from .screens.help import HelpScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The palette's Screenshot goes where every file the user asks for goes (`exports_dir`:
        ARENA_TUI_EXPORTS, else Documents/arena-tui), not Textual's ~/Downloads, which a fresh
        machine lacks; the notice names the file, or in one line why it could not be written."""
        folder = Path(path) if path else exports_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            written = self.save_screenshot(filename, str(folder), time_format)
        except OSError as e:
            self.notify(f"screenshot not saved: {e.filename or folder}: {e.strerror or e}", severity="error")
            return None
        self.notify(f"screenshot saved: {written}")
        return written

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help: keys", "List every key binding", self.action_help)
        yield SystemCommand("Leaderboard", "Compare every stored run: pass rates, latency, consistency",
                            self.action_leaderboard)
        yield SystemCommand("Campaigns", "Recorded campaigns and their matrix of runs (status, turns, pass rate)",
                            self.action_campaigns)
        yield SystemCommand("Stop all runs", "Stop running runs (they are kept as interrupted)",
                            lambda: self.run_worker(self.stop_runs(), exclusive=False))
        if isinstance(screen, ArenaScreen):
            yield from screen.palette_commands()

    async def load_benchmark(self, run_id: str) -> Any | None:
        """What a stored run ran: the benchmark snapshot stored with it, else the benchmark by name
        (`judge.locate.benchmark_of_run`); None (columns just stay blank) if neither."""
        try:
            from .judge.locate import benchmark_of_run  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

            return await benchmark_of_run(self.store, run_id, self.data_dir)
        except Exception:
            return None


QUIT_DIALOG = "quit-dialog"


def quit_question(live: list[RunState]) -> str:
    """What quitting now would leave: how many runs, which, and that they can be resumed."""
    n = len(live)
    which = "\n".join(f"  {st.run_id}  {st.benchmark} · {st.started.model if st.started else '?'} · "
                      f"{st.turns_done}/{st.turns_total} turns" for st in live[:5])  # fmt: skip
    more = f"\n  … and {n - 5} more" if n > 5 else ""
    return (f"{n} run{'s are' if n != 1 else ' is'} still running:\n{which}{more}\n\nQuit now and leave "
            f"{'them' if n != 1 else 'it'} interrupted? (`arena-tui resume RUN_ID` continues a run later; "
            "the command for each is printed when the monitor closes.)")


def _judge_label(backend: Any) -> str:
    name = str(getattr(backend, "name", None) or type(backend).__name__)
    return f"{name} (offline)" if getattr(backend, "heuristic", False) else name


if TYPE_CHECKING:
    def _screens_view(app: ArenaApp) -> Arena:
        """A type checker's proof that the app is what its screens take it for."""
        return app
