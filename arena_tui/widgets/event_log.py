"""Run events worth a human's attention, coloured by kind."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypedDict, Unpack

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..run_view import LogLine, RunState

MAX_LINES = 500
KIND_STYLE = {
    "overlap": "bold white on dark_red",
    "interruption": "bold yellow",
    "duplex": "bold cyan",
    "session_rotated": "bold magenta",
    "reconnected": "bold blue",
    "retry": "bold dark_orange",
    "waiting": "bold yellow",
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
    "duplex": "DUPLEX",
    "session_rotated": "ROTATION",
    "reconnected": "RECONNECT",
    "retry": "RETRY",
    "waiting": "WAIT",
    "error": "ERROR",
}


def log_parts(ln: LogLine) -> tuple[Text, Text]:
    """(time stamp, what happened): the stamp stands alone, so wrapped text is indented past it."""
    t = Text()
    style = KIND_STYLE.get(ln.kind, "")
    tag = KIND_TAG.get(ln.kind)
    if tag:
        t.append(f" {tag} ", style)
        t.append(" " + ln.text)
    else:
        t.append(ln.text, style)
    return Text(f"{ln.t_ms / 1000:7.2f}s ", "grey50"), t


class Hanging:
    """Lines of (prefix, body) whose wrapped continuations start under the body, not the prefix."""

    def __init__(self, rows: list[tuple[Text, Text]]) -> None:
        self.rows = rows

    def __str__(self) -> str:
        return "\n".join(p.plain + b.plain for p, b in self.rows)

    def _grid(self) -> Table:
        grid = Table.grid(expand=True)
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        for prefix, body in self.rows:
            grid.add_row(prefix, body)
        return grid

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._grid()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self._grid())


class WidgetOptions(TypedDict, total=False):
    """What a container widget is given besides its own arguments (Textual's keywords)."""

    name: str | None
    id: str | None
    classes: str | None
    disabled: bool


class BlockText(VerticalScroll):
    """A growing list of lines shown as blocks of BLOCK lines, one Static each.

    One Static holding every line is re-wrapped and re-measured whole on every change, which
    with a few hundred lines holds the event loop for tens of milliseconds (and the engine's
    pacing with it). Here a new or changed line re-renders only its own block; block boundaries
    sit at fixed line numbers, and old lines are dropped a whole block at a time, so the blocks
    before a change never move.
    """

    BLOCK = 16
    DEFAULT_CSS = "BlockText > Static { width: 1fr; }"

    def __init__(self, empty: Text, max_lines: int, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(**kwargs)
        self._follow = True
        self.max_lines = max_lines
        self._empty = empty
        self._blocks: dict[int, tuple[tuple, Static]] = {}  # block number -> (line keys, widget)
        self._placeholder = Static(empty, markup=False)

    def compose(self):
        yield self._placeholder

    @property
    def follow(self) -> bool:
        return self._follow

    @follow.setter
    def follow(self, on: bool) -> None:
        """Following anchors the view to the end: it stays there as lines come in, whenever the
        layout settles (a scroll to the end right after a change can land on the old end), until
        the user scrolls up; scrolling back down follows again."""
        if on != self._follow:
            self._follow = on
            if not on:
                self.anchor(False)
            elif self.is_mounted:
                self._engage()

    def _engage(self) -> None:
        # only once the lines overflow: an anchored view shorter than its box is drawn at the bottom
        if self._follow and not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    def watch_virtual_size(self) -> None:
        # the layout has settled on new content: the moment the lines first overflow (a check
        # right after the change can run before the layout and see nothing to scroll); after
        # this refresh, when the container's size is current too
        self.call_after_refresh(self._engage)

    def show(self, count: int, key: Callable[[int], Hashable], render: Callable[[int], tuple[Text, Text]]) -> None:
        """Show lines 0..count-1 (or the newest ~max_lines of them).

        `key(i)` must change whenever line i's looks change; `render(i)` (prefix, body) is called
        only then.
        """
        if count <= 0:
            self._clear()
            return
        first = max(0, count - self.max_lines) // self.BLOCK
        last = (count - 1) // self.BLOCK
        for b in [b for b in self._blocks if b < first or b > last]:
            self._blocks.pop(b)[1].remove()
        self._placeholder.display = False
        for b in range(first, last + 1):
            lines = range(b * self.BLOCK, min(count, (b + 1) * self.BLOCK))
            keys = tuple(key(i) for i in lines)
            have = self._blocks.get(b)
            if have is not None and have[0] == keys:
                continue
            body = Hanging([render(i) for i in lines])
            if have is None:
                widget = Static(body, markup=False)
                self._blocks[b] = (keys, widget)
                self.mount(widget)
            else:
                self._blocks[b] = (keys, have[1])
                have[1].update(body)

    def _clear(self) -> None:
        if not self._blocks and self._placeholder.display:
            return
        for _, widget in self._blocks.values():
            widget.remove()
        self._blocks.clear()
        self.anchor(False)  # anchored again once the new lines overflow
        self._placeholder.display = True

    @property
    def blocks(self) -> Sequence[Static]:
        """The block widgets in line order (for tests and exports)."""
        return [w for _, (_, w) in sorted(self._blocks.items())]


class EventLog(BlockText):
    """The last lines of the run's log; only the block a new line lands in is re-rendered."""

    def __init__(self, **kwargs: Unpack[WidgetOptions]) -> None:
        super().__init__(Text("(no events yet)", "grey50"), MAX_LINES, **kwargs)
        self._state: RunState | None = None

    def refresh_from(self, state: RunState) -> None:
        if state is not self._state:  # another run, or a replay step rebuilt the state
            self._state = state
            self._clear()
        log = state.log
        # log lines are appended, never edited: a line's identity says whether it is still the same
        self.show(len(log), lambda i: id(log[i]), lambda i: log_parts(log[i]))
