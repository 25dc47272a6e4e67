"""Which judge made a leaderboard row's figures, and how sure it was: what the report, its CSVs and
the leaderboard screen show beside every pass rate (the judge, its model and rules version; the
judge agreement of repeated judgings, `arena_tui.judge.agreement`)."""

from __future__ import annotations

from collections.abc import Iterable

from ..judge.agreement import AgreementFigure, agreement_of
from ..judge.label import judge_label
from .leaderboard import BoardRow
from .stored import StoredRun


def run_judge(run: StoredRun) -> str:
    """`anthropic:claude-opus-4-5 (arena-judge/2)`: the judge of the verdicts the run shows."""
    return judge_label(st.shown for st in run.standing.values())


def row_judge(row: BoardRow) -> str:
    """The judges of a row's runs (one, unless runs of the row were judged differently)."""
    return judge_label(st.shown for f in row.runs for st in f.run.standing.values())


def stored_agreement(run: StoredRun) -> AgreementFigure:
    return agreement_of(st.machine for st in run.standing.values())


def row_agreement(row: BoardRow) -> AgreementFigure:
    """Pooled over the turns of the row's runs (each run's verdicts that count)."""
    return pooled_agreement(f.run for f in row.runs)


def pooled_agreement(runs: Iterable[StoredRun]) -> AgreementFigure:
    return sum((stored_agreement(r) for r in runs), AgreementFigure())


def agreement_cell(fig: AgreementFigure) -> str:
    """`94.4% (51/54)`, or `–` when no turn was judged more than once."""
    return "–" if fig.rate is None else f"{100 * fig.rate:.1f}% ({fig.agree}/{fig.verdicts})"
