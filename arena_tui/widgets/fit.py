"""Fitting table columns to the width a table has: the one rule both tables use.

Columns that must show always do; the others join in order of importance while they fit; one
column may stretch into (and be cut to) what is left, and goes when too little is left.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rich.text import Text

PAD = 2  # a DataTable cell's padding, both sides together


def fit_columns(width: int, need: list[int], order: list[int], required: int,
                stretch: int | None = None, min_stretch: int = 8, reserve: int = 0) -> dict[int, int]:
    """{column: width}, in column order, of the columns shown in `width` cells.

    `need` is each column's natural width; `order` ranks the non-stretching columns, the first
    `required` of them always shown; `stretch` takes the remaining room (at most its need), and
    `reserve` of it is kept for it before the optional columns join (a column that matters more
    than they do, but may be cut).
    """
    shown: dict[int, int] = {}
    used = 0
    hold = min(reserve, need[stretch]) + PAD if stretch is not None and reserve else 0
    for rank, col in enumerate(order):
        w = need[col] + PAD
        if rank < required or used + w + hold <= width:
            shown[col] = need[col]
            used += w
    if stretch is not None:
        left = width - used - PAD
        if left >= min(min_stretch, need[stretch]):
            shown[stretch] = min(need[stretch], left)
    return dict(sorted(shown.items()))


def hidden_text(labels: list[str], shown: dict[int, int], where: str) -> str:
    """`hidden at this width: executor (…)` for the columns `shown` leaves out ("" when none)."""
    hidden = [label for i, label in enumerate(labels) if i not in shown]
    return f"hidden at this width: {', '.join(hidden)} ({where})" if hidden else ""


def column_window(width: int, need: list[int], fixed: int, first: int) -> tuple[list[int], int]:
    """The columns a table scrolled by whole columns shows: the first `fixed` always, then the
    others from `first` on while they fit (one at least). `first` is pulled back while the last
    column is in view and an earlier one would still fit, so the window never ends in blank room.
    Returns (shown column indices, the `first` used)."""
    used = sum(w + PAD for w in need[:fixed])
    rest = list(range(fixed, len(need)))
    if not rest:
        return list(range(fixed)), 0
    first = max(0, min(first, len(rest) - 1))

    def run(start: int) -> list[int]:
        out: list[int] = []
        total = used
        for col in rest[start:]:
            if out and total + need[col] + PAD > width:
                break
            out.append(col)
            total += need[col] + PAD
        return out

    shown = run(first)
    while first > 0 and shown[-1] == rest[-1] and rest[first - 1] in run(first - 1):
        longer = run(first - 1)
        if longer[-1] != rest[-1]:
            break
        first, shown = first - 1, longer
    return list(range(fixed)) + shown, first


def cell_width(cell: Text | str) -> int:
    return cell.cell_len if isinstance(cell, Text) else len(cell)


def fit_cell(cell: Text | str, width: int) -> Text | str:
    """The cell cut to its column with "…" (only a stretching column is ever narrower than its cells)."""
    if cell_width(cell) <= width:
        return cell
    t = cell.copy() if isinstance(cell, Text) else Text(cell)
    t.truncate(width, overflow="ellipsis")
    return t


def fit_lines(cell: Text | str, width: int) -> Text:
    """A cell of one or more lines, each cut to `width` with "…"."""
    return Text("\n").join(as_text(fit_cell(line, width)) for line in as_text(cell).split("\n", allow_blank=True))


def lines_width(cell: Text | str) -> int:
    """The widest line of a cell."""
    return max((line.cell_len for line in as_text(cell).split("\n", allow_blank=True)), default=0)


def as_text(cell: Text | str) -> Text:
    """A cell as Text (DataTable cells are either)."""
    return cell if isinstance(cell, Text) else Text(cell)


def natural_widths(labels: Sequence[str], rows: Sequence[Sequence[Text | str]]) -> list[int]:
    return [max([len(label)] + [cell_width(r[i]) for r in rows]) for i, label in enumerate(labels)]


Forms = tuple[Text | str, ...]  # one part of a line, its forms longest first


def fit_parts(parts: list[Forms], width: int, lines: int, sep: str = "  ·  ") -> Text:
    """Parts joined by `sep` so they wrap into at most `lines` lines of `width` cells: while they
    do not, the part whose form is longest and has a shorter one takes it (a part is never cut;
    an empty form leaves the part out; what still does not fit is every part's last form)."""
    level = [0] * len(parts)

    def joined() -> Text:
        return Text(sep).join(t for p, i in zip(parts, level, strict=True) if (t := as_text(p[i])).plain)

    while len(textwrap.wrap(joined().plain, max(width, 1))) > lines:
        longer = [(as_text(p[i]).cell_len, n) for n, (p, i) in enumerate(zip(parts, level, strict=True)) if i + 1 < len(p)]
        if not longer:
            break
        level[max(longer)[1]] += 1
    return joined()
