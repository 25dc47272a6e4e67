"""A row's repeats as the field reports them: pass^k and pass@k per turn and for the row, how many
of its turns flip between repeats, and its strict pass with an interval over its conversations.

Per turn, over the repeats that have a verdict on it (`verdicts.turn_consistency`: a repeat in which
the turn counts in no figure is no repeat of it), the unbiased estimators of `stats.repeats` with
k = the row's repeats; the row's pass^k and pass@k are their mean over the turns every repeat
judged (a turn with fewer verdicts than k has no pass^k: named, never guessed). The interval is
`stats.paired.bootstrap_rate`: turns (in blocks when they correlate along turn order), then runs,
resampled (a Wilson interval over all the repeats' turns as independent draws would be too
narrow). Only a row with >= 2 repeats has these.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.paired import Verdict, bootstrap_rate
from ..stats.repeats import pass_at_k, pass_hat_k
from ..verdicts import TurnConsistency
from .leaderboard import POOLED, BoardRow


@dataclass(frozen=True)
class TurnRepeats:
    """One turn over a row's repeats: c passes of n verdicts, and its pass^k / pass@k (None when n < k)."""

    turn: int
    n: int
    c: int
    k: int
    flips: int

    @property
    def pass_hat_k(self) -> float | None:
        return pass_hat_k(self.n, self.c, self.k) if self.n >= self.k else None

    @property
    def pass_at_k(self) -> float | None:
        return pass_at_k(self.n, self.c, self.k) if self.n >= self.k else None


@dataclass(frozen=True)
class RowRepeats:
    """A row's figures over its k >= 2 repeats."""

    k: int
    turns: list[TurnRepeats]
    ci: tuple[float, float] | None  # strict pass: bootstrap over turn blocks and runs

    @property
    def full(self) -> list[TurnRepeats]:
        """The turns every repeat judged: those pass^k and pass@k average over."""
        return [t for t in self.turns if t.n >= self.k]

    @property
    def pass_hat_k(self) -> float | None:
        full = self.full
        return sum(t.pass_hat_k or 0.0 for t in full) / len(full) if full else None

    @property
    def pass_at_k(self) -> float | None:
        full = self.full
        return sum(t.pass_at_k or 0.0 for t in full) / len(full) if full else None

    @property
    def flip_rate(self) -> float | None:
        """The share of turns with two verdicts or more whose verdict differs between repeats."""
        seen = [t for t in self.turns if t.n >= 2]
        return sum(t.flips > 0 for t in seen) / len(seen) if seen else None

    @property
    def text(self) -> str:
        """`pass^3 60% · pass@3 90% · flips on 4/30 turns · strict [72–88] over turn blocks and runs` ('' for nothing)."""
        parts = []
        if (hat := self.pass_hat_k) is not None and (at := self.pass_at_k) is not None:
            parts.append(f"pass^{self.k} {100 * hat:.0f}% · pass@{self.k} {100 * at:.0f}%")
            if len(self.full) < len(self.turns):
                parts.append(f"over the {len(self.full)}/{len(self.turns)} turns all {self.k} repeats judged")
        seen = [t for t in self.turns if t.n >= 2]
        if seen:
            parts.append(f"flips on {sum(t.flips > 0 for t in seen)}/{len(seen)} turns")
        if self.ci is not None:
            parts.append(f"strict [{100 * self.ci[0]:.0f}–{100 * self.ci[1]:.0f}] over turn blocks and runs")
        return " · ".join(parts)


def _verdict(status: str) -> Verdict:
    return {"pass": True, "fail": False}.get(status)


def row_repeats(row: BoardRow) -> RowRepeats | None:
    """The row's repeat figures, None for a row of one run (or a pooled row: turns differ across benchmarks)."""
    k = len(row.runs)
    if k < 2 or row.benchmark == POOLED:
        return None
    cons: list[TurnConsistency] = row.consistency
    turns = [TurnRepeats(c.turn_index, c.pass_runs + c.fail_runs, c.pass_runs, k, c.flips) for c in cons]
    turns = [t for t in turns if t.n]
    matrix = [[_verdict(c.statuses[i]) for c in cons] for i in range(k)] if cons else []
    return RowRepeats(k, turns, bootstrap_rate(matrix) if matrix else None)
