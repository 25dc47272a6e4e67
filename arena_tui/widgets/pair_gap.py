"""A gap between two rows (`compare.gap.PairGap`) as text: the leaderboard's gap dialog and the
compare screen's line say what `compare.gap` computed, in its words (nothing is recounted here)."""

from __future__ import annotations

from rich.text import Text

from ..compare.gap import (STRICT_KEY, Deciding, Gap, PairGap, figure_name, gap_core, gap_detail, gap_text, p_text,
                           side_labels)
from .board_cells import MUTED

DECIDING_SHOWN = 12  # turns that decide a gap listed by number (the count says how many more)


def _style(g: Gap | None) -> str:
    return "bold yellow" if g is not None and g.distinguishable() else ""


WIDE = 140  # from this width the line says the method and the turns left out in full


def gap_line(pair: PairGap, width: int = WIDE) -> Text:
    """The strict pass's gap: `strict pass B − A = … : …  (p …, method, n turns)`, the turns left out
    and how many decide it; narrower than `WIDE`, the core with p and the counts."""
    g = pair.strict
    left, n = pair.pairing.left_out_text, len(pair.deciding)
    if width >= WIDE or g is None:
        t = Text.assemble(("strict pass ", "bold"), (gap_text(g), _style(g)))
        if left:
            t.append(f" · {left}", "yellow")
    else:
        t = Text.assemble(("strict pass ", "bold"), (gap_core(g), _style(g)), (f" ({p_text(g.p)}, {g.turns} turns)", MUTED))
        if left:
            t.append(f" · {len(pair.pairing.left_out)} left out", "yellow")
    if n:
        t.append(f" · decided by {n} turn{'s' * (n != 1)}", MUTED)
    return t


def deciding_text(turns: list[Deciding]) -> str:
    """`7 (A 0/1, B 1/1), 3 (A 2/3, B 0/2), …`: the turns whose verdicts differ, largest shift first."""
    shown = [f"{d.turn} (A {d.share(d.a)}, B {d.share(d.b)})" for d in turns[:DECIDING_SHOWN]]
    more = len(turns) - DECIDING_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _figure(t: Text, key: str, g: Gap | None) -> None:
    t.append(f"{figure_name(key)}\n", "bold")
    if g is None:
        t.append("  no paired turn\n", MUTED)
        return
    t.append(f"  {gap_core(g)}\n", _style(g))
    t.append(f"  {gap_detail(g)} · A {100 * g.a:.1f}% B {100 * g.b:.1f}% on these turns\n", MUTED)


def gap_report(pair: PairGap) -> Text:
    """The strict pass's gap, what pairs and what decides it, then every dimension's: the leaderboard's gap dialog."""
    t = Text()
    shared, name = side_labels([pair.a, pair.b])  # the one rule of row labels: what both share said once
    if shared.shared:
        t.append(shared.header(lead="both") + "\n", MUTED)
    for side, letter in ((pair.a, "A"), (pair.b, "B")):
        runs = len(side.runs)
        t.append(f"{letter}: ", "bold").append(name[side.name]).append(
            f"  {side.benchmark} · {runs} run{'s' * (runs != 1)}\n", MUTED)
    t.append("\n")
    _figure(t, STRICT_KEY, pair.strict)
    paired = len(pair.pairing.turns)
    t.append(f"{paired} turn{'s' * (paired != 1)} paired (both played, judged by the same judge)")
    t.append(f"; {pair.pairing.left_out_text}\n" if pair.pairing.left_out_text else "; none left out\n",
             "yellow" if pair.pairing.left_out_text else MUTED)
    if pair.deciding:
        t.append("decided by (strict verdicts differ): ", "bold").append(deciding_text(pair.deciding) + "\n")
    else:
        t.append("no turn's strict verdicts differ between the two\n", MUTED)
    for key, g in pair.figures.items():
        if key != STRICT_KEY:
            t.append("\n")
            _figure(t, key, g)
    return t
