"""Plots of leaderboard rows: latency per model (textual-plotext), pass rate per category (bars).

Latency is drawn as the report draws it: every turn one dot on its model's lane, p50 ◆ and
p95 ▲ marked, only turns the data layer counts (speed-1 runs). Pass rate per category is the
strict turn pass, one bar per model and every category named (`CategoryBars`); the Wilson
intervals are in the table and the report.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static
from textual_plotext import PlotextPlot

from ..compare.leaderboard import BoardRow

# RGB, so the legend line (Rich) and the plots (plotext) show the same colour for a model
COLOURS = [(96, 165, 250), (248, 113, 113), (52, 211, 153), (251, 191, 36), (192, 132, 252), (34, 211, 238),
           (244, 114, 182), (163, 230, 53)]  # fmt: skip


def colour(i: int) -> tuple[int, int, int]:
    return COLOURS[i % len(COLOURS)]


def legend(rows: Sequence[BoardRow]) -> Text:
    """`■ model` per row in its plot colour (plotext's own legend box would hide the bars under it)."""
    t = Text()
    for i, row in enumerate(rows):
        t.append("■ ", "rgb({},{},{})".format(*colour(i)))
        t.append(row.model + "   ")
    return t


def short(label: str, n: int = 22) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


class LatencyPlot(PlotextPlot):
    """Voice-to-voice per turn, one lane per model."""

    def show(self, title: str, rows: Sequence[BoardRow]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        plt.xlabel("voice-to-voice ms (speed-1 runs; ◆ p50 ▲ p95)")
        lanes = list(reversed(range(len(rows))))  # the first row on top
        every = [v for row in rows for f in row.runs for v in f.v2v]
        ticks, labels = [], []
        for y, k in enumerate(lanes):
            row = rows[k]
            ticks.append(y)
            values = [v for f in row.runs for v in f.v2v]
            labels.append(short(row.model) + ("" if values else " (none)"))  # the table says why
            if not values or row.v2v is None:
                continue
            plt.scatter(values, [y] * len(values), marker="•", color=colour(k))
            plt.scatter([row.v2v.p50], [y + 0.3], marker="◆", color=colour(k))
            plt.scatter([row.v2v.p95], [y + 0.3], marker="▲", color=colour(k))
        plt.yticks(ticks, labels)
        plt.ylim(-0.6, max(len(lanes) - 0.4, 0.6))
        if not every:
            plt.xlim(0, 1000)
        self.refresh()


class CategoryBars(Static):
    """Strict turn pass per category: one line per category, named in full, one bar and figure per
    model in its legend colour (rows not judged have none). A table of bars, not a plotext chart:
    a chart's axis had room to name 5 of 13 categories.

    Fitted to its width: the figure is never cut; the bars get shorter, then go (figures alone),
    then the category names are cut, and only then do models go, named under the table."""

    BARS = (4, 2, 0)  # cells of a full (100 %) bar, as the width allows
    CATEGORY_MIN = 8

    def on_resize(self) -> None:
        if getattr(self, "_shown", None) is not None:
            self.show(*self._shown)

    def show(self, title: str, rows: Sequence[BoardRow]) -> None:
        self._shown = (title, rows)
        judged = [(i, r) for i, r in enumerate(rows) if r.judged and r.categories]
        cats = sorted({c for _, r in judged for c in r.categories})
        width = self.size.width or self.app.size.width // 2
        cat_w, cells, shown = bars_layout(width, max((len(c) for c in cats), default=8), len(judged))
        table = Table(title=title, title_justify="left", box=None, padding=(0, 1, 0, 0), show_edge=False,
                      title_style="bold")
        table.add_column("category", style="grey62", no_wrap=True, overflow="ellipsis", width=cat_w)
        for i, r in judged[:shown]:
            table.add_column(Text(r.model, "rgb({},{},{})".format(*colour(i))), no_wrap=True, overflow="ellipsis",
                             width=bar_width(cells), justify="right" if not cells else "left")
        for c in cats:
            table.add_row(c, *(bar(r.categories[c].rate if c in r.categories else None, colour(i), cells)
                               for i, r in judged[:shown]))  # fmt: skip
        out: list = [table] if cats else [Text(title, "bold"), Text("no categories (no benchmark data, or not judged)", "grey50")]
        if shown < len(judged):
            left = ", ".join(r.model for _, r in judged[shown:])
            out.append(Text(f"not shown at this width: {left}", "yellow"))
        self.update(Group(*out))


def bar_width(cells: int) -> int:
    """A model's column: its bar, a space, the figure (` 100`)."""
    return cells + 4 if cells else 4


def bars_layout(width: int, longest: int, models: int) -> tuple[int, int, int]:
    """(category column width, bar cells, models shown) for `models` columns in `width` cells."""
    for cells in CategoryBars.BARS:
        need = bar_width(cells) + 1
        cat_w = min(longest, max(CategoryBars.CATEGORY_MIN, width - models * need - 1))
        if cat_w + 1 + models * need <= width:
            return cat_w, cells, models
    cat_w = CategoryBars.CATEGORY_MIN
    return cat_w, 0, max(1, (width - cat_w - 1) // (bar_width(0) + 1))


def bar(rate: float | None, rgb: tuple[int, int, int], cells: int) -> Text:
    """`━━╸  50` (a line in half cells, thin so the lines of the categories stay apart, then the
    percentage; `cells` 0: the percentage alone, in the model's colour), or `–` without a figure."""
    if rate is None:
        return Text("–", "grey50")
    style = "rgb({},{},{})".format(*rgb)
    if not cells:
        return Text(f"{100 * rate:4.0f}", style)
    halves = round(rate * cells * 2)
    drawn = "━" * (halves // 2) + ("╸" if halves % 2 else "")
    return Text.assemble((drawn.ljust(cells), style), f"{100 * rate:4.0f}")
