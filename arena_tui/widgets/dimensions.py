"""How a judge dimension is named on screen, and pass rates laid out one slot per dimension.

Every table calls a dimension by its one row in `verdicts.NAMES`: its column label where a
column has room (`Instr`), its two-letter code where many must share a line (`IF`), and the
legend that spells the codes out (shown wherever codes are). Pass rates in a list (runs, campaign
cells) sit in fixed slots under a header of codes, so a column of runs reads straight down and
never needs cutting: `rate_slots` / `slots_header`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from rich.text import Text

from ..verdicts import NEVER_ANSWERED, NO_ANSWER, NOT_JUDGED, Tally, named, ordered

if TYPE_CHECKING:
    from ..campaign.records import CellView

SLOT = 3  # a rate is 0..100: three cells, one space between slots
HEURISTIC_MARK = "h"
HUMAN_MARK = "✎"  # a person's verdict counts in the figure (`verdicts.Tally.human`), as the turn table marks a turn


def dim_label(dim: str) -> str:
    return named(dim).label


def dim_code(dim: str) -> str:
    return named(dim).code


def dim_legend(dims: Iterable[str], *, heuristic: bool = False, human: bool = False) -> Text:
    """`KB knowledge base · IF instructions · …` for the dimensions shown (and the heuristic and person's marks)."""
    t = Text()
    for i, d in enumerate(dims):
        if i:
            t.append(" · ", "grey50")
        t.append(dim_code(d), "bold")
        t.append(f" {named(d).words}")
    if heuristic:
        if t:
            t.append(" · ", "grey50")
        t.append(HEURISTIC_MARK, "italic yellow")
        t.append(" heuristic judge")
    if human:
        if t:
            t.append(" · ", "grey50")
        t.append(HUMAN_MARK, "bold cyan")
        t.append(" a person's verdicts count (arena-tui review)")
    return t


def rates_legend(dims: list[str], *, heuristic: bool = False, human: bool = False) -> Text:
    """The line under a list of pass-rate slots: what the codes (and the heuristic and person's marks)
    mean; without slots in view, what the marks mean (a strict pass figure carries them too)."""
    if not dims:
        return dim_legend([], heuristic=heuristic, human=human)
    return Text("pass rates %: ", "grey62").append_text(dim_legend(dims, heuristic=heuristic, human=human))


def rate_style(rate: float) -> str:
    """A pass rate's colour, for every table: `rate` is a share (0–1)."""
    return "green" if rate >= 0.8 else ("yellow" if rate >= 0.5 else "red")


def rate_text(passed: int, n: int) -> Text:
    """`75% 3/4`, the percentage in its colour: how every list shows a pass rate with its counts."""
    return Text.assemble((f"{100 * passed / n:3.0f}%", rate_style(passed / n)), f" {passed}/{n}")


def strict_text(tally: Tally | None, *, live: bool = False, heuristic_mark: bool = False, apart: str = "",
                mute: bool = True) -> Text:
    """A run's strict pass where a list shows it (runs list, campaign cells, `campaign show`):
    `75% 3/4` (`h` after it with `heuristic_mark`, when judged offline), `no answer` once a run
    ended with no scored row, `not judged`, `–` while it starts or when nothing was recorded;
    `never answered — check the setup` after a run the model heard and never answered (`mute`:
    said here, not in a column beside it); then `apart` (`· 1 stopped`) when given."""
    if tally is None:
        return Text("–", "grey50")
    passed, n = tally.strict
    if not tally.scored and not live:
        t = Text(NO_ANSWER, "bold red")
    elif not n:
        t = Text("–" if live else NOT_JUDGED, "grey50")
    else:
        t = rate_text(passed, n)
        if heuristic_mark and tally.heuristic:
            t.append(f" {HEURISTIC_MARK}", "italic yellow")
        if tally.human:  # some verdict it counts is a person's, not the judge's (the legend says so)
            t.append(f" {HUMAN_MARK}", "bold cyan")
    if mute and tally.never_answered and not live:
        t.append(f" {NEVER_ANSWERED}", "bold red")
    if apart:
        t.append(f" · {apart}", "yellow")
    return t


def cell_strict(view: CellView) -> Text:
    """The cell's strict pass as every list shows a run's (`widgets.dimensions.strict_text`): marked
    `h` when judged offline (the legend under the table says so), then the turns counted apart;
    `–` before a run is recorded. `arena-tui campaign show` prints the same text."""
    if not view.total:
        return strict_text(None)  # no run recorded yet
    return strict_text(view.tally, live=view.active, heuristic_mark=True, apart=view.tally.apart_text(live=view.active))


def slot_dims(rates: Iterable[Mapping[str, object]]) -> list[str]:
    """The slots a list needs: every dimension any of its rows has, in `verdicts.DIMENSIONS` order."""
    seen: dict[str, None] = {}
    for r in rates:
        for d in r:
            seen.setdefault(d, None)
    return ordered(seen)


def slots_header(dims: list[str]) -> str:
    """The codes over their slots: ` KB  IF  TU`."""
    return " ".join(f"{dim_code(d):>{SLOT}}" for d in dims)


def rate_slots(rates: Mapping[str, tuple[int, int]], dims: list[str], heuristic: bool = False,
               judge_errors: int = 0, unjudged: str = "") -> Text:
    """A row's pass rates (%) under `slots_header(dims)`; "–" where it has no such dimension,
    then the heuristic mark, how many turns' newest judging failed and the played turns never
    judged (`unjudged`: "1 not judged"). Never judged: says so."""
    errors = Text(f"judge err {judge_errors}", "bold red") if judge_errors else None
    if unjudged:
        errors = Text.assemble(errors, " ", (unjudged, "yellow")) if errors else Text.assemble((unjudged, "yellow"))
    if not rates:
        return Text.assemble((NOT_JUDGED, "grey50"), " ", errors) if errors else Text(NOT_JUDGED, "grey50")
    t = Text()
    for i, d in enumerate(dims):
        if i:
            t.append(" ")
        if d not in rates:
            t.append(f"{'–':>{SLOT}}", "grey50")
            continue
        p, n = rates[d]
        if not n:  # nothing scored on it
            t.append(f"{'–':>{SLOT}}", "grey50")
            continue
        t.append(f"{100 * p / n:>{SLOT}.0f}", rate_style(p / n))
    if heuristic:
        t.append(f" {HEURISTIC_MARK}", "italic yellow")
    if errors:
        t.append(" ")
        t.append_text(errors)
    return t
