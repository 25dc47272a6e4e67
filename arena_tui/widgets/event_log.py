"""Run events worth a human's attention, coloured by kind."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from .run_state import LogLine, RunState

MAX_LINES = 500
KIND_STYLE = {
    "overlap": "bold white on dark_red",
    "interruption": "bold yellow",
    "session_rotated": "bold magenta",
    "reconnected": "bold blue",
    "retry": "bold dark_orange",
    "error": "bold red",
    "run_ended": "bold cyan",
    "run_started": "cyan",
    "judgement": "italic",
    "turn_ended": "",
    "turn_started": "grey50",
    "session_opened": "blue",
}
KIND_TAG = {
    "overlap": "OVERLAP",
    "interruption": "INTERRUPT",
    "session_rotated": "ROTATION",
    "reconnected": "RECONNECT",
    "retry": "RETRY",
    "error": "ERROR",
}


def log_text(ln: LogLine) -> Text:
    t = Text()
    t.append(f"{ln.t_ms / 1000:7.2f}s ", "grey50")
    style = KIND_STYLE.get(ln.kind, "")
    tag = KIND_TAG.get(ln.kind)
    if tag:
        t.append(f" {tag} ", style)
        t.append(" " + ln.text)
    else:
        t.append(ln.text, style)
    return t


class EventLog(VerticalScroll):
    """The last lines of the run's log; re-rendered only when a line was added."""

    DEFAULT_CSS = "EventLog > Static { width: 1fr; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._key: tuple | None = None
        self._body = Static("", markup=False)
        self.follow = True

    def compose(self):
        yield self._body

    def refresh_from(self, state: RunState) -> None:
        key = (state.run_id, len(state.log))
        if key == self._key:
            return
        self._key = key
        lines = state.log[-MAX_LINES:]
        self._body.update(Text("\n").join(log_text(ln) for ln in lines) if lines else Text("(no events yet)", "grey50"))
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False)
