"""The conversation as it streams: user and assistant text with times, tool calls inline."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from .run_state import RunState, TranscriptLine

ROLE_STYLE = {
    "user": ("user ", "bold cyan"),
    "assistant": ("bot  ", "bold green"),
    "tool": ("tool ", "bold magenta"),
    "result": ("  ↳  ", "magenta"),
    "sentinel": ("!!!  ", "bold red"),
}
MAX_LINES = 400


def line_text(ln: TranscriptLine) -> Text:
    label, style = ROLE_STYLE.get(ln.role, (ln.role[:5].ljust(5), "bold"))
    t = Text()
    t.append(f"{ln.t_ms / 1000:7.2f}s ", "grey50")
    turn = "G" if ln.turn == -1 else ("" if ln.turn is None else str(ln.turn))
    t.append(f"{turn:>3} ", "grey50")
    t.append(label, style)
    body_style = "bold red" if ln.role == "sentinel" else ("" if ln.final else "italic")
    t.append(ln.text, body_style)
    if not ln.final and ln.role in ("user", "assistant"):
        t.append(" ▌", "blink")
    return t


class TranscriptView(VerticalScroll):
    """Follows the end while `follow` is on; otherwise stays where the user scrolled."""

    DEFAULT_CSS = "TranscriptView > Static { width: 1fr; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.follow = True
        self._key: tuple | None = None
        self._body = Static("", markup=False)

    def compose(self):
        yield self._body

    def refresh_from(self, state: RunState, turn: int | None = None) -> None:
        lines = [ln for ln in state.transcript if turn is None or ln.turn == turn][-MAX_LINES:]
        key = (len(lines), tuple((len(ln.text), ln.final) for ln in lines[-3:]), turn)
        if key == self._key:
            return
        self._key = key
        out = Text("\n").join(line_text(ln) for ln in lines) if lines else Text("(no transcript yet)", "grey50")
        self._body.update(out)
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False)
