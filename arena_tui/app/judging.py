"""Judge supervision: the judge each run of the app gets (on the bus before the run publishes),
the judge a re-judge gets (`judge_for`), and every judge finished and closed at shutdown. A judge
that cannot start is a notice, never an error: the run goes on unjudged."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from textual.notifications import SeverityLevel

from arena_tui.spine.bus import EventBus

from ..launcher import Judge
from ..run_view import RunState

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark

    from ..judge.backends import JudgeBackend
    from ..judge.worker import JudgeWorker


class Notices(Protocol):
    """Where a judge that cannot start is said (the app)."""

    def notify(self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...) -> None: ...


class JudgeSupervisor:
    """The app's judges: `judges` (run id → (worker, its task, backend)), each on `bus`."""

    def __init__(self, bus: EventBus, notices: Notices) -> None:
        self.bus = bus
        self.notices = notices
        self.judges: dict[str, tuple[JudgeWorker, asyncio.Task[None], JudgeBackend]] = {}

    def start(self, run_id: str, benchmark: Benchmark, judge: Judge) -> None:
        """Attach a judge to the bus for this run (before the run publishes anything)."""
        if judge == "none":
            return
        try:
            from ..judge import JudgeWorker, make_backend  # deferred: the UI starts, and says why, even when the judge cannot load
        except ImportError as e:
            self.notices.notify(f"judge unavailable ({e}): turns will not be scored", severity="warning")
            return
        try:
            backend = judge() if callable(judge) else make_backend(judge)
            worker = JudgeWorker(benchmark, backend, self.bus, run_id)
        except Exception as e:
            self.notices.notify(f"judge could not start ({e}): turns will not be scored", severity="warning", timeout=10)
            return
        self.judges[run_id] = (worker, worker.start(), backend)

    def judge_for(self, state: RunState) -> tuple[JudgeBackend, str]:
        """(backend, label) to re-judge a run with: its own judge when it has one here, else the kind
        it was judged with, else auto (the configured LLM judge, else the offline heuristic).

        A recorded judge that cannot be rebuilt here (e.g. `reference:<model>` of an imported
        run, or an LLM judge without its key) falls back to auto; the label says so.
        """
        from ..judge import BACKENDS, make_backend  # deferred: the UI starts, and says why, even when the judge cannot load
        from ..judge.choice import pick_judge  # deferred: the UI starts, and says why, even when the judge cannot load

        if state.run_id in self.judges:
            backend = self.judges[state.run_id][2]
            return backend, judge_label(backend)
        names = sorted(state.judges)
        if state.any_heuristic:
            backend = make_backend("heuristic")
            return backend, judge_label(backend)
        why = ""
        if names:
            recorded = pick_judge("recorded", names)  # the judge it was judged with
            if recorded.kind in BACKENDS and recorded.kind != "auto":
                try:
                    backend = make_backend(recorded.kind, recorded.model)
                    return backend, judge_label(backend)
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
        label = judge_label(backend)
        return backend, f"{label}, by auto: {why}" if why else label

    async def stop(self) -> None:
        """Every judge finished (at most 10 s each) and closed."""
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


def judge_label(backend: JudgeBackend) -> str:
    name = backend.name or type(backend).__name__
    return f"{name} (offline)" if backend.heuristic else name
