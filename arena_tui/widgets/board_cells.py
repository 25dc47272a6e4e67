"""Leaderboard and compare cells: the data layer's figures as two-line table cells, and sort keys.

A cell never invents a number: a rate with nothing scored is "–", a run never judged reads
"not judged" (never 0 %), a latency the data layer left out says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from ..compare.judging import row_agreement, row_judge
from ..compare.leaderboard import POOLED, BoardRow
from ..compare.render import ms as ms_text
from ..stats import Distribution, Rate
from ..verdicts import APART, NOT_JUDGED, ORIGINAL, STRICT
from ..timing import speed_text
from .dimensions import dim_label, rate_style

MUTED = "grey62"
VERDICT_GLYPH = {"pass": ("✓", "bold green"), "fail": ("✗", "bold red"), "missing": ("·", MUTED),
                 "judge_error": ("err", "bold red"), "na": ("na", MUTED)}  # fmt: skip


def rate_cell(r: Rate | None, judged: bool = True) -> Text:
    """`81% 13/16` over its Wilson 95 % interval `[72–88]`."""
    if not judged:
        return Text.assemble(("–", MUTED), "\n", (NOT_JUDGED, "italic " + MUTED))
    if r is None or not r.n or r.rate is None:
        return Text.assemble(("–", MUTED), "\n", ("not scored", MUTED))
    lo, hi = r.ci95 or (0.0, 0.0)
    return Text.assemble((f"{100 * r.rate:.0f}%", rate_style(r.rate)), f" {r.passes}/{r.n}", "\n",
                         (f"[{100 * lo:.0f}–{100 * hi:.0f}]", MUTED))  # fmt: skip


def latency_cell(value: float | None, ci: tuple[float, float] | None, why_not: str) -> Text:
    """A percentile over its bootstrap 95 % interval; without one, why (e.g. `speed 20x`)."""
    if value is None:
        return Text.assemble(("–", MUTED), "\n", (why_not, MUTED))
    second = f"[{ci[0]:,.0f}–{ci[1]:,.0f}]" if ci else ""
    return Text.assemble(ms_text(value), "\n", (second, MUTED))


def split_cell(d: Distribution | None, why_not: str) -> Text:
    """p50 of a subset (tool / non-tool turns, leading silence) over its n."""
    if d is None:
        return Text.assemble(("–", MUTED), "\n", (why_not, MUTED))
    return Text.assemble(ms_text(d.p50), "\n", (f"n={d.n}", MUTED))


def overlap_cell(row: BoardRow) -> Text:
    """Turns whose speech overlapped (`2/30`) over the longest overlap; without turns measured, why."""
    r = row.overlap
    if not r.n:
        return Text.assemble(("–", MUTED), "\n", (no_latency(row), MUTED))
    longest = f"max {ms_text(row.overlap_ms.max)}" if row.overlap_ms else "none"
    return Text.assemble((f"{r.passes}/{r.n}", "yellow" if r.passes else ""), "\n", (longest, MUTED))


def count_cell(n: int, style: str = "yellow") -> Text:
    return Text(str(n), style if n else MUTED)


def no_latency(row: BoardRow) -> str:
    """Why a row has no voice-to-voice figure: the exclusions the data layer reports, else nothing measured."""
    reasons = sorted(set(row.latency_excluded.values()))
    return "; ".join(reasons) if reasons and not row.latency_runs else "none recorded"


def model_cell(row: BoardRow, marked: bool = False) -> Text:
    """The model alias, its source labels (simulator / fake / heuristic judge / not judged) below in colour."""
    alias = row.runs[0].run.row.model if row.runs else row.model
    t = Text("● " if marked else "", "bold cyan")
    t.append(alias, "bold")
    t.append("\n")
    if row.labels:
        t.append("[" + ", ".join(row.labels) + "]", "bold magenta")
    return t


def judge_cell(row: BoardRow) -> Text:
    """The judge's kind over its model (`compare.judging`; the notes under the table name it whole,
    with the version of our rules)."""
    label = row_judge(row)
    if "," in label:
        return Text.assemble("several", "\n", ("see notes", MUTED))
    kind, _, model = label.split(" (", 1)[0].partition(":")
    return Text.assemble((kind, MUTED if kind == "none" else ""), "\n", (model, MUTED))


def agreement_text(row: BoardRow) -> Text:
    """Judge agreement of repeated judgings, `94% 51/54` over `3 judgings each`; `–` without any."""
    fig = row_agreement(row)
    if fig.rate is None:
        return Text.assemble(("–", MUTED), "\n", ("not repeated", MUTED))
    return Text.assemble((f"{100 * fig.rate:.0f}%", rate_style(fig.rate)), f" {fig.agree}/{fig.verdicts}", "\n",
                         (fig.each, MUTED))


def runs_cell(row: BoardRow) -> Text:
    t = Text(str(len(row.runs)))
    if row.latency_excluded:
        t.append(f"\n{row.latency_runs} at {speed_text(1)}", "yellow")
    return t


@dataclass(frozen=True)
class Column:
    """One leaderboard column: its header, its cell and its sort key (None sorts last)."""

    key: str
    label: str
    cell: Callable[[BoardRow], Text]
    value: Callable[[BoardRow], Any]
    descending: bool = False  # the direction a first sort on this column takes (best first)


def _p(d: Distribution | None, name: str) -> float | None:
    return getattr(d, name) if d is not None else None


def _rate(r: Rate | None, judged: bool) -> float | None:
    return r.rate if judged and r is not None else None


def stages_cell(row: BoardRow) -> Text:
    """A cascade's stage p50s, `stt/turn/llm/tts` in ms (they add up to about its pipeline TTFB)."""
    text = row.stages_p50()
    if text is None:
        return Text("–" if row.v2v is None else "no stages", MUTED)
    return Text(text)


