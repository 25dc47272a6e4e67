"""Terminal plots of leaderboard rows (textual-plotext): latency per model, pass rate per category.

Latency is drawn as the report draws it: every turn one dot on its model's lane, p50 ◆ and
p95 ▲ marked, only turns the data layer counts (speed-1 runs). Pass rate per category is the
strict turn pass, one bar per model; the Wilson intervals are in the table and the report.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
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


class CategoryPlot(PlotextPlot):
    """Strict turn pass per category, one bar per model (rows not judged have no bars)."""

    def show(self, title: str, rows: Sequence[BoardRow]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        judged = [(i, r) for i, r in enumerate(rows) if r.judged and r.categories]
        cats = sorted({c for _, r in judged for c in r.categories})
        if not cats:
            plt.xlim(0, 1)
            plt.ylim(0, 100)
            plt.text("no categories (no benchmark data, or not judged)", 0.5, 50, alignment="center", color="gray")
        else:
            series = [[100 * (r.categories[c].rate or 0) if c in r.categories else 0 for c in cats] for _, r in judged]
            plt.multiple_bar([short(c, 14) for c in cats], series, color=[colour(i) for i, _ in judged], width=0.6)
            plt.ylim(0, 100)
            plt.yticks([0, 25, 50, 75, 100])
            plt.ylabel("strict pass %")
        self.refresh()
