"""Run-level numbers: passes over denominators per dimension, strict row pass rate, Wilson 95 %.

A turn whose judge failed (judge_error) or that was never judged still counts: each dimension
it should have been scored on gets a denominator and no pass, so failures cannot vanish.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, Field

from benchmarks.model import Benchmark

from ..events import Judgement, TurnResult
from .phase2 import TOOL, align, latest
from .schema import TURN_TAKING


def wilson(passes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval: honest at small n and at 0 % / 100 %, unlike the normal approximation."""
    if n <= 0:
        return (0.0, 0.0)
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if passes == 0 else max(0.0, centre - half)
    hi = 1.0 if passes == n else min(1.0, centre + half)  # exact at the ends, not 0.9999…
    return (lo, hi)


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
    dimensions: dict[str, Tally] = Field(default_factory=dict)
    strict: Tally = Field(default_factory=Tally)
    tracking: list[TrackingRow] = Field(default_factory=list)
    category_totals: dict[str, Tally] = Field(default_factory=dict)  # strict row pass per category


def _close(t: Tally) -> Tally:
    if t.denominator:
        t.rate = t.passes / t.denominator
        t.ci95 = wilson(t.passes, t.denominator)
    return t


def summarize(benchmark: Benchmark, results: Iterable[TurnResult], judgements: Iterable[Judgement]) -> RunSummary:
    results = sorted(results, key=lambda r: r.turn_index)
    judgements = list(judgements)
    now = latest(judgements)
    base = {i: j for i, j in latest(judgements, phase=1).items() if j.error is None}
    verdicts = [v for j in base.values() for v in j.call_verdicts]
    al = align(benchmark, results, verdicts)
    judges = sorted({j.judge for j in now.values()})
    summary = RunSummary(
        benchmark=benchmark.name,
        judge=", ".join(judges) or "none",
        heuristic=any(j.heuristic for j in now.values()),
        tracking=[TrackingRow(**lk.model_dump(exclude={"via"})) for lk in al.links],
    )
    dims: dict[str, Tally] = {}
    for r in results:
        try:
            turn = benchmark.turn(r.turn_index)
        except KeyError:
            continue
        summary.turns += 1
        j = now.get(r.turn_index)
        if j is None or j.error:
            (summary.unjudged if j is None else summary.judge_errors).append(r.turn_index)
            wanted = [d for d in turn.dimensions if d != TOOL]
            if turn.expected_calls or al.unsolicited.get(r.turn_index):
                wanted.append(TOOL)
            verdicts_now = {d: "fail" for d in wanted}
            if j is not None and TURN_TAKING in j.scores:
                verdicts_now[TURN_TAKING] = j.scores[TURN_TAKING].verdict
            row_ok = False
        else:
            verdicts_now = {d: s.verdict for d, s in j.scores.items()}
            row_ok = all(v != "fail" for v in verdicts_now.values())
        for d, v in verdicts_now.items():
            if v == "na":
                continue
            t = dims.setdefault(d, Tally())
            t.denominator += 1
            t.passes += v == "pass"
        summary.strict.denominator += 1
        summary.strict.passes += row_ok
        for cat in turn.categories:
            c = summary.category_totals.setdefault(cat, Tally())
            c.denominator += 1
            c.passes += row_ok
    order = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking",
             "ambiguity_handling", TURN_TAKING]
    summary.dimensions = {d: _close(dims[d]) for d in sorted(dims, key=lambda d: (order.index(d) if d in order else 99, d))}
    _close(summary.strict)
    for t in summary.category_totals.values():
        _close(t)
    return summary


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
    lines.append(row("strict (all dims pass)", s.strict))
    if s.judge_errors:
        lines.append(f"judge errors on turns {s.judge_errors} (counted as failures)")
    if s.unjudged:
        lines.append(f"not judged: turns {s.unjudged} (counted as failures)")
    if s.tracking:
        lines.append("")
        lines.append(f"{'expected':>8} {'actual':>6}  {'status':8} call")
        for t in s.tracking:
            actual = "-" if t.actual_turn is None else str(t.actual_turn)
            lines.append(f"{t.expected_turn:>8} {actual:>6}  {t.status:8} {t.name}#{t.expected_index}")
    return "\n".join(lines)
