"""The conversation as it streams: user and assistant text with times, tool calls inline."""

from __future__ import annotations

from rich.text import Text

from ..run_view import RunState, TranscriptLine
from .event_log import BlockText

ROLE_STYLE = {
    "user": ("user ", "bold cyan"),
    "assistant": ("bot  ", "bold green"),
    "tool": ("tool ", "bold magenta"),
    "result": ("  ↳  ", "magenta"),
    "sentinel": ("!!!  ", "bold red"),
}
MAX_LINES = 400


def line_parts(ln: TranscriptLine) -> tuple[Text, Text]:
    """(time, turn and speaker; what was said): a retry's marker stands on its own, and a reply that
    stopped short says so, so the attempts of a turn never read as one continuous answer."""
    head = Text()
    head.append(f"{ln.t_ms / 1000:7.2f}s ", "grey50")
    turn = "G" if ln.turn == -1 else ("" if ln.turn is None else str(ln.turn))
    head.append(f"{turn:>3} ", "grey50")
    t = Text()
    if ln.role == "attempt":
        t.append(f"── {ln.text} ──", "bold yellow")
        return head, t
    label, style = ROLE_STYLE.get(ln.role, (ln.role[:5].ljust(5), "bold"))
    head.append(label, style)
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
    return head, t


def line_text(ln: TranscriptLine) -> Text:
    return Text.assemble(*line_parts(ln))


class TranscriptView(BlockText):
    """Follows the end while `follow` is on; otherwise stays where the user scrolled.

    Only the block of lines a delta lands in is re-rendered (see BlockText): re-wrapping the whole
    transcript on every streamed word held the event loop for tens of milliseconds in long runs.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(Text("(no transcript yet)", "grey50"), MAX_LINES, **kwargs)
        self._source: tuple[RunState, int | None] | None = None

    def refresh_from(self, state: RunState, turn: int | None = None) -> None:
        if self._source is None or self._source[0] is not state or self._source[1] != turn:
            self._source = (state, turn)
            self._clear()
        lines = state.transcript if turn is None else [ln for ln in state.transcript if ln.turn == turn]
        self.show(
            len(lines),
            lambda i: (id(lines[i]), len(lines[i].text), lines[i].final, getattr(lines[i], "cut", None)),
            lambda i: line_parts(lines[i]),
        )
