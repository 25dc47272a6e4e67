"""Run-level numbers: passes over denominators per dimension, strict row pass rate, Wilson 95 %.

The counting is `arena_tui.verdicts.tally`, the rule of every figure: the judged turns the model
played; every other turn the run set out to run (not played, stopped, lost pace, infra failure,
engine error, judge error, not judged) is counted apart and listed by reason (`apart`). A failed
re-judge leaves the earlier verdict standing and is listed (`rejudge_errors`).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from arena_tui.spine.benchmark import Benchmark

from ..stats import wilson
from arena_tui.spine.events import Judgement, TurnResult
from ..verdicts import (APART, NEVER_ANSWERED, STRICT, JudgeId, apart_text, counts, human_text, judge_id, ordered,
                        standing, tally)
from .label import judge_text
from .phase2 import alignment_of


class Tally(BaseModel):
    passes: int = 0
    denominator: int = 0
    rate: float | None = None
    ci95: tuple[float, float] | None = None


class TrackingRow(BaseModel):
    expected_turn: int
    expected_index: int
    name: str
    actual_turn: int | None
    call_id: str | None
    status: str


class RunSummary(BaseModel):
    benchmark: str
    judge: str
    heuristic: bool = False
    turns: int = 0
    judge_errors: list[int] = Field(default_factory=list)
    unjudged: list[int] = Field(default_factory=list)
    rejudge_errors: list[int] = Field(default_factory=list)  # the newest re-judge failed; the verdict before stands
    dimensions: dict[str, Tally] = Field(default_factory=dict)
    strict: Tally = Field(default_factory=Tally)
    tracking: list[TrackingRow] = Field(default_factory=list)
    category_totals: dict[str, Tally] = Field(default_factory=dict)  # strict row pass per category
    apart: dict[str, list[int]] = Field(default_factory=dict)  # why (`verdicts.APART` key) -> turns in no figure
    scored: bool = True  # False: the model got no turn (all lost, stopped, not played): the run has no scored row
    never_answered: bool = False  # the model heard its turns and answered none (`verdicts.NEVER_ANSWERED`): all counted
    set_aside: list[str] = Field(default_factory=list)  # other judgings, not the run's judge's: none of their verdicts count
    provisional: list[int] = Field(default_factory=list)  # turns whose verdict was scored live (no whole-run yet)
    human: dict[int, list[str]] = Field(default_factory=dict)  # turn -> dimensions a person's verdict decides (`Tally.human`)


def _close(t: Tally) -> Tally:
    if t.denominator:
        t.rate = t.passes / t.denominator
        t.ci95 = wilson(t.passes, t.denominator)
    return t


def summarize(benchmark: Benchmark, results: Iterable[TurnResult], judgements: Iterable[Judgement],
              expected: Iterable[int] | None = None) -> RunSummary:
    """The run's figures; `expected`: the turns it set out to run (its `turn_indices`: one without
    a row was not played); without it, the turns that ran."""
    results = sorted(results, key=lambda r: r.turn_index)
    judgements = list(judgements)
    t = tally(judgements, {r.turn_index: r.status for r in results}, expected)
    now = standing(judgements, judge=t.judge)
    # the calls of the turns the model played: a turn counted apart expected nothing of it (never `missed`)
    al = alignment_of(benchmark, [r for r in results if counts(r.status)], judgements)
    summary = RunSummary(
        benchmark=benchmark.name,
        judge=judge_text(*t.judge) if t.judge is not None else "none",  # the run's judge: kind:model (rules version)
        heuristic=t.heuristic,
        tracking=[TrackingRow(**lk.model_dump(exclude={"via"})) for lk in al.links],
    )
    summary.apart, summary.scored, summary.never_answered = t.apart, t.scored, t.never_answered
    summary.set_aside = set_aside(judgements, t.judge, t.rows.keys() | set(t.judge_errors))
    summary.turns = len(t.rows)
    summary.provisional = [i for i, st in now.items() if st.judgement is not None and st.judgement.provisional]
    summary.judge_errors, summary.unjudged, summary.rejudge_errors = t.judge_errors, t.unjudged, t.rejudge_errors
    summary.human = t.human
    summary.dimensions = {d: _close(Tally(passes=t.dimensions[d][0], denominator=t.dimensions[d][1]))
                          for d in ordered(t.dimensions)}
    summary.strict = _close(Tally(passes=t.strict[0], denominator=t.strict[1]))
    for idx, ok in t.rows.items():
        for cat in benchmark.turn(idx).categories:
            c = summary.category_totals.setdefault(cat, Tally())
            c.denominator += 1
            c.passes += ok
    for c in summary.category_totals.values():
        _close(c)
    return summary


def set_aside(judgements: Iterable[Judgement], judge: JudgeId | None, turns: Iterable[int]) -> list[str]:
    """The other judges' judgings of the turns that count, which no figure counts (the run's one judge is
    `judge`, `verdicts.run_judge`): `openai:x (arena-judge/3): no verdict, every turn errored` for a judging
    that failed, `… : 1 turn, not the run's judge` for one that judged some turns."""
    turns = set(turns)
    mine: dict[JudgeId, list[Judgement]] = {}
    for j in judgements:
        who = judge_id(j)
        if j.turn_index in turns and who is not None and who != judge:
            mine.setdefault(who, []).append(j)
    out = []
    for who, js in sorted(mine.items()):
        valid = {j.turn_index for j in js if not j.error}
        if valid:
            out.append(f"{judge_text(*who)}: {len(valid)} turn{'s' * (len(valid) != 1)} judged, not the run's judge")
        else:  # its errors are each turn's own line where they are shown
            out.append(f"{judge_text(*who)}: no verdict, every turn errored")
    return out


def render_text(s: RunSummary) -> str:
    """Plain-text table for the CLI and the analysis file."""
    label = " [HEURISTIC - offline word-overlap scores, not an LLM judge]" if s.heuristic else ""
    lines = [f"{s.benchmark} judged by {s.judge}{label}", f"{'dimension':24} {'pass/n':>9} {'rate':>7}  95% CI"]

    def row(name: str, t: Tally) -> str:
        if not t.denominator:
            return f"{name:24} {'0/0':>9} {'-':>7}"
        lo, hi = t.ci95 or (0, 0)
        return f"{name:24} {f'{t.passes}/{t.denominator}':>9} {100 * (t.rate or 0):6.1f}%  [{100 * lo:.1f}, {100 * hi:.1f}]"

    lines += [row(d, t) for d, t in s.dimensions.items()]
    lines.append(row(STRICT, s.strict))
    if s.apart:
        lines.append(f"counted apart, in no figure: {apart_text(s.apart)}")
        lines += [f"  {APART[why]}: turns {', '.join(map(str, turns))}" for why, turns in s.apart.items()]
    if not s.scored:
        lines.append("the model got no turn (lost, stopped or not played): the run has no scored row (leaderboard, report)")
    if s.never_answered:
        lines.append(f"{NEVER_ANSWERED}: the model heard every turn and answered none; each counts as its failure")
    if s.set_aside:
        lines.append(f"judged by {s.judge} alone; set aside (none of their verdicts count): {'; '.join(s.set_aside)}")
    if s.human:
        which = "; ".join(f"turn {t}: {', '.join(dims)}" for t, dims in sorted(s.human.items()))
        lines.append(f"{human_text(sum(map(len, s.human.values())), len(s.human))} ({which})")
    if s.rejudge_errors:
        lines.append(f"re-judge failed on turns {s.rejudge_errors} (the verdict before it stands)")
    if s.provisional:
        lines.append(f"provisional: turns {s.provisional} were scored live, turn by turn; no whole-run judgement "
                     "has replaced them (`arena-tui judge RUN` makes one)")
    if s.tracking:
        lines.append("")
        lines.append(f"{'expected':>8} {'actual':>6}  {'status':8} call")
        for t in s.tracking:
            actual = "-" if t.actual_turn is None else str(t.actual_turn)
            lines.append(f"{t.expected_turn:>8} {actual:>6}  {t.status:8} {t.name}#{t.expected_index}")
    return "\n".join(lines)
