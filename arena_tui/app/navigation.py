"""Navigation: the screens the app opens (a run live or stored, its replay, the leaderboard, the
campaigns, help), the app's palette entries beside the screen's own, and where the palette's
screenshot goes. A screen's module loads when it is first opened (the monitor starts fast)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.screen import Screen

from arena_tui.spine.paths import exports_dir

from ..screens.base import ArenaScreen


class Navigation(App):
    """A part of `ArenaApp` (before `App` in its bases); it reads the app's `live`, `running`,
    `store`, `store_error` and `stop_runs`."""

    def open_run(self, run_id: str) -> None:
        from ..screens.run import RunScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if run_id in self.live:
            self.push_screen(RunScreen(self.live[run_id], live=self.running(run_id)))
        else:
            self.open_replay(run_id)

    def open_replay(self, run_id: str, *, stepping: bool = False) -> None:
        from ..screens.replay import ReplayScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if self.store is None:
            self.notify(f"cannot replay: {self.store_error}", severity="error")
            return
        self.push_screen(ReplayScreen(run_id, stepping=stepping))

    def action_leaderboard(self, benchmark: str | None = None) -> None:
        from ..screens.leaderboard import LeaderboardScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.screen, LeaderboardScreen):
            self.push_screen(LeaderboardScreen(benchmark=benchmark))

    def action_campaigns(self) -> None:
        from ..screens.campaigns import CampaignsScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if not isinstance(self.screen, CampaignsScreen):
            self.push_screen(CampaignsScreen())

    def action_help(self) -> None:
        from ..screens.help import HelpScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

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