def _stages_total(row: BoardRow) -> float | None:
    return sum(d.p50 for d in row.stages.values()) if row.stages else None


def board_columns(dimensions: list[str], stages: bool = False) -> list[Column]:
    """model and benchmark (always in view), then by what a comparison reads first: both turn passes
    (ours, the original eval's), latency, how many runs, one per dimension, the tool split, silence,
    overlap, a cascade's stage breakdown (when a row has one: `stages`), counts."""
    cols = [
        Column("model", "model", lambda r: model_cell(r), lambda r: r.model),
        Column("benchmark", "benchmark", lambda r: Text(r.benchmark, "italic" if r.benchmark == POOLED else ""),
               lambda r: (r.benchmark == POOLED, r.benchmark)),
        Column("strict", STRICT, lambda r: rate_cell(r.strict, r.judged), lambda r: _rate(r.strict, r.judged), True),
        Column("original", ORIGINAL, lambda r: rate_cell(r.original, r.judged),
               lambda r: _rate(r.original, r.judged), True),
        Column("p50", "v2v p50", lambda r: latency_cell(_p(r.v2v, "p50"), r.v2v_p50_ci, no_latency(r)),
               lambda r: _p(r.v2v, "p50")),
        Column("p95", "v2v p95", lambda r: latency_cell(_p(r.v2v, "p95"), r.v2v_p95_ci, no_latency(r)),
               lambda r: _p(r.v2v, "p95")),
        Column("runs", "runs", runs_cell, lambda r: len(r.runs), True),
    ]  # fmt: skip
    for d in dimensions:
        cols.append(Column(f"dim:{d}", dim_label(d), lambda r, d=d: rate_cell(r.dimensions.get(d), r.judged),
                           lambda r, d=d: _rate(r.dimensions.get(d), r.judged), True))  # fmt: skip
    cols += [
        Column("judge", "judge", judge_cell, row_judge),
        Column("agreement", "judge agree", agreement_text, lambda r: row_agreement(r).rate, True),
    ]
    cols += [
        Column("tool", "tool p50", lambda r: split_cell(r.v2v_tool, "no tool turn" if r.v2v else no_latency(r)),
               lambda r: _p(r.v2v_tool, "p50")),
        Column("non_tool", "non-tool p50", lambda r: split_cell(r.v2v_non_tool, no_latency(r)),
               lambda r: _p(r.v2v_non_tool, "p50")),
        Column("silence", "lead sil p50", lambda r: split_cell(r.leading_silence, no_latency(r)),
               lambda r: _p(r.leading_silence, "p50")),
        Column("overlap", "overlap", lambda r: overlap_cell(r), lambda r: r.overlap.rate),
    ]  # fmt: skip
    if stages:
        cols.append(Column("stages", "stt/turn/llm/tts p50", stages_cell, _stages_total))
    cols += [
        Column("empty", "empty", lambda r: count_cell(r.empty_responses), lambda r: r.empty_responses, True),
        Column("ended", "ended", lambda r: count_cell(r.ended_session), lambda r: r.ended_session, True),
        Column("apart", "counted apart", apart_cell, lambda r: sum(r.apart_shown.values()), True),
    ]  # fmt: skip
    return cols


def apart_cell(row: BoardRow) -> Text:
    """Its turns in no figure, one reason a line (`2 not played`, `1 stopped`); a third and more are
    summed on the second line (the notes under the table name them all)."""
    shown = row.apart_shown
    lines = [f"{n} {APART[k]}" for k, n in shown.items()]
    if not lines:
        return Text("none", MUTED)
    if len(lines) > 2:
        lines = [lines[0], f"+{sum(shown.values()) - next(iter(shown.values()))} more"]
    return Text("\n".join(lines), "yellow")


def sort_rows(rows: list[BoardRow], column: Column, descending: bool) -> list[BoardRow]:
    """Rows by the column's value (model and benchmark break ties); rows without a value last, either way."""
    have = [r for r in rows if column.value(r) is not None]
    without = [r for r in rows if column.value(r) is None]
    have.sort(key=lambda r: (r.model, r.benchmark))
    have.sort(key=column.value, reverse=descending)
    return have + sorted(without, key=lambda r: (r.model, r.benchmark))


def verdict_text(verdict: str) -> Text:
    """A verdict's glyph, or why the turn counts in no figure, in words (`verdicts.APART`)."""
    if verdict in APART:
        return Text(APART[verdict], "yellow")
    glyph, style = VERDICT_GLYPH.get(verdict, (verdict, ""))
    return Text(glyph, style)


def pattern_text(statuses: tuple[str, ...] | list[str]) -> Text:
    """One glyph per repeat, in run order: ✓ pass, ✗ fail, · no usable verdict."""
    t = Text()
    for s in statuses:
        t.append_text(verdict_text(s))
    return t
