"""A run's judgements as its events come: every revision in arrival order, the run's judge (the one
whose verdicts count, `verdicts.run_judge`) elected again whenever what it reads changed, and the
figures read off them by the one rule: the tally (`verdicts.tally`) and why each turn failed
(`judge.causes.run_causes`, recomputed only when a result, a revision or a rotation came)."""

from __future__ import annotations

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.events import Judgement, RunEnded, RunEvent, SessionRotated, TurnEnded

from ..verdicts import JudgeId, Tally, tally
from .rows import TurnRow, elect_judge


class Judgements:
    """`revisions`, the run's `judge` (with `judges`, its name as the header says it, and whether it
    is the heuristic), the session rotations a cause may read, and `version`: bumped when what a
    turn's verdict or causes read changes (results, revisions, rotations, the run's end)."""

    def __init__(self) -> None:
        self.revisions: list[Judgement] = []  # every turn's, in arrival order: the run's judge (`judge`) is theirs
        self.judge: JudgeId | None = None
        self.judges: set[str] = set()
        self.any_heuristic = False
        self.rotated: list[SessionRotated] = []  # its session rotations (a lossy one is a cause)
        self.version = 0
        self._causes: tuple[tuple, dict[int, tuple[str, ...]]] | None = None

    def fold(self, ev: RunEvent) -> None:
        match ev:
            case Judgement(turn_index=int()):
                self.revisions.append(ev)
                self.version += 1
            case SessionRotated():
                self.rotated.append(ev)
                self.version += 1
            case TurnEnded() | RunEnded():
                self.version += 1

    def elect(self, rows: dict[int, TurnRow]) -> None:
        """The run's judge again, over the rows as they stand (each row counts its revisions)."""
        self.judge, self.any_heuristic = elect_judge(rows, self.revisions)
        self.judges = {self.judge[0]} if self.judge is not None else set()  # what the header says judged it

    def tally(self, rows: dict[int, TurnRow], expected: list[int] | None) -> Tally:
        """The figures of the rows' statuses (`expected`: the turns the run set out to run, once it has ended)."""
        statuses = {i: r.status for i, r in rows.items() if r.status not in ("pending", "running")}
        return tally(self.revisions, statuses, expected)

    def causes(self, rows: dict[int, TurnRow], benchmark: Benchmark | None, rehydrated: bool) -> dict[int, tuple[str, ...]]:
        """turn -> why it failed (or why it counts apart), by the one rule (`judge.causes.run_causes`,
        as a stored run's `StoredRun.causes`); `benchmark`: what the run ran (the call alignment); `rehydrated`: each turn in its own session (no cross-turn rule)."""
        key = (self.version, id(benchmark))
        if self._causes is not None and self._causes[0] == key:
            return self._causes[1]
        try:
            from ..judge.causes import run_causes  # deferred: the UI starts, and says why, even when the judge cannot load
        except ImportError:
            return {}
        results = [r.result for r in rows.values() if r.result is not None]
        found = run_causes(benchmark, results, self.revisions, rotations=self.rotated,
                           cross_turn=not rehydrated)
        self._causes = (key, found)
        return found
