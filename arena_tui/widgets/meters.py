"""Level meters in dBFS for the user and bot tracks, with speaking and overlap indicators."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from .run_state import Meter, RunState

FLOOR_DBFS = -60.0


def meter_bar(meter: Meter, width: int) -> Text:
    """A bar proportional to RMS on a -60..0 dBFS scale, with a peak tick."""
    width = max(width, 4)
    frac = (max(meter.rms_dbfs, FLOOR_DBFS) - FLOOR_DBFS) / -FLOOR_DBFS
    peak = (max(meter.peak_dbfs, FLOOR_DBFS) - FLOOR_DBFS) / -FLOOR_DBFS
    filled = round(frac * width)
    peak_at = min(width - 1, round(peak * (width - 1)))
    text = Text()
    for i in range(width):
        style = "green" if i < width * 0.7 else ("yellow" if i < width * 0.9 else "red")
        if i < filled:
            text.append("█", style)
        elif i == peak_at and meter.peak_dbfs > FLOOR_DBFS:
            text.append("▏", style)
        else:
            text.append("·", "grey30")
    return text


class LevelMeters(Widget):
    """Two meters (user, bot); repainted by the screen's coalescing timer, not per level event."""

    DEFAULT_CSS = """
    LevelMeters { height: 4; padding: 0 1; }
    """

    def __init__(self, state: RunState | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state = state
        self._last: tuple | None = None

    def refresh_from(self, state: RunState) -> None:
        self.state = state
        u, b = state.meters["user"], state.meters["bot"]
        key = (round(u.rms_dbfs), round(u.peak_dbfs), u.speaking, round(b.rms_dbfs), round(b.peak_dbfs), b.speaking,
               state.overlapping, self.size.width)
        if key != self._last:
            self._last = key
            self.refresh()

    def render(self) -> Text:
        if self.state is None:
            return Text("no run")
        bar_w = max(self.size.width - 24, 8)
        out = Text()
        for who, label in (("user", "user"), ("bot", "bot ")):
            m = self.state.meters[who]
            dot = Text("● ", "bold green") if m.speaking else Text("○ ", "grey50")
            out.append_text(dot)
            out.append(f"{label} ", "bold")
            out.append_text(meter_bar(m, bar_w))
            db = "  -∞" if m.rms_dbfs <= FLOOR_DBFS else f"{m.rms_dbfs:4.0f}"
            out.append(f" {db} dBFS\n")
        if self.state.overlapping:
            out.append(" ⚠ OVERLAP: user and bot speaking at once", "bold white on dark_red")
        elif self.state.meters["user"].speaking and self.state.meters["bot"].speaking:
            out.append(" ⚠ both speaking", "bold yellow")
        return out
