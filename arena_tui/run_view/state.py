"""`RunState`: one run's event stream folded into what its screens show, live or replayed alike.
Live, it gets a clock (wall seconds): elapsed ticks on it, a wait counts down on it, a meter
without new levels falls.

It holds the run's own course (started, sessions, errors, ended) and one part per job, each
folding the events of its job (`fold`) and reading what it needs of the run through a Protocol
its own module declares: the turn table (`table.TurnTable`), the transcript (`transcript`), the
meters (`levels`), the wait under way (`waits`), the judgements and the figures read off them
(`judgements`), the event log (`run_log`) and the costs (`costs`). `apply` hands each event to
them in an order written once there. What widgets read of the parts is on the state itself:
`turns`, `transcript`, `log` and `meters` are the parts' own collections."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from arena_tui.spine.benchmark import Benchmark

from arena_tui.spine.events import (
    ErrorEvent, Judgement, Reconnected, RunEnded, RunEvent, RunResumed, RunStarted, SessionOpened, SessionRotated, Waiting,
)
from arena_tui.spine.faults import TurnFault
from arena_tui.spine.source import source_label, variant_labels, variants_text
from arena_tui.spine.times import wall_ms

from ..timing import latency_caveat, speed_note
from ..verdicts import TURN_TAKING, Tally, counts, ordered
from .costs import RunCosts
from .judgements import Judgements
from .levels import Levels
from .rows import Meter, TurnRow, TurnSpec
from .run_log import RunLog
from .table import TurnTable
from .transcript import Transcript
from .waits import Waits


class RunState:
    """Everything the run screen shows about one run, built only from events."""

    def __init__(self, run_id: str, specs: dict[int, TurnSpec] | None = None,
                 clock: Callable[[], float] | None = None, planned: tuple[str, str] | None = None) -> None:
        """`clock` (seconds, monotonic) only for a run followed live: elapsed then ticks on the wall
        clock, the watchdog counts down and silent meters fall; a replay has none. `planned`: the
        (benchmark, model) a run being started was asked for, said until its `run_started` comes."""
        self.run_id = run_id
        self.clock = clock
        self.planned = planned
        self.specs = specs or {}
        # what the run ran (`arena_tui.spine.benchmark.Benchmark`, set with `specs` where it is loaded):
        # the call alignment behind a failure's causes; None: no call causes (nothing to align to)
        self.benchmark_data: Benchmark | None = None
        # the run's own course
        self.started: RunStarted | None = None
        self.ended: RunEnded | None = None
        self.resumed = False  # a `run_resumed` came: it went on after an interruption
        self.wall_started: float | None = None
        self.wall_ended: float | None = None
        self.started_wall_time: datetime | None = None  # the first run_started's (a resumed run keeps its origin)
        self.session = 1
        self.rotations = 0
        self.errors = 0
        self.start_error: str | None = None  # the run never started (engine missing, bad benchmark...)
        self.last_ms = 0.0
        self.version = 0  # bumped on every change, so widgets can skip identical repaints
        # bumped on every change but a level: levels arrive 40 times/s and only move the meters, so
        # the table, transcript, log and header are rebuilt only when this moves
        self.content_version = 0
        # its parts, one per job (the module docstring)
        self.table = TurnTable(self)
        self.words = Transcript(self.table)
        self.journal = RunLog(self)
        self.levels = Levels(self, self.journal)
        self.waits = Waits(self)
        self.judgements = Judgements()
        self.costs = RunCosts()  # its usage and the judge's tokens, priced when shown (`costs.py`)
        # what widgets read of them
        self.turns: dict[int, TurnRow] = self.table.rows
        self.transcript = self.words.lines
        self.log = self.journal.lines
        self.meters = self.levels.meters
        self.untrusted = self.table.untrusted  # turns whose latencies are untrusted (`timing`: input sent late)

    def log_local(self, text: str, kind: str = "error") -> None:
        """A line that is not an event (e.g. why a run could not start)."""
        self.journal.add(self.last_ms, kind, text)
        if kind == "error" and self.started is None:
            self.start_error = text
        self.version += 1
        self.content_version += 1

    # --- derived -------------------------------------------------------------------------
    @property
    def status(self) -> str:
        if self.ended is not None:
            return self.ended.status
        if self.start_error is not None:
            return "failed"
        return "running" if self.started is not None else "starting"

    @property
    def benchmark(self) -> str:
        if self.started:
            return self.started.benchmark
        return self.planned[0] if self.planned else "?"

    @property
    def model_name(self) -> str:
        """The model alias: the run's, or while it starts the one it was asked for."""
        if self.started:
            return self.started.model
        return self.planned[1] if self.planned else "?"

    @property
    def model_label(self) -> str:
        if not self.started:
            return f"{self.model_name} (starting)" if self.planned else "?"
        label = f"{self.started.model} ({self.started.provider})"
        label = f"{label} [{self.source.upper()}]" if self.source else label
        return label + variants_text(self.variants)

    @property
    def variants(self) -> tuple[str, ...]:
        """How the run's input differed from the default (`spine.source.variant_labels`; faults apart:
        the run screen says them on their own line); () before it started."""
        return variant_labels(self.started.recorded, faults=False) if self.started else ()

    @property
    def source(self) -> str | None:
        """`simulator`, `protocol fake` or None (the real service): `spine.source.source_label`."""
        return source_label(self.started.simulator, self.started.recorded) if self.started else None

    @property
    def speed(self) -> float | None:
        """How much faster than the wall clock the run timeline ran (None: not recorded)."""
        return self.started.timeline_speed if self.started else 1.0

    @property
    def latency_note(self) -> str | None:
        """Why this run's latencies are not comparable (`arena_tui.timing`), None when they are."""
        return speed_note(self.speed) if self.started else None

    @property
    def latency_caveat(self) -> str | None:
        """`latency at 20× — not comparable` over the run's latencies, None when they are comparable."""
        return latency_caveat(self.speed) if self.started else None

    @property
    def turns_total(self) -> int:
        return len(self.started.turn_indices) if self.started else len(self.turns)

    @property
    def turns_done(self) -> int:
        """Turns that ran to their end (`verdicts.counts`): one stopped or lost is not done."""
        return sum(1 for r in self.turns.values() if r.result is not None and r.index >= 0 and counts(r.status))

    @property
    def dimensions(self) -> list[str]:
        """Every dimension a turn is due or was scored on, in `verdicts.DIMENSIONS` order: known from
        the start (turn_taking too, for a run it is judged on), so columns do not come and go."""
        seen: dict[str, None] = {}
        for spec in self.specs.values():
            for d in spec.dimensions:
                seen.setdefault(d, None)
        if self.specs and self.started is not None and self.started.recorded.judges_turn_taking:
            seen.setdefault(TURN_TAKING, None)
        for row in self.turns.values():
            for d in row.scores:
                seen.setdefault(d, None)
        return ordered(seen)

    @property
    def current_turn(self) -> int | None:
        return self.table.current

    @property
    def faults(self) -> dict[int, TurnFault]:
        """turn -> the simulator fault injected on it (`spine.faults`), from the run's config."""
        return self.started.recorded.turn_faults if self.started is not None else {}

    def wall_now(self) -> float | None:
        return self.clock() if self.clock is not None else None

    def elapsed_ms(self) -> float:
        """Wall-clock ms since the run started: the live clock; for an ended run the wall clock its
        start and end carry (what the runs list says, `runs.started_at`/`ended_at`); else as far as
        its events go (`last_ms` is audio time, run `speed` times faster than the wall); a resumed
        run's is its timeline's, which stood still while it was interrupted (`RunRow.active_s`)."""
        if self.clock is None or self.wall_started is None:
            ended_at = self.ended.wall_time if self.ended is not None and not self.resumed else None
            if ended_at is not None and self.started_wall_time is not None:
                return max(0.0, (ended_at - self.started_wall_time).total_seconds() * 1000.0)
            return wall_ms(self.last_ms, self.speed)
        end = self.wall_ended if self.wall_ended is not None else self.clock()
        return (end - self.wall_started) * 1000.0

    def wait_left_ms(self) -> float | None:
        """Wall-clock ms until the engine's watchdog gives up on what it waits on; None if not waiting."""
        return self.waits.left_ms()

    def wait_line(self) -> str | None:
        return self.waits.line()

    @property
    def waiting(self) -> Waiting | None:
        """What the engine waits on, until something comes."""
        return self.waits.waiting

    def shown_meter(self, who: str) -> Meter:
        return self.levels.shown(who)

    @property
    def overlapping(self) -> bool:
        return self.levels.overlapping

    # --- what the judgements make of it (`judgements.Judgements`) ------------------------------
    @property
    def judges(self) -> set[str]:
        """The run's judge's name, as the header says it (empty: none judged it)."""
        return self.judgements.judges

    @property
    def any_heuristic(self) -> bool:
        return self.judgements.any_heuristic

    @property
    def verdict_version(self) -> int:
        """Bumped when what a turn's verdict or causes read changes (results, revisions, rotations)."""
        return self.judgements.version

    def tally(self) -> Tally:
        """The run's figures by the one rule (`arena_tui.verdicts.tally`): its turns' statuses, and
        once it has ended the turns it set out to run (one never played is then not played)."""
        expected = self.started.turn_indices if self.started is not None and self.ended is not None else None
        return self.judgements.tally(self.turns, expected)

    def pass_rates(self) -> dict[str, tuple[int, int]]:
        """dimension -> (passed, scored)."""
        return self.tally().dimensions

    def causes(self) -> dict[int, tuple[str, ...]]:
        """turn -> why it failed (or why it counts apart), by the one rule (`judge.causes.run_causes`)."""
        return self.judgements.causes(self.turns, self.benchmark_data, self.started is not None and self.started.recorded.rehydrated)

    def row(self, index: int) -> TurnRow:
        return self.table.row(index)

    # --- folding -------------------------------------------------------------------------
    def apply_all(self, events: list[RunEvent]) -> bool:
        return any([self.apply(ev) for ev in events])  # every one folded in (a list, not a short-circuit)

    def apply(self, ev: RunEvent) -> bool:
        """Fold one event in; False when it is not for this run (nothing changes)."""
        if ev.run_id != self.run_id or ev.kind == "audio":
            return False
        self.version += 1
        self.last_ms = max(self.last_ms, ev.t_ms)
        self.waits.fold(ev)
        if ev.kind == "level":  # 40 times a second, and only the meters read it (and a wait the bot's audio ends)
            self.levels.fold(ev)
            return True
        self.content_version += 1
        self.costs.see(ev)
        if isinstance(ev, Judgement) and ev.turn_index in self.turns and ev in self.turns[ev.turn_index].judgements:
            return True  # the same revision twice (the bus's, and the store's read back): once
        before = self.judgements.version
        self._follow(ev)  # first: the parts read what the run is (its start, its faults, its speed)
        self.words.fold(ev)  # before the table: a turn's start reads whether the greeting was still running
        self.table.fold(ev)
        self.levels.fold(ev)  # before the log: a turn's end reads whether an overlap was said
        self.judgements.fold(ev)
        self.journal.fold(ev)
        if self.judgements.version != before:  # a verdict or a turn's status came: the run's judge again
            self.judgements.elect(self.turns)
        return True

    def _follow(self, ev: RunEvent) -> None:
        """The run's own course: its start, sessions, errors and end."""
        match ev:
            case RunStarted():
                self.started = ev
                self.wall_started = self.wall_now()
                if self.started_wall_time is None:
                    self.started_wall_time = ev.wall_time
            case RunResumed():
                self.resumed = True
            case SessionOpened() | Reconnected():
                self.session = ev.session
            case SessionRotated():
                self.rotations += 1
                self.session = ev.to_session
            case ErrorEvent():
                self.errors += 1
            case RunEnded():
                self.ended = ev
                self.wall_ended = self.wall_now()
