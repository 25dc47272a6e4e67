"""The app itself: `ArenaApp`, the monitor. It holds one collaborator per job, each a plain object
given what it needs and calling back only through the Protocol its own module declares: the
database (`StoreLife`: `StoreHost`), the runs (`RunSupervisor`: `RunHost`), the judges
(`JudgeSupervisor`), the screens opened (`Navigator`: `ScreenHost`). Its own job is its life from
mount to shutdown: the first screen and run, quitting (asking first while runs stream), the
coalescing pump that folds the bus into each run's `RunState` at `REFRESH_HZ`, a run's end said
(`on_run_finished`), and a campaign's end said while another screen is on top (`screens.notices`).
What the screens may use of it is `arena_tui.surface.Arena`: its members here hand on to the
collaborator that owns each."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from asyncio import AbstractEventLoop
from typing import TYPE_CHECKING, TypedDict, Unpack

from textual.app import App, AutopilotCallbackType, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker

from arena_tui.spine.bus import EventBus
from arena_tui.spine.heap import settle_heap
from arena_tui.spine.settings import RunSettings
from arena_tui.spine.times import duration_text

from ..launcher import Judge, Launcher, NoLauncher, RunRequest
from ..messages import LiveUpdate, RunFinished
from ..playback import Player
from ..run_view import RunState
from ..screens.notices import CAMPAIGN_POLL_S, CampaignWatch, run_notice, tell, watching
from .judging import JudgeSupervisor
from .navigation import Navigator
from .runs import RunSupervisor
from .store_life import StoreLife

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark

    from ..judge.backends import JudgeBackend
    from ..store import Store
    from ..surface import Arena

REFRESH_HZ = 30  # ≥ 15 meter refreshes/s (levels arrive at uneven 40/60 ms gaps); an idle tick costs nothing


def _trust_the_terminal_size() -> None:
    """Drop inherited COLUMNS/LINES when the real terminal can be asked for its size.

    Textual sizes the screen with `shutil.get_terminal_size()`, which prefers those variables; a stale
    pair (test runners and some shells export COLUMNS=80 LINES=24) would pin the app at that size and
    make it ignore every resize.
    """
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            os.get_terminal_size(stream.fileno())  # type: ignore[union-attr]  # a missing stream's AttributeError is caught below
        except (AttributeError, ValueError, OSError):
            continue
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
        return


class RunOptions(TypedDict, total=False):
    """How Textual's `App.run` is asked to run the app (its keywords, as it declares them)."""

    headless: bool
    inline: bool
    inline_no_clear: bool
    mouse: bool
    size: tuple[int, int] | None
    auto_pilot: AutopilotCallbackType | None
    loop: AbstractEventLoop | None


class ArenaApp(App[None]):
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
        self.store_life = StoreLife(self.db_path, self.bus, self, lambda run_id: run_id in self.live)
        self.judging = JudgeSupervisor(self.bus, self)
        self.runs = RunSupervisor(self, self.launcher, self.bus, self.data_dir, self.judging, self.store_life)
        self.navigator = Navigator(self, self.runs, self.store_life)
        self.player = Player()
        self._sub = self.bus.subscribe(accept=lambda e: e.kind != "audio")
        self._shutdown_task: asyncio.Future[None] | None = None
        self.left_interrupted: list[RunState] = []  # runs still streaming when the app shut down (stopped by it)
        self.campaigns = CampaignWatch()  # campaigns whose end is said while another screen is shown

    # --- the database (`store_life.StoreLife`) and what it calls back (`StoreHost`) ----------
    @property
    def store(self) -> Store | None:
        return self.store_life.store

    @property
    def store_error(self) -> str | None:
        return self.store_life.error

    def stop_all_runs(self) -> None:
        self.run_worker(self.stop_runs(), exclusive=False)

    def log_error(self, text: str) -> None:
        self.log.error(text)

    # --- the runs (`runs.RunSupervisor`) ----------------------------------------------------
    @property
    def live(self) -> dict[str, RunState]:
        return self.runs.live

    @property
    def run_workers(self) -> dict[str, Worker]:
        return self.runs.workers

    def running(self, run_id: str) -> bool:
        return self.runs.running(run_id)

    def start_run(self, benchmark: str | Benchmark, settings: RunSettings, *, judge: Judge = "auto") -> str | None:
        return self.runs.start(benchmark, settings, judge=judge)

    async def stop_runs(self, run_ids: Iterable[str] | None = None) -> None:
        await self.runs.stop(run_ids)

    def on_run_finished(self, message: RunFinished) -> None:
        """A run has ended, its last events committed: every screen is told (the one it was started
        for, with what to do next), and it is said unless its screen is on top or the app is closing."""
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

    # --- the judges (`judging.JudgeSupervisor`) ----------------------------------------------
    @property
    def judges(self) -> Mapping[str, object]:
        return self.judging.judges

    def judge_for(self, state: RunState) -> tuple[JudgeBackend, str]:
        return self.judging.judge_for(state)

    # --- screens opened (`navigation.Navigator`) ---------------------------------------------
    def open_run(self, run_id: str) -> None:
        self.navigator.open_run(run_id)

    def open_replay(self, run_id: str, *, stepping: bool = False) -> None:
        self.navigator.open_replay(run_id, stepping=stepping)

    def action_leaderboard(self, benchmark: str | None = None) -> None:
        self.navigator.leaderboard(benchmark)

    def action_campaigns(self) -> None:
        self.navigator.campaigns()

    def action_help(self) -> None:
        self.navigator.help()

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        return self.navigator.deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from self.navigator.commands(screen)

    # --- lifecycle -----------------------------------------------------------------------
    def run(self, **options: Unpack[RunOptions]) -> None:
        if not options.get("headless") and options.get("size") is None:
            _trust_the_terminal_size()
        return super().run(**options)

    async def on_mount(self) -> None:
        from ..screens.runs import RunsScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        self.store_life.route_logs()
        await self.store_life.open()
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

    async def on_unmount(self) -> None:
        await self.shutdown()  # also when the app exits other than by `q` (tests, ctrl+c)

    async def action_quit(self) -> None:
        """With runs still streaming, ask first (they would be left interrupted); then stop runs and
        save in a worker, and exit: the screen stays responsive meanwhile. `q` again in the
        question quits."""
        from ..screens.dialogs.confirm import QuitDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        live = self.runs.still_running()
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
        if self._shutdown_task is None and self.runs.still_running():
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
        self.left_interrupted = [self.live[r] for r in self.runs.still_running()]
        await self.stop_runs()
        try:
            await asyncio.wait_for(self.launcher.close(), 60)  # worker processes, once their runs have ended
        except Exception as e:
            self.log.error(f"launcher close: {e}")
        await self.judging.stop()
        await self.store_life.close()

    # --- coalescing pump -----------------------------------------------------------------
    def pump(self) -> None:
        events, dropped = self.store_life.release(self._sub.drain())
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

    async def load_benchmark(self, run_id: str) -> Benchmark | None:
        """What a stored run ran: the benchmark snapshot stored with it, else the benchmark by name
        (`judge.locate.benchmark_of_run`); None (columns just stay blank) if neither."""
        store = self.store
        if store is None:
            return None
        try:
            from ..judge.locate import benchmark_of_run  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

            return await benchmark_of_run(store, run_id, self.data_dir)
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


if TYPE_CHECKING:
    def _screens_view(app: ArenaApp) -> Arena:
        """A type checker's proof that the app is what its screens take it for."""
        return app
