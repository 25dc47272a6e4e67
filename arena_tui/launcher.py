"""What the UI needs from the run engine, as a contract the UI owns (the CLI supplies it).

The app, screens and widgets never import the runners or Pipecat: `arena_tui.orchestration.launch`
implements this Protocol and `arena-tui` hands it to `ArenaApp`. Without one the app still
browses, replays and compares recorded runs; it only cannot start new ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings

if TYPE_CHECKING:
    from arena_tui.judge.backends import JudgeBackend


#: what a model is said to be when nothing is missing (`orchestration.models.Model.status`): it
#: answers (a fake, a local server that answered), or a remote service's key is there
READY, KEY_SET = "ready", "key set"


@dataclass(frozen=True)
class ModelChoice:
    alias: str
    provider: str
    simulated: bool
    needs: tuple[str, ...]  # what is missing for a run against the real service (keys, packages)
    needs_fake: tuple[str, ...]  # what is missing for a run against its local fake
    #: its protocol lets the client close the user's turn: server VAD may be turned off (`--disable-vad`)
    manual_commit: bool = False
    #: the reasoning effort it takes (`--effort`), as said: `low|medium|high`, `a budget of …`; "" none
    effort: str = ""
    #: a spelling the user types (`alias` is its pattern, a cascade's), this an example of it; "" for an alias
    typed: str = ""
    #: what it is said to be against the real service / its local fake (`ready` only for what
    #: answers, `key set`, `needs …`: the engine's one rule, as `arena-tui models` says it)
    status: str = READY
    status_fake: str = READY

    def label(self, fake: bool = False) -> str:
        if self.typed:
            return f"{self.alias}  (type it below; checked at Start)"
        what = "simulator" if self.simulated else self.provider
        return f"{self.alias}  ({what}; {self.status_fake if fake else self.status})"

    def unready(self, fake: bool = False) -> str:
        """Why it would not answer though nothing is missing (a local server that did not answer
        the probe), "" otherwise."""
        status = self.status_fake if fake else self.status
        missing = self.needs_fake if fake else self.needs
        return "" if missing or status in (READY, KEY_SET) else status


#: who judges a run as it goes: a `--judge` kind (`spine.judges`), or what builds its backend
Judge = str | Callable[[], "JudgeBackend"]


@dataclass(frozen=True)
class RunRequest:
    """A run to start, as the new-run dialog gives it and `arena-tui run|demo` hand it to the
    monitor: the benchmark (a name, loaded with the run's speaker, or loaded already), its
    settings (built and validated: `spine.settings.build_settings`), its judge, and what the
    monitor says when it ends (`then`: the demo's next steps; "" nothing)."""

    benchmark: str | Benchmark
    settings: RunSettings
    judge: Judge = "auto"
    then: str = ""


class Launcher(Protocol):
    """Starts runs for the app. The slow calls (`models`, `preflight`, `load_engine`) load the
    runner modules on first use: callers run them in a thread, off the UI loop."""

    def models(self) -> list[ModelChoice]:
        """Every model alias with what a run with it still needs (key names only, never values)."""
        ...

    def preflight(self, benchmark: str, settings: RunSettings, data_dir: Path | None) -> list[str]:
        """Every problem that would make this run fail at its start, one line each."""
        ...

    def load_engine(self) -> None:
        """Import the engine (Pipecat: about a second of CPU)."""
        ...

    def start_run(self, benchmark: Benchmark, settings: RunSettings, bus: EventBus, run_id: str) -> Awaitable[Any]:
        """The run of a loaded benchmark with these settings, publishing on `bus`."""
        ...

    async def close(self) -> None:
        """Release what runs needed (worker processes); the monitor calls it as it closes."""
        ...


class NoLauncher:
    """The app without the engine wired in: recorded runs only."""

    REASON = "runs start from `arena-tui` (this monitor has no run engine wired in)"

    def models(self) -> list[ModelChoice]:
        return []

    def preflight(self, benchmark: str, settings: RunSettings, data_dir: Path | None) -> list[str]:
        return [self.REASON]

    def load_engine(self) -> None:
        raise RuntimeError(self.REASON)

    def start_run(self, benchmark: Benchmark, settings: RunSettings, bus: EventBus, run_id: str) -> Awaitable[Any]:
        raise RuntimeError(self.REASON)

    async def close(self) -> None:
        return None
