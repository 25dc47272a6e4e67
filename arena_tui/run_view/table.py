"""A run's turn table as its events come: a row per turn (planned ones from `run_started`), each
row's attempts, calls, result and judgements, the turn under way, and which turns' latencies are
untrusted (`timing.UntrustedTurns`). `RunState` folds events into it; widgets read its rows."""

from __future__ import annotations

from typing import Protocol

from arena_tui.spine.events import (
    GREETING_TURN, ErrorEvent, Judgement, RunEnded, RunEvent, RunStarted, ToolAnswered, ToolCalled, TurnEnded, TurnStarted,
)
from arena_tui.spine.faults import TurnFault

from ..timing import UntrustedTurns
from ..verdicts import NOT_PLAYED
from .rows import TurnRow, TurnSpec


class Planned(Protocol):
    """What the table reads of its run: what the benchmark expects of each turn, and the faults the
    run injects (from its `run_started`), both given to a row when it is made."""

    specs: dict[int, TurnSpec]

    @property
    def faults(self) -> dict[int, TurnFault]: ...


class TurnTable:
    """The run's rows (`rows`, by turn index), the turn under way (`current`), the untrusted turns."""

    def __init__(self, run: Planned) -> None:
        self.run = run
        self.rows: dict[int, TurnRow] = {}
        self.current: int | None = None
        self.untrusted = UntrustedTurns()  # turns whose latencies are untrusted (`timing`: input sent late)

    def row(self, index: int) -> TurnRow:
        if index not in self.rows:
            self.rows[index] = TurnRow(index=index, spec=self.run.specs.get(index), fault=self.run.faults.get(index))
        return self.rows[index]

    def attempt(self, turn: int | None) -> int:
        """The turn's attempt under way (0 = the first)."""
        return max(self.rows[turn].attempts - 1, 0) if turn in self.rows else 0

    def greeting_running(self) -> bool:
        greeting = self.rows.get(GREETING_TURN)
        return greeting is not None and greeting.status == "running"

    def fold(self, ev: RunEvent) -> None:
        match ev:
            case RunStarted():
                for i in ev.turn_indices:
                    self.row(i)
                for i, fault in self.run.faults.items():  # rows made before the run said its faults
                    if i in self.rows:
                        self.rows[i].fault = fault
            case TurnStarted(turn_index=int(turn)):
                self._started(ev, turn)
            case ToolCalled(turn_index=int(turn)):
                self.row(turn).tool_calls.append(ev)
            case ToolAnswered(turn_index=int(turn)):
                self.row(turn).tool_results.append(ev)
            case ErrorEvent():
                self.untrusted.see(ev.kind, ev.turn_index, ev.where)
            case TurnEnded():
                res = ev.result
                row = self.row(res.turn_index)
                row.result, row.status, row.ended_ms = res, res.status, ev.t_ms
                self.untrusted.see(ev.kind, res.turn_index)
                row.untrusted = res.turn_index in self.untrusted.turns
            case Judgement(turn_index=int(turn)):
                self.row(turn).judgements.append(ev)
            case RunEnded():
                for row in self.rows.values():  # what was under way was stopped; what was still to come, never played
                    row.status = {"running": "interrupted", "pending": NOT_PLAYED}.get(row.status, row.status)

    def _started(self, ev: TurnStarted, turn: int) -> None:
        if turn != GREETING_TURN and self.greeting_running():
            greeting = self.rows[GREETING_TURN]
            greeting.status = "ok"  # the greeting has no turn_ended: it is over when turn 0 starts
            greeting.ended_ms = ev.t_ms
        row = self.row(turn)
        row.status = "running"
        row.attempts = max(row.attempts, ev.attempt + 1)
        if row.started_ms is None:
            row.started_ms = ev.t_ms
        self.current = turn
