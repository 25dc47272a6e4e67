"""Fitting table columns to the width a table has: the one rule both tables use.

Columns that must show always do; the others join in order of importance while they fit; one
column may stretch into (and be cut to) what is left, and goes when too little is left.
"""

from __future__ import annotations

from rich.text import Text

PAD = 2  # a DataTable cell's padding, both sides together


def fit_columns(width: int, need: list[int], order: list[int], required: int,
                stretch: int | None = None, min_stretch: int = 8) -> dict[int, int]:
    """{column: width}, in column order, of the columns shown in `width` cells.

    `need` is each column's natural width; `order` ranks the non-stretching columns, the first
    `required` of them always shown; `stretch` takes the remaining room (at most its need).
    """
    shown: dict[int, int] = {}
    used = 0
    for rank, col in enumerate(order):
        w = need[col] + PAD
        if rank < required or used + w <= width:
            shown[col] = need[col]
            used += w
    if stretch is not None:
        left = width - used - PAD
        if left >= min(min_stretch, need[stretch]):
            shown[stretch] = min(need[stretch], left)
    return dict(sorted(shown.items()))


def cell_width(cell: Text | str) -> int:
    return cell.cell_len if isinstance(cell, Text) else len(cell)


def fit_cell(cell: Text | str, width: int) -> Text | str:
    """The cell cut to its column with "…" (only a stretching column is ever narrower than its cells)."""
    if cell_width(cell) <= width:
        return cell
    t = cell.copy() if isinstance(cell, Text) else Text(cell)
    t.truncate(width, overflow="ellipsis")
    return t


def natural_widths(labels: list[str], rows: list[tuple]) -> list[int]:
    return [max([len(label)] + [cell_width(r[i]) for r in rows]) for i, label in enumerate(labels)]
