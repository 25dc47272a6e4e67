"""Level meters in dBFS for the user and bot tracks, with speaking and overlap indicators.

The meters repaint up to 20 times a second while audio plays, on the same event loop that paces
the engine's input, so a repaint must cost microseconds, not milliseconds: they draw through
Textual's line API from a few pre-styled segments (no rich Text → Content conversion, no
per-cell spans) and redraw only when what they show changed.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from ..run_view import Meter, RunState

FLOOR_DBFS = -60.0
LABEL_WIDTH = 24  # "● user " before the bar, " -40 dBFS" after it, and some slack
LINES = 3  # user, bot, overlap


def _frac(dbfs: float) -> float:
    return (max(dbfs, FLOOR_DBFS) - FLOOR_DBFS) / -FLOOR_DBFS


def bar_cells(meter: Meter, width: int) -> list[tuple[str, str]]:
    """(character, style) per cell of a bar proportional to RMS on -60..0 dBFS, with a peak tick.

    Cells are green up to 70 % of the scale, yellow to 90 %, red above; empty cells are dots.
    """
    width = max(width, 4)
    filled = round(_frac(meter.rms_dbfs) * width)
    peak_at = min(width - 1, round(_frac(meter.peak_dbfs) * (width - 1))) if meter.peak_dbfs > FLOOR_DBFS else -1
    cells: list[tuple[str, str]] = []
    for i in range(width):
        zone = "green" if i < width * 0.7 else ("yellow" if i < width * 0.9 else "red")
        if i < filled:
            cells.append(("█", zone))
        elif i == peak_at:
            cells.append(("▏", zone))
        else:
            cells.append(("·", "grey30"))
    return cells


def db_label(meter: Meter) -> str:
    return "  -∞" if meter.rms_dbfs <= FLOOR_DBFS else f"{meter.rms_dbfs:4.0f}"


def meter_lines(state: RunState | None, width: int) -> list[list[tuple[str, str]]]:
    """The widget's lines as (text, style) runs: what it shows, independent of how it is drawn."""
    if state is None:
        return [[("no run", "")]]
    bar_w = max(width - LABEL_WIDTH, 8)
    lines: list[list[tuple[str, str]]] = []
    for who, label in (("user", "user"), ("bot", "bot ")):
        m = state.shown_meter(who)
        line = [("● ", "bold green") if m.speaking else ("○ ", "grey50"), (f"{label} ", "bold")]
        line += bar_cells(m, bar_w)
        line.append((f" {db_label(m)} dBFS", ""))
        lines.append(line)
    if state.overlapping:
        lines.append([(" ⚠ OVERLAP: both speaking", "bold white on dark_red")])
    elif state.meters["user"].speaking and state.meters["bot"].speaking:
        lines.append([(" ⚠ both speaking", "bold yellow")])
    return lines


def meter_key(state: RunState | None, width: int) -> tuple:
    """What the meters show, at the resolution they show it (1 dB, a cell): equal keys, same picture."""
    if state is None:
        return (None, width)
    u, b = state.shown_meter("user"), state.shown_meter("bot")
    return (round(u.rms_dbfs), round(u.peak_dbfs), u.speaking, round(b.rms_dbfs), round(b.peak_dbfs), b.speaking,
            state.overlapping, width)


class LevelMeters(Widget):
    """Two meters (user, bot); repainted by the screen's coalescing timer, not per level event.

    `refresh_from` is cheap to call on every tick: it compares what would be shown with what is
    shown and asks for a repaint only when they differ (`repaints` counts those, for benchmarks).
    """

    DEFAULT_CSS = """
    LevelMeters { height: 4; padding: 0 1; }
    """

    def __init__(self, state: RunState | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state = state
        self._last: tuple | None = None
        self._strips: list[Strip] | None = None
        self._strips_key: tuple | None = None
        self._styles: dict[str, Style] = {}
        self.repaints = 0

    def refresh_from(self, state: RunState) -> None:
        self.state = state
        key = meter_key(state, self.size.width)
        if key != self._last:
            self._last = key
            self.repaints += 1
            # the content lines only: a plain refresh() would also redraw the border and its title,
            # which costs more than the meters themselves
            self.refresh(Region(0, 0, self.size.width, self.size.height))

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.rich_style + Style.parse(name) if name else self.rich_style
        return style

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()  # the base colours changed (theme switch)
        self._strips = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        key = (meter_key(self.state, width), id(self.state))
        if self._strips is None or key != self._strips_key:
            self._strips_key = key
            # not padded here: the styles cache pads each line to the content width with the background
            self._strips = [
                Strip([Segment(text, self._style(style)) for text, style in line])
                for line in meter_lines(self.state, width)
            ]
        return self._strips[y] if y < len(self._strips) else Strip([])
