"""Consistency across repeats (the leaderboard's drill-down): per turn, its row verdict in each
repeat (`repeat_status`: "missing" where it has none), how often that changes from one repeat to
the next, and which turns never pass. A model that passes 80 % of turns by passing a different
80 % each time is a different model from one that always fails the same 20 %."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .dimensions import row_verdict

RepeatStatus = Literal["pass", "fail", "missing"]


def repeat_status(verdicts: Mapping[str, Any] | None) -> RepeatStatus:
    """One repeat's say on one turn: its row verdict (`row_verdict`), "missing" where that has
    none (the turn never ran, was never judged, or nothing was scored)."""
    v = row_verdict(verdicts or {})
    return "missing" if v == "na" else "fail" if v == "fail" else "pass"


def _changes(seq: Sequence[str]) -> int:
    return sum(1 for a, b in zip(seq, seq[1:]) if a != b)


@dataclass(frozen=True)
class TurnConsistency:
    """How one turn fared over the repeats of one model (repeats in run order, `repeat_status` each)."""

    turn_index: int
    statuses: tuple[RepeatStatus, ...]
    flips: int  # changes between consecutive verdicts that exist (pass→fail, fail→pass; a missing repeat is skipped)
    metric_flips: dict[str, int] = field(default_factory=dict)  # per dimension, changes among its non-na verdicts

    @property
    def runs(self) -> int:
        return len(self.statuses)

    @property
    def pass_runs(self) -> int:
        return self.statuses.count("pass")

    @property
    def fail_runs(self) -> int:
        return self.statuses.count("fail")

    @property
    def missing_runs(self) -> int:
        return self.statuses.count("missing")

    @property
    def unstable(self) -> bool:
        """It passed in one repeat and failed in another: a flip is a change between two verdicts that
        exist, so a repeat where the turn is missing makes no turn unstable."""
        return self.flips > 0

    @property
    def always_fails(self) -> bool:
        """Never passed in any repeat, and failed (not just missing) in at least one."""
        return self.pass_runs == 0 and self.fail_runs > 0

    @property
    def pattern(self) -> str:
        """`1:pass|2:fail|…`, the repeat number first (from 1, as the reference's run_index)."""
        return "|".join(f"{i}:{s}" for i, s in enumerate(self.statuses, 1))


def turn_consistency(repeats: Sequence[Mapping[int, Mapping[str, str] | None]]) -> list[TurnConsistency]:
    """Per turn, its verdicts across `repeats` (one mapping turn → {dimension: verdict} per repeat,
    in run order). A turn absent from a repeat is `missing` there."""
    turns = sorted({t for rep in repeats for t in rep})
    out = []
    for t in turns:
        per_repeat = [rep.get(t) for rep in repeats]
        statuses = tuple(repeat_status(v) for v in per_repeat)
        dims = sorted({d for v in per_repeat if v for d in v})
        metric_flips = {}
        for d in dims:
            seq = [v[d] for v in per_repeat if v and v.get(d, "na") != "na"]
            n = _changes(seq)
            if n:
                metric_flips[d] = n
        out.append(TurnConsistency(t, statuses, _changes([s for s in statuses if s != "missing"]), metric_flips))
    return out
