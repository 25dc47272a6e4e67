"""Leaderboard and compare cells: the figures of the leaderboard's columns (`compare.columns`, one
spec for the screen and the report) as two-line table cells.

A cell never invents a number: a rate with nothing scored is "–", a run never judged reads
"not judged" (never 0 %), a latency the data layer left out says why.
"""

from __future__ import annotations

from rich.text import Text

from arena_tui.spine.labels import Label, cut_name

from ..compare.columns import Count, Figure, Percentile, RateFigure, Subset, Words
from ..compare.leaderboard import BoardRow
from ..cost import Estimate
from ..compare.render import ms as ms_text
from ..stats import Distribution, Rate
from ..verdicts import APART, NOT_JUDGED
from .dimensions import rate_style

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
    """A percentile over its bootstrap 95 % interval; without one, why (e.g. `speed 20×`)."""
    if value is None:
        return Text.assemble(("–", MUTED), "\n", (why_not, MUTED))
    second = f"[{ci[0]:,.0f}–{ci[1]:,.0f}]" if ci else ""
    return Text.assemble(ms_text(value), "\n", (second, MUTED))


def split_cell(d: Distribution | None, why_not: str) -> Text:
    """p50 of a subset (tool / non-tool turns, leading silence) over its n."""
    if d is None:
        return Text.assemble(("–", MUTED), "\n", (why_not, MUTED))
    return Text.assemble(ms_text(d.p50), "\n", (f"n={d.n}", MUTED))


#: a tone's (main line, detail line) styles
TONES = {"": ("", MUTED), "muted": (MUTED, MUTED), "warn": ("yellow", "yellow"), "label": ("bold", "bold magenta"),
         "italic": ("italic", MUTED)}  # fmt: skip


def words_cell(w: Words) -> Text:
    """Words as a two-line cell: the main line (a rate's coloured by its share), the detail under it."""
    main_style, detail_style = TONES.get(w.tone, TONES[""])
    if w.tone == "rate" and w.share is not None:
        main_style = rate_style(w.share)
    main = Text(w.main, main_style)
    return Text.assemble(main, "\n", (w.detail, detail_style)) if w.detail else main


def cell(figure: Figure) -> Text:
    """A column's figure (`compare.columns`) as the leaderboard's two-line cell."""
    match figure:
        case RateFigure(rate, judged):
            return rate_cell(rate, judged)
        case Percentile(ms, ci, why_not):
            return latency_cell(ms, ci, why_not)
        case Subset(dist, why_not):
            return split_cell(dist, why_not)
        case Count(n):
            return Text(str(n), "yellow" if n else MUTED)
        case Words():
            return words_cell(figure)
    raise TypeError(f"no cell for {figure!r}")


def model_cell(row: BoardRow, label: Label, width: int | None = None, marked: bool = False, human: int = 0) -> Text:
    """The model alias over what tells its row apart from the others shown (`spine.labels`: its
    `label`, whole parts in `width` cells, those dropped named), in colour; a row marked for
    comparison gets a dot; `✎3`: 3 of its verdicts are a person's."""
    t = Text("● " if marked else "", "bold cyan")
    person = f" ✎{human}" if human else ""
    t.append(label.model if width is None else cut_name(label.model, width - len(t) - len(person)))  # its middle goes
    t.append(person, "bold cyan")
    if parts := label.parts_text(width):
        t.append("\n").append(parts, TONES["label"][1])
    return t


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


def cost_cell(cost: Estimate | None, judge: Estimate | None) -> Text:
    """A run's cost (an estimate: the line under its table says of which prices) and, apart, its
    judge's: the runs list's and a campaign's cells."""
    t = Text()
    if cost is not None and cost.reports:
        t.append(cost.short(), "" if cost.known else "grey50")
    if judge is not None and judge.reports:
        t.append(f"{' ' if t else ''}+ judge {judge.short()}", "grey62")
    return t
