"""Which judge made a leaderboard row's figures, and how sure it was: what the report, its CSVs and
the leaderboard screen show beside every pass rate (the judge, its model and rules version; the
judge agreement of repeated judgings, `arena_tui.judge.agreement`)."""

from __future__ import annotations

from collections.abc import Iterable

from ..judge.agreement import AgreementFigure, agreement_of
from ..verdicts import standing
from .leaderboard import BoardRow
from .stored import StoredRun


def run_judge(run: StoredRun) -> str:
    """`anthropic:claude-opus-4-5 (arena-judge/2)`: the run's judge, whose verdicts count (`StoredRun.judge_label`)."""
    return run.judge_label


def row_judge(row: BoardRow) -> str:
    """The row's judge: one, part of what the row is (`stored.row_identity`)."""
    return row.judge


def stored_agreement(run: StoredRun) -> AgreementFigure:
    """The run's judge agreement over its turns that count: each one's majority, the judge's own verdicts
    (its standing phase-1 judgement, `judge.agreement`), never the code rules' revision of it."""
    phase1 = standing(run.revisions, phase=1, judge=run.tally.judge)
    return agreement_of(st.machine for t, st in phase1.items() if t in run.tally.rows)


def row_agreement(row: BoardRow) -> AgreementFigure:
    """Pooled over the turns of the row's runs (each run's verdicts that count)."""
    return pooled_agreement(f.run for f in row.runs)


def pooled_agreement(runs: Iterable[StoredRun]) -> AgreementFigure:
    return sum((stored_agreement(r) for r in runs), AgreementFigure())


def agreement_cell(fig: AgreementFigure) -> str:
    """`94.4% (51/54)`, or `–` when no turn was judged more than once."""
    return "–" if fig.rate is None else f"{100 * fig.rate:.1f}% ({fig.agree}/{fig.verdicts})"
