"""The app as its screens see it: `Arena`, the typed surface `arena_tui.app.ArenaApp` offers them.

Screens sit below the app in the layers and never import it; they reach it through this Protocol
(`arena_tui.screens.base`: `self.arena.store`, `self.arena.open_run(run_id)`), so what a screen
may use of the app is written down in one place and checked by a type checker, not found by
attribute at run time. Textual's own app (`push_screen`, `notify`, `run_worker`) stays `self.app`.
What the app tells the screens comes down as typed messages (`arena_tui.messages`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from arena_tui.spine.bus import EventBus
    from arena_tui.spine.settings import RunSettings

    from arena_tui.spine.benchmark import Benchmark

    from .judge.backends import JudgeBackend
    from .launcher import Judge, Launcher
    from .playback import Player
    from .run_view import RunState
    from .store import Store


@runtime_checkable
class Arena(Protocol):
    """What screens and dialogs may use of the app."""

    @property
    def store(self) -> Store | None:
        """The open database; None when there is none (`store_error` says why)."""
        ...

    @property
    def store_error(self) -> str | None: ...

    @property
    def data_dir(self) -> Path | None:
        """The benchmark data folder the user gave (`--data`), if any."""
        ...

    @property
    def launcher(self) -> Launcher:
        """How runs start (`NoLauncher` when the monitor has no engine wired in)."""
        ...

    @property
    def bus(self) -> EventBus:
        """The app's event bus: what is published on it is recorded and shown."""
        ...

    @property
    def live(self) -> dict[str, RunState]:
        """The runs this app started (running or ended), by id."""
        ...

    @property
    def judges(self) -> Mapping[str, object]:
        """The runs whose judge this app runs, by id."""
        ...

    @property
    def player(self) -> Player: ...

    def running(self, run_id: str) -> bool:
        """Whether this app is running that run now."""
        ...

    def start_run(self, benchmark: str | Benchmark, settings: RunSettings, *, judge: Judge = "auto") -> str | None:
        """Start a run; its id, or None (with a notice) when it cannot start."""
        ...

    async def stop_runs(self, run_ids: Iterable[str] | None = None) -> None:
        """Stop these runs (all when None); they are kept as interrupted."""
        ...

    def open_run(self, run_id: str) -> None:
        """Show a run: live when this app runs it, else as stored."""
        ...

    def open_replay(self, run_id: str, *, stepping: bool = False) -> None: ...

    def judge_for(self, state: RunState) -> tuple[JudgeBackend, str]:
        """(backend, label) to judge a turn of this run again."""
        ...

    def pump(self) -> None:
        """Fold what the bus has delivered into the live runs' states now, and tell the screen."""
        ...

    async def load_benchmark(self, run_id: str) -> Benchmark | None:
        """What a stored run ran (a `Benchmark`: its stored snapshot, else by name; None when neither):
        its turn specs (`specs_from_benchmark`) and the call alignment behind a failure's causes."""
        ...
