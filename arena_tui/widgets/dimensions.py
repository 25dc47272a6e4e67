"""How a judge dimension is named on screen, and pass rates laid out one slot per dimension.

One home for the names, so every table calls a dimension the same: its column label where a
column has room (`Instr`), its two-letter code where many must share a line (`IF`), and the
legend that spells the codes out (shown wherever codes are). Pass rates in a list (runs, campaign
cells) sit in fixed slots under a header of codes, so a column of runs reads straight down and
never needs cutting: `rate_slots` / `slots_header`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.text import Text

from ..verdicts import ordered

DIM_ABBREV = {
    "kb_grounding": "KB",
    "instruction_following": "Instr",
    "tool_use_correct": "Tool✓",
    "state_tracking": "State",
    "ambiguity_handling": "Ambig",
    "turn_taking": "Taking",
}
DIM_CODE = {
    "kb_grounding": "KB",
    "instruction_following": "IF",
    "tool_use_correct": "TU",
    "state_tracking": "ST",
    "ambiguity_handling": "AH",
    "turn_taking": "TT",
}
DIM_NAME = {
    "kb_grounding": "knowledge base",
    "instruction_following": "instructions",
    "tool_use_correct": "tool use",
    "state_tracking": "state",
    "ambiguity_handling": "ambiguity",
    "turn_taking": "turn-taking",
}
SLOT = 3  # a rate is 0..100: three cells, one space between slots
HEURISTIC_MARK = "h"


def dim_label(dim: str) -> str:
    return DIM_ABBREV.get(dim, dim[:6])


def dim_code(dim: str) -> str:
    return DIM_CODE.get(dim, dim[:2].upper())


def dim_legend(dims: Iterable[str], *, heuristic: bool = False) -> Text:
    """`KB knowledge base · IF instructions · …` for the dimensions shown (and the heuristic mark)."""
    t = Text()
    for i, d in enumerate(dims):
        if i:
            t.append(" · ", "grey50")
        t.append(dim_code(d), "bold")
        t.append(f" {DIM_NAME.get(d, d.replace('_', ' '))}")
    if heuristic:
        if t:
            t.append(" · ", "grey50")
        t.append(HEURISTIC_MARK, "italic yellow")
        t.append(" heuristic judge")
    return t


def rates_legend(dims: list[str], *, heuristic: bool = False) -> Text:
    """The line under a list of pass-rate slots: what the codes (and the heuristic mark) mean; without
    slots in view, what the mark means (a strict pass figure carries it too)."""
    if not dims:
        return dim_legend([], heuristic=heuristic)
    return Text("pass rates %: ", "grey62").append_text(dim_legend(dims, heuristic=heuristic))


def rate_style(pct: float) -> str:
    return "green" if pct >= 80 else ("yellow" if pct >= 50 else "red")


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
        errors = Text.assemble(*([errors, " "] if errors else []), (unjudged, "yellow"))
    if not rates:
        return Text.assemble(("not judged", "grey50"), " ", errors) if errors else Text("not judged", "grey50")
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
        pct = 100 * p / n
        t.append(f"{pct:>{SLOT}.0f}", rate_style(pct))
    if heuristic:
        t.append(f" {HEURISTIC_MARK}", "italic yellow")
    if errors:
        t.append(" ")
        t.append_text(errors)
    return t
