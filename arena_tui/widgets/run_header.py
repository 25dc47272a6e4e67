"""One-line summary of a run: what, who, where it is, and how it is going.

The line is built for the width it gets: the status, the mode and the judge label sit at the
right in a fixed-width block (the longest status sets it), so they never run into each other or
fall off a narrow terminal; the descriptive part on the left is what gets shortened (with "…").
"""

from __future__ import annotations

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from arena_tui.spine.times import duration_text
from ..run_view import RunState

STATUS_STYLE = {
    "running": "bold green",
    "starting": "yellow",
    "completed": "bold cyan",
    "interrupted": "bold yellow",
    "failed": "bold red",
}
STATUS_WIDTH = max(len(s) for s in STATUS_STYLE)
GAP = "  "


def elapsed_text(state: RunState) -> Text:
    """Wall-clock time since the start; the audio timeline beside it, labelled, when it ran faster."""
    t = Text(f"elapsed {duration_text(state.elapsed_ms())}")
    if state.speed not in (1.0, None):
        t.append(f" (audio {duration_text(state.last_ms)})", "grey62")
    return t


def describe(state: RunState, room: int | None = None) -> Text:
    """The left part: benchmark, model, session, elapsed (wall clock), turn progress.

    With `room`, the parts that matter least go first until the rest fits (session, then model,
    then the benchmark name): where the run is (turn, elapsed) is what a narrow terminal keeps.
    """
    cur = state.current_turn
    cur_s = "greeting" if cur == -1 else (str(cur) if cur is not None else "–")
    model = Text(state.model_label, "bold magenta" if state.source else "bold")
    session = Text(f"session {state.session}")
    if state.rotations:
        session.append(f" ({state.rotations} rotation{'s' if state.rotations != 1 else ''})", "yellow")
    # (drop rank, text): the highest rank goes first when the line is too long
    parts = [
        (2, Text(f" {state.benchmark} ", "bold reverse")),
        (1, Text.assemble("model ", model)),
        (0, session),
        (4, elapsed_text(state)),
        (3, Text(f"turn {cur_s} · {state.turns_done}/{state.turns_total} done")),
    ]
    wait = state.wait_line() if state.ended is None else None
    if wait:  # where the run is when nothing moves: what the engine waits on, how long is left
        parts.append((4, Text(wait, "bold yellow")))
    rank = 0
    while True:
        t = Text(no_wrap=True, overflow="ellipsis")
        for i, (_, part) in enumerate(p for p in parts if p[0] >= rank):
            if i:
                t.append("  ")
            t.append_text(part)
        if room is None or t.cell_len <= room or rank > 2:
            return t
        rank += 1


def status_block(state: RunState, mode: str = "live") -> Text:
    """The right part: status (padded to the widest status), mode, judge; each set off by a gap."""
    t = Text(no_wrap=True)
    t.append(GAP)
    t.append(state.status.upper().ljust(STATUS_WIDTH), STATUS_STYLE.get(state.status, "bold"))
    if mode != "live":
        t.append(f"{GAP}[{mode}]", "bold blue")
    if state.any_heuristic:
        t.append(f"{GAP}judge: heuristic", "italic yellow")
    elif state.judges:
        t.append(f"{GAP}judge: {', '.join(sorted(state.judges))}", "italic")
    t.append(" ")
    return t


def header_text(state: RunState, mode: str = "live", width: int | None = None) -> Text:
    """The whole line; with `width`, the left part is cut (…) so the right block always fits."""
    right = status_block(state, mode)
    left = describe(state, width - right.cell_len if width else None)
    if width is not None and width > 0:
        room = width - right.cell_len
        if room < 8:  # too narrow for both: the status block alone, cut at the edge
            right.truncate(width, overflow="ellipsis")
            return right
        if left.cell_len > room:
            left.truncate(room, overflow="ellipsis")
        else:
            left.pad_right(room - left.cell_len)  # status block flush right, always at one place
    return Text.assemble(left, right, no_wrap=True)


class RunHeader(Static):
    DEFAULT_CSS = "RunHeader { height: 1; background: $boost; }"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._args: tuple[RunState, str] | None = None

    def refresh_from(self, state: RunState, mode: str = "live") -> None:
        self._args = (state, mode)
        self.update(header_text(state, mode, self.size.width or None), layout=False)  # always one line

    def on_resize(self, event: Resize) -> None:
        if self._args is not None:
            self.update(header_text(*self._args, event.size.width or None), layout=False)
