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
    """One line; a retry's marker stands on its own, and a reply that stopped short says so, so the
    attempts of a turn never read as one continuous answer."""
    t = Text()
    t.append(f"{ln.t_ms / 1000:7.2f}s ", "grey50")
    turn = "G" if ln.turn == -1 else ("" if ln.turn is None else str(ln.turn))
    t.append(f"{turn:>3} ", "grey50")
    if ln.role == "attempt":
        t.append(f"── {ln.text} ──", "bold yellow")
        return t
    label, style = ROLE_STYLE.get(ln.role, (ln.role[:5].ljust(5), "bold"))
    t.append(label, style)
    attempt = getattr(ln, "attempt", 0)
    if attempt and ln.role in ("user", "assistant"):
        t.append(f"[a{attempt + 1}] ", "yellow")
    body_style = "bold red" if ln.role == "sentinel" else ("" if ln.final else "italic")
    cut = getattr(ln, "cut", None)
    t.append(ln.text, body_style)
    if cut:
        t.append(f"… [cut off: {cut}]", "bold red")
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
        key = (len(lines), tuple((len(ln.text), ln.final, getattr(ln, "cut", None)) for ln in lines[-3:]), turn)
        if key == self._key:
            return
        self._key = key
        out = Text("\n").join(line_text(ln) for ln in lines) if lines else Text("(no transcript yet)", "grey50")
        self._body.update(out)
        if self.follow:
            self.call_after_refresh(self.scroll_end, animate=False)
