"""Plots of leaderboard rows: latency per model (lanes of text), pass rate per category (bars).

Latency is drawn as the report draws it: every turn one dot on its model's lane, p50 ◆ and
p95 ▲ marked, only turns the data layer counts (speed-1 runs); a lane is a line of text, so a
point is on its own row's line at every size. Pass rate per category is the
strict turn pass, one bar per model and every category named (`CategoryBars`); the Wilson
intervals are in the table and the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from arena_tui.spine.labels import Label, label_rows

from ..compare.leaderboard import BoardRow

# RGB, so the legend line and the plots show the same colour for a model
COLOURS = [(96, 165, 250), (248, 113, 113), (52, 211, 153), (251, 191, 36), (192, 132, 252), (34, 211, 238),
           (244, 114, 182), (163, 230, 53)]  # fmt: skip


def colour(i: int) -> tuple[int, int, int]:
    return COLOURS[i % len(COLOURS)]


def legend(names: Sequence[Label], width: int = 0) -> Text:
    """`■1 model [its parts]` per row in its plot colour (the category bars head their columns `■1`):
    each row's label whole (`spine.labels`: what tells it apart; the header says what all share),
    lines broken between rows, never inside one (`width`: 0 for one line)."""
    t = Text()
    used = 0
    for i, name in enumerate(names):
        entry = f"■{i + 1} {name.text()}"
        if used and width and used + 3 + len(entry) > width:
            t.append("\n")
            used = 0
        elif used:
            t.append("   ")
            used += 3
        t.append(f"■{i + 1} ", "rgb({},{},{})".format(*colour(i)))
        t.append(entry.split(" ", 1)[1])
        used += len(entry)
    return t


#: a lane's markers: a turn, the row's p50 and p95 (drawn over the turns at their place)
TURN, P50, P95 = "•", "◆", "▲"
TICK_EVERY = 12  # cells between the axis' labelled ticks, at least
LANE_MIN = 8  # a lane's cells at least: past that a row's name is what gives way (never a part that tells it apart)


def nice_step(span: float, ticks: int) -> float:
    """A step of 1, 2 or 5 × 10^k that cuts `span` into about `ticks` parts."""
    raw = span / max(ticks, 1)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def lanes_text(title: str, rows: Sequence[BoardRow], width: int, names: Sequence[Label] | None = None) -> Text:
    """Voice-to-voice per turn, one text line per row (its lane), the row named at its left: every
    turn a dot on its own row's line, p50 ◆ and p95 ▲ on it too, in the row's legend colour; an
    axis in ms under the lanes. A row is one line of text, so a point can never land on another
    row's line whatever the width or height (a plotted y rounded to the nearest cell row could:
    at 120x40 a run's points sat on a text model's row). Only turns the data layer counts (speed-1
    runs); a row without any says `(none)` (the table says why). A row is named by its label
    (`names`, `spine.labels`: whole parts in a third of the width, those dropped named; the label's
    fixed parts are never cut, the lane is narrower instead)."""
    values = {k: [v for f in row.runs for v in f.v2v] for k, row in enumerate(rows)}
    every = [v for vs in values.values() for v in vs]
    labels = list(names) if names is not None else list(label_rows([r.naming for r in rows]).rows)
    label_w = max(min(max((len(n.text()) for n in labels), default=8), max(8, width // 3)), 4)
    label_w = min(max([label_w, *(n.narrowest for n in labels)]), max(width - LANE_MIN - 3, 4))
    shown = [n.fit(label_w) for n in labels]
    lane_w = max(width - label_w - 3, 8)  # " │" before the lane, "│" after
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(title + "\n", "bold")
    out.append(f"voice-to-voice ms (speed-1 runs) · {TURN} a turn  {P50} p50  {P95} p95\n", "grey62")
    lo, hi, step = 0.0, 1.0, 1.0
    if every:  # the axis spans the points (a little room at each end); ticks at round values inside it
        pad = max((max(every) - min(every)) * 0.03, 10.0)
        lo, hi = max(min(every) - pad, 0.0), max(every) + pad
        step = nice_step(hi - lo, max(lane_w // TICK_EVERY, 1))

    def col(v: float) -> int:
        return min(max(round((v - lo) / (hi - lo) * (lane_w - 1)), 0), lane_w - 1)

    for k, row in enumerate(rows):
        style = "rgb({},{},{})".format(*colour(k))
        out.append(cut(shown[k], label_w).rjust(label_w) + " │", style)
        lane = [" "] * lane_w
        if values[k] and row.v2v is not None:
            for v in values[k]:
                lane[col(v)] = TURN
            p50, p95 = col(row.v2v.p50), col(row.v2v.p95)
            if p95 == p50:  # one cell for both: p95 beside it (one cell is 1/lane_w of the axis), both seen
                p50, p95 = (p50, p95 + 1) if p95 + 1 < lane_w else (p50 - 1, p95)
            lane[p50], lane[p95] = P50, P95
            out.append("".join(lane), style)
        else:
            out.append("(none)".ljust(lane_w), "grey50")
        out.append("│\n", "grey50")
    axis = [" "] * lane_w
    tick_labels = [" "] * (lane_w + 1)
    if every:
        tick, last_end = math.ceil(lo / step) * step, -2
        while tick <= hi:
            c = col(tick)
            axis[c] = "┬"
            text = f"{tick:,.0f}"
            at = max(c - len(text) // 2, 0)
            if at > last_end + 1 and at + len(text) <= len(tick_labels):
                tick_labels[at: at + len(text)] = list(text)
                last_end = at + len(text)
            tick += step
    out.append(" " * label_w + " └" + "".join("─" if a == " " else a for a in axis) + "┘\n", "grey50")
    out.append(" " * (label_w + 2) + ("".join(tick_labels).rstrip() if every else "no turn of these rows counts for latency"),
               "grey50")
    return out


def cut(text: str, width: int) -> str:
    """Only where even a label's fixed parts do not fit a lane's room (a very narrow plot)."""
    return text if len(text) <= width else text[: width - 1] + "…"


class LatencyPlot(Static):
    """Voice-to-voice per turn, one lane (a line of text) per row: `lanes_text`, drawn for its width."""

    def on_resize(self) -> None:
        if getattr(self, "_shown", None) is not None:
            self.show(*self._shown)

    def show(self, title: str, rows: Sequence[BoardRow], names: Sequence[Label] | None = None) -> None:
        self._shown = (title, rows, names)
        self.update(lanes_text(title, rows, self.size.width or self.app.size.width // 2, names))


class CategoryBars(Static):
    """Strict turn pass per category: one line per category, named in full, one bar and figure per
    model in its legend colour (rows not judged have none). A table of bars, not a plotext chart:
    a chart's axis had room to name 5 of 13 categories.

    Fitted to its width: the figure is never cut; the bars get shorter, then go (figures alone),
    then the category names are cut, and only then do models go, named under the table. A column
    is headed `■1` in its colour: the legend names the row whole (a name cut to a bar's width was
    every row's `sim [si…`)."""

    BARS = (4, 2, 0)  # cells of a full (100 %) bar, as the width allows
    CATEGORY_MIN = 8

    def on_resize(self) -> None:
        if getattr(self, "_shown", None) is not None:
            self.show(*self._shown)

    def show(self, title: str, rows: Sequence[BoardRow], names: Sequence[Label] | None = None) -> None:
        self._shown = (title, rows, names)
        labels = list(names) if names is not None else list(label_rows([r.naming for r in rows]).rows)
        judged = [(i, r) for i, r in enumerate(rows) if r.judged and r.categories]
        cats = sorted({c for _, r in judged for c in r.categories})
        width = self.size.width or self.app.size.width // 2
        cat_w, cells, shown = bars_layout(width, max((len(c) for c in cats), default=8), len(judged))
        table = Table(title=title, title_justify="left", box=None, padding=(0, 1, 0, 0), show_edge=False,
                      title_style="bold")
        table.add_column("category", style="grey62", no_wrap=True, overflow="ellipsis", width=cat_w)
        for i, r in judged[:shown]:
            table.add_column(Text(f"■{i + 1}", "rgb({},{},{})".format(*colour(i))), no_wrap=True, overflow="ellipsis",
                             width=bar_width(cells), justify="right" if not cells else "left")
        for c in cats:
            table.add_row(c, *(bar(r.categories[c].rate if c in r.categories else None, colour(i), cells)
                               for i, r in judged[:shown]))  # fmt: skip
        out: list = [table] if cats else [Text(title, "bold"), Text("no categories (no benchmark data, or not judged)", "grey50")]
        if shown < len(judged):
            left = ", ".join(f"■{i + 1} {labels[i].text()}" for i, _ in judged[shown:])
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
