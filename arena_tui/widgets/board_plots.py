"""Terminal plots of leaderboard rows (textual-plotext): latency per model, pass rate per category.

Latency is drawn as the report draws it: every turn one dot on its model's lane, p50 ◆ and
p95 ▲ marked, only turns the data layer counts (speed-1 runs). Pass rate per category is the
strict turn pass, one bar per model; the Wilson intervals are in the table and the report.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual_plotext import PlotextPlot

from ..compare.leaderboard import BoardRow

COLOURS = ["blue+", "red+", "green+", "orange+", "magenta+", "cyan+", "yellow+", "gray+"]


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
        lanes = list(reversed(rows))  # the first row on top
        ticks, labels = [], []
        for i, row in enumerate(lanes):
            ticks.append(i)
            labels.append(short(row.model))
            values = [v for f in row.runs for v in f.v2v]
            if not values or row.v2v is None:
                continue
            colour = COLOURS[rows.index(row) % len(COLOURS)]
            plt.scatter(values, [i] * len(values), marker="•", color=colour)
            plt.scatter([row.v2v.p50], [i + 0.3], marker="◆", color=colour)
            plt.scatter([row.v2v.p95], [i + 0.3], marker="▲", color=colour)
        plt.yticks(ticks, labels)
        plt.ylim(-0.6, max(len(lanes) - 0.4, 0.6))
        if not any(row.v2v for row in rows):
            plt.xlim(0, 1000)
            plt.text("no speed-1 latency in these rows", 500, (len(lanes) - 1) / 2 if lanes else 0, alignment="center")
        self.refresh()


class CategoryPlot(PlotextPlot):
    """Strict turn pass per category, one bar per model (rows not judged have no bars)."""

    def show(self, title: str, rows: Sequence[BoardRow]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        judged = [r for r in rows if r.judged and r.categories]
        cats = sorted({c for r in judged for c in r.categories})
        if not cats:
            plt.xlim(0, 1)
            plt.ylim(0, 100)
            plt.text("no categories (no benchmark data, or not judged)", 0.5, 50, alignment="center")
        else:
            series = [[100 * (r.categories[c].rate or 0) if c in r.categories else 0 for c in cats] for r in judged]
            plt.multiple_bar([short(c, 14) for c in cats], series, labels=[short(r.model) for r in judged],
                             color=[COLOURS[rows.index(r) % len(COLOURS)] for r in judged])  # fmt: skip
            plt.ylim(0, 100)
            plt.ylabel("strict pass %")
        self.refresh()
