"""The leaderboard's lines around its table and how its height is shared: rows first.

Above the table: the status line, what every row shares (`spine.labels`: `all rows: demo_bench ·
simulator · heuristic judge`), and the columns out of view. Under it, the notes, the legend and the
plots take only what the rows leave (`place`): the rows get their height first, the notes their
lines when they fit after the rows (else one line saying how many, `n` shows them), the plots what
is left when it is enough to read them (`v` shows or hides them whatever the room).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from arena_tui.spine.labels import Labels

from ..compare.columns import Column
from .fit import Forms, fit_parts

ROW_LINES = 2  # a leaderboard row's height: a model over its label, a figure over its interval
PLOT_ROOM = 12  # lines the legend and the plots need at least to be read (the rows' lanes, an axis)
TABLE_MIN = 7  # the table's lines at least when the plots are asked for (`v`) in a short terminal


def shared_text(labels: Labels, benchmark: str | None, width: int, lines: int) -> Text:
    """`all rows: demo_bench · simulator · heuristic judge`: what every row shown has alike, said once
    here and on no row (`benchmark`: the one benchmark of every row, when its column is left out)."""
    shared = Labels((benchmark, *labels.shared) if benchmark else labels.shared, labels.rows)
    return Text(shared.header(width, lines), "magenta")


def columns_text(columns: Sequence[Column], visible: list[int], apart: set[int], width: int) -> Text:
    """Which columns are out of view and the keys that bring them (never silently off-screen): every
    one named, in at most two lines. `apart`: columns said elsewhere (a benchmark every row shares)."""
    listed = [i for i in range(len(columns)) if i not in apart]
    hidden = [i for i in listed if i not in visible]
    if not hidden:
        return Text("")
    left = [columns[i].label for i in hidden if i < visible[-1]]
    right = [columns[i].label for i in hidden if i > visible[-1]]
    shown = len(listed) - len(hidden)
    parts: list[Forms] = [(Text(f"{shown} of {len(listed)} columns in view", "bold"),
                           Text(f"{shown}/{len(listed)} cols", "bold"))]
    if left:
        parts.append((f"← {', '.join(left)}", f"← {','.join(left)}"))
    if right:
        parts.append((f"→ {', '.join(right)}", f"→ {','.join(right)}"))
    return fit_parts(parts, width, 2, sep="  ")


@dataclass(frozen=True)
class Placement:
    """How the room under the status lines is shared (`place`)."""

    table: int | None  # the table's height in lines; None: all the room left (1fr)
    notes: bool  # every note (else the one line saying how many)
    plots: bool  # the legend and the plots shown


def place(room: int, rows: int, notes: int, plots: bool | None, notes_open: bool | None) -> Placement:
    """Rows first (module docstring). `room`: the lines the table, the notes and the plots share;
    `rows`: the rows shown; `notes`: the lines every note takes (the collapsed notes take one);
    `plots`/`notes_open`: the user's choice (`v`, `n`), None to follow the room."""
    table = 1 + ROW_LINES * rows  # its header line, then its rows
    left = room - table
    full = notes_open if notes_open is not None else left >= notes
    left -= notes if full else min(notes, 1)
    show = plots if plots is not None else left >= PLOT_ROOM
    if not show:
        return Placement(None, full, False)
    return Placement(max(min(table, table + left - PLOT_ROOM), TABLE_MIN), full, True)
