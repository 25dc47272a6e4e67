"""Navigation: the screens the app opens (a run live or stored, its replay, the leaderboard, the
campaigns, help), the app's palette entries beside the screen's own, and where the palette's
screenshot goes. A screen's module loads when it is first opened (the monitor starts fast)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen

from arena_tui.spine.paths import exports_dir

from ..run_view import RunState
from ..screens.base import ArenaScreen

if TYPE_CHECKING:
    from ..store import Store


class ScreenHost(Protocol):
    """What navigation calls on the app: the screen on top, a screen pushed, a notice, a screenshot
    saved, every run stopped."""

    @property
    def screen(self) -> Screen[Any]: ...

    def push_screen(self, screen: Screen[Any]) -> Any: ...

    def notify(self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...) -> None: ...

    def save_screenshot(self, filename: str | None = ..., path: str | None = ..., time_format: str | None = ...) -> str: ...

    def stop_all_runs(self) -> None: ...


class RunsView(Protocol):
    """The runs the app started (`runs.RunSupervisor`): a live one is opened live."""

    live: dict[str, RunState]

    def running(self, run_id: str) -> bool: ...


class StoreView(Protocol):
    """The app's database (`store_life.StoreLife`): a replay reads it."""

    store: Store | None
    error: str | None


class Navigator:
    """Which screen opens for what the user asked, pushed on `host`."""

    def __init__(self, host: ScreenHost, runs: RunsView, store: StoreView) -> None:
        self.host, self.runs, self.store = host, runs, store

    def open_run(self, run_id: str) -> None:
        from ..screens.run import RunScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if run_id in self.runs.live:
            self.host.push_screen(RunScreen(self.runs.live[run_id], live=self.runs.running(run_id)))
        else:
            self.open_replay(run_id)

    def open_replay(self, run_id: str, *, stepping: bool = False) -> None:
        from ..screens.replay import ReplayScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if self.store.store is None:
            self.host.notify(f"cannot replay: {self.store.error}", severity="error")
            return
        self.host.push_screen(ReplayScreen(run_id, stepping=stepping))

    def leaderboard(self, benchmark: str | None = None) -> None:
        from ..screens.leaderboard import LeaderboardScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.host.screen, LeaderboardScreen):
            self.host.push_screen(LeaderboardScreen(benchmark=benchmark))

    def campaigns(self) -> None:
        from ..screens.campaigns import CampaignsScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.host.screen, CampaignsScreen):
            self.host.push_screen(CampaignsScreen())

    def help(self) -> None:
        from ..screens.help import HelpScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.host.screen, HelpScreen):
            self.host.push_screen(HelpScreen())

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """The palette's Screenshot goes where every file the user asks for goes (`exports_dir`:
        ARENA_TUI_EXPORTS, else Documents/arena-tui), not Textual's ~/Downloads, which a fresh
        machine lacks; the notice names the file, or in one line why it could not be written."""
        folder = Path(path) if path else exports_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            written = self.host.save_screenshot(filename, str(folder), time_format)
        except OSError as e:
            self.host.notify(f"screenshot not saved: {e.filename or folder}: {e.strerror or e}", severity="error")
            return None
        self.host.notify(f"screenshot saved: {written}")
        return written

    def commands(self, screen: Screen[Any]) -> Iterator[SystemCommand]:
        """The app's palette entries, then the screen's own (`ArenaScreen.palette_commands`)."""
        yield SystemCommand("Help: keys", "List every key binding", self.help)
        yield SystemCommand("Leaderboard", "Compare every stored run: pass rates, latency, consistency",
                            self.leaderboard)
        yield SystemCommand("Campaigns", "Recorded campaigns and their matrix of runs (status, turns, pass rate)",
                            self.campaigns)
        yield SystemCommand("Stop all runs", "Stop running runs (they are kept as interrupted)", self.host.stop_all_runs)
        if isinstance(screen, ArenaScreen):
            yield from screen.palette_commands()
