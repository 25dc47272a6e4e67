"""A stored run: opened at its finished state, or stepped through turn by turn on request.

Rendered by the live run screen's widgets. Opening a run shows what it ended as; stepping
(`t`, or "Replay step by step" in the palette) rebuilds the state up to each turn's end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding

from arena_tui.spine.events import RunEvent, event_kinds
from ..messages import TurnRejudged
from ..run_view import RunState, specs_from_benchmark
from ..widgets.fit import Forms
from .run import RunScreen

STEP_ACTIONS = ("step", "jump")


class ReplayScreen(RunScreen):
    HELP_WHERE, HELP_ORDER = "replay", 3
    BINDINGS = RunScreen.BINDINGS + [
        # short words in the footer (it fits 80 columns), the tooltip in ? help
        Binding("t", "toggle_stepping", "Step", tooltip="Step through the run turn by turn (again: the finished run)"),
        # priority: the focused turn table would otherwise take arrows, home and end
        Binding("n,right", "step(1)", "Next", tooltip="Next turn", priority=True),
        Binding("b,left", "step(-1)", "Prev", tooltip="Previous turn", priority=True),
        Binding("home", "jump(0)", "First", show=False, priority=True),
        Binding("end", "jump(-1)", "End", show=False, priority=True),
    ]

    def __init__(self, run_id: str, *, stepping: bool = False) -> None:
        super().__init__(RunState(run_id), live=False)
        self.stepping = stepping
        self.follow = stepping
        self.events: list[RunEvent] = []
        self.stops: list[int] = []  # event counts after each turn_ended (and the very end)
        self.pos = 0
        self.specs: dict = {}
        self.benchmark: Any | None = None  # what the run ran (None: not found): its specs, its causes' call alignment

    @property
    def mode(self) -> str:
        return "replay" if self.stepping else "stored"

    def on_mount(self) -> None:
        super().on_mount()
        self.load()

    @work(exclusive=True, group="replay-load")
    async def load(self) -> None:
        """Read the run's events and specs; drawn through `call_later`, on this screen's own loop
        (Textual drops it if the screen is closing by then)."""
        kinds = [k for k in event_kinds() if k != "audio"]
        try:
            store = self.arena.store
            if store is None:
                raise RuntimeError(f"no database: {self.arena.store_error}")
            rows = await store.events(self.state.run_id, kinds=kinds)
        except Exception as e:
            self.call_later(self._unreadable, f"cannot read run {self.state.run_id}: {e}")
            return
        events = [ev for _, ev in rows]
        if not events:
            self.call_later(self._unreadable, f"run {self.state.run_id} has no stored events")
            return
        first = next((ev for ev in events if ev.kind == "run_started"), None)
        benchmark = await self.arena.load_benchmark(self.state.run_id) if first is not None else None
        self.call_later(self._loaded, events, benchmark)

    @property
    def judged_elsewhere_shown(self) -> bool:
        return bool(self.stops) and not self.stepping  # the finished run, once read: a step shows what was then

    def on_turn_rejudged(self, message: TurnRejudged) -> None:
        """The new revisions join the events a step rebuilds the state from (the run screen's
        handler, which Textual calls next, redraws)."""
        if message.run_id == self.state.run_id:
            self.events.extend(message.judgements)

    def _unreadable(self, why: str) -> None:
        self.state.log_local(why)
        self.paint(force=True)

    def _loaded(self, events: list, benchmark: Any | None) -> None:
        stops = [i + 1 for i, ev in enumerate(events) if ev.kind == "turn_ended"]
        if not stops or stops[-1] != len(events):
            stops.append(len(events))
        # Published all at once: `stops` is what says "loaded", and a key pressed while the specs
        # were loading must not be undone by a late show().
        self.events, self.stops, self.benchmark = events, stops, benchmark
        self.specs = specs_from_benchmark(benchmark) if benchmark is not None else {}
        self.show(0 if self.stepping else len(stops) - 1)

    def show(self, pos: int) -> None:
        """Rebuild the state from the first event up to the pos-th stop (cheap: events are few)."""
        if not self.stops:
            return
        self.pos = max(0, min(pos, len(self.stops) - 1))
        state = RunState(self.state.run_id, self.specs)
        state.benchmark_data = self.benchmark
        state.apply_all(self.events[: self.stops[self.pos]])
        if self.pos == len(self.stops) - 1:
            state.apply_all(self.events[self.stops[self.pos]:])
        self.state = state
        self.paint(force=True)

    def filter_parts(self) -> list[Forms]:
        if not self.stepping:
            return [("stored run (t: step through it turn by turn)", "stored (t: step)")] + super().filter_parts()[1:]
        step = f"REPLAY step {self.pos + 1}/{max(len(self.stops), 1)}"
        return [(f"{step} (n/→ next, b/← back, end: all, t: leave)", step)] + super().filter_parts()[1:]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in STEP_ACTIONS and (not self.stepping or self.typing):
            return False  # (typing in the find line: its letters and arrows are the text's)
        return super().check_action(action, parameters)

    def action_toggle_stepping(self) -> None:
        """Step through from the first turn, or back to the finished run."""
        self.stepping = not self.stepping
        self.follow = self.stepping
        self.refresh_bindings()
        self.show(0 if self.stepping else len(self.stops) - 1)
        if not self.stops:
            self.paint(force=True)

    def action_step(self, delta: int) -> None:
        self.show(self.pos + delta)

    def action_jump(self, where: int) -> None:
        self.show(where if where >= 0 else len(self.stops) - 1)

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield from super().palette_commands()
        if self.stepping:
            yield SystemCommand("Replay: next turn", "Step forward one turn", lambda: self.action_step(1))
            yield SystemCommand("Replay: previous turn", "Step back one turn", lambda: self.action_step(-1))
            yield SystemCommand("Replay: leave stepping", "Show the finished run", self.action_toggle_stepping)
        else:
            yield SystemCommand("Replay step by step", "Step through this run turn by turn",
                                self.action_toggle_stepping)
