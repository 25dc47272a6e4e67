"""The gap between two leaderboard rows (`G`): B − A per figure with its interval and whether it
is more than noise, the turns left out and the turns that decide it (`widgets/pair_gap.py`)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from ...compare.gap import PairGap
from ...widgets.pair_gap import gap_report
from ..base import ArenaDialog


class GapDialog(ArenaDialog[bool]):
    """Dismissed with True when the pair's turns are asked for (`=`: compare them turn by turn)."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("equals_sign", "turns", "Turn by turn", show=False)]
    DEFAULT_CSS = """
    GapDialog #gap-pane { height: auto; max-height: 60vh; }
    GapDialog #gap { width: 1fr; height: auto; }
    """

    def __init__(self, pair: PairGap) -> None:
        super().__init__()
        self.pair = pair

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            with VerticalScroll(id="gap-pane"):
                yield Static(gap_report(self.pair), id="gap")
            with Horizontal(classes="buttons"):
                yield Button("Turn by turn (=)", id="turns")
                yield Button("Close", id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#close", Button).focus()

    @on(Button.Pressed, "#turns")
    def action_turns(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(False)
