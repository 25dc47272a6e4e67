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
from ..compare.load import Loaded
from .fit import Forms, column_window, fit_parts

ROW_LINES = 2  # a leaderboard row's height: a model over its label, a figure over its interval
PLOT_ROOM = 12  # lines the legend and the plots need at least to be read (the rows' lanes, an axis)
TABLE_MIN = 5  # the table's lines at least (its header, two rows) when the plots are asked for (`v`) in a short terminal


def status_text(loaded: Loaded, *, sort: str, bench: str, mix: bool, narrow: str, rows: tuple[int, int], marked: int,
                width: int) -> Text:
    """The line above the table: how many runs and rows, the view (benchmark, sort, failure mix, the
    filter with `rows` (shown, of)) and the keys, in one line of `width` (the gap `G` kept longest)."""
    board = loaded.board
    if not board.runs:
        unscored = f" ({len(board.unscored)} not scored: no turn got an answer)" if board.unscored else ""
        return fit_parts([(f"no finished runs in {loaded.selection.description or 'the store'}{unscored}",)], width, 1)
    parts: list[Forms] = [(f"{len(board.runs)} runs · {len(board.models)} rows",)]
    if mix:
        parts.append((Text("failure mix: failed turns per cause (m: the figures)", "bold"), Text("failure mix (m)", "bold")))
    if narrow:
        parts.append((f"filter “{narrow}”: {rows[0]} of {rows[1]} rows", f"{rows[0]}/{rows[1]} rows"))
    parts += [(f"benchmark: {bench} (b)", f"b: {bench}"), (f"sort: {sort} (s, S, click header)", f"s: {sort}"),
              ("enter: consistency", "enter: repeats", ""), ("space mark, = compare, G gap", "space mark, G gap", "G gap"),
              ("m: failure mix" if not mix else "", ""), ("f filter, / find", "")]
    if marked:
        parts.append((f"marked {marked} (= compares two)", f"marked {marked}"))
    return fit_parts(parts, width, 1, sep=" · ")


def window(room: int, need: list[int], fixed: int, first: int, one_bench: bool) -> tuple[list[int], int, bool]:
    """The columns in view (`fit.column_window`): the `fixed` (model, benchmark), then whole columns
    from `first` on. When not every column fits and every row shown has one benchmark (`one_bench`),
    its column (the second) is left out: the benchmark is said above the table with what the rows
    share. Returns (columns in view, the `first` used, whether the benchmark column is left out)."""
    visible, first = column_window(room, need, fixed, first)
    if not one_bench or len(visible) == len(need):
        return visible, first, False
    order = [0, *range(fixed, len(need))]
    shown, first = column_window(room, [need[i] for i in order], fixed - 1, first)
    return [order[i] for i in shown], first, True


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
    `plots`/`notes_open`: the user's choice (`v`, `n`), None to follow the room (plots asked for: the
    notes open only when the plots keep their room)."""
    table = 1 + ROW_LINES * rows  # its header line, then its rows
    left = room - table - (PLOT_ROOM if plots else 0)
    full = notes_open if notes_open is not None else left >= notes
    left -= notes if full else min(notes, 1)
    show = plots if plots is not None else left >= PLOT_ROOM
    if not show:
        return Placement(None, full, False)
    return Placement(max(min(table, table + left - (0 if plots else PLOT_ROOM)), TABLE_MIN), full, True)
