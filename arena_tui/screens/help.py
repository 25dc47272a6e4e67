"""Every key of every screen, read from the screens' own BINDINGS so it cannot go stale."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .campaigns import CampaignScreen, CampaignsScreen
from .compare import CompareScreen
from .consistency import ConsistencyScreen
from .leaderboard import LeaderboardScreen
from .replay import ReplayScreen
from .run import RunScreen
from .runs import RunsScreen
from .turn_detail import TurnDetailScreen
from ..verdicts import DIMENSIONS
from ..widgets.dimensions import dim_legend
from ..widgets.turn_table import RETRIES

KEY_NAMES = {"question_mark": "?", "escape": "esc", "full_stop": ".", "comma": ",", "enter": "enter",
             "equals_sign": "=", "space": "space"}


def key_label(keys: str) -> str:
    return " / ".join(KEY_NAMES.get(k, k) for k in keys.split(","))


def bindings_table(app_bindings: list) -> Table:
    """`app_bindings`: the app's own keys (passed in, so this screen never imports the app)."""
    t = Table(expand=True, show_edge=False, box=None, padding=(0, 1))
    t.add_column("where", style="bold cyan")
    t.add_column("key", style="bold")
    t.add_column("does")
    sections = [
        ("anywhere", list(app_bindings) + [Binding("ctrl+p", "", "Command palette (every action by name)")]),
        ("runs list", RunsScreen.BINDINGS),
        ("run (live)", RunScreen.BINDINGS + [Binding("up,down", "", "Select turn")]),
        ("replay", [b for b in ReplayScreen.BINDINGS if b not in RunScreen.BINDINGS]),
        ("turn detail", TurnDetailScreen.BINDINGS),
        ("leaderboard", LeaderboardScreen.BINDINGS + [Binding("click", "", "Sort by that column (header)")]),
        ("consistency", ConsistencyScreen.BINDINGS),
        ("compare", CompareScreen.BINDINGS),
        ("campaigns", CampaignsScreen.BINDINGS),
        ("campaign", CampaignScreen.BINDINGS),
    ]
    for where, binds in sections:
        for i, b in enumerate(binds):
            if isinstance(b, tuple):
                b = Binding(*b)
            t.add_row(where if i == 0 else "", key_label(b.key), b.tooltip or b.description or b.action)
        t.add_row("", "", "")
    return t


def codes_text() -> Text:
    """What the short forms in the tables mean (the tables say it where they have room)."""
    t = Text("codes  ", "bold")
    t.append_text(dim_legend(DIMENSIONS, heuristic=True))
    t.append(f"\n       {RETRIES}3 three retries · ∅audio words but no audio · 1626* latency at a speed other than 1 "
             "(not comparable) · 1626! in no latency figure (this machine sent the user's audio late, or the turn "
             "was not the model's)\n       STOPPED · NOT PLAYED · LOST PACE · INFRA ERR · ENGINE ERR: a turn the model never "
             "got to answer: no verdict, in no figure, counted apart", "grey62")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help", classes="dialog wide"):
            yield Static("[b]arena-tui keys[/b]   (esc closes)")
            yield Static(bindings_table(self.app.BINDINGS))
            yield Static(codes_text())
            yield Static("[grey62]Scores on simulator runs measure the simulator, not a model. "
                         "Heuristic judgements are offline rules and are labelled (h).[/]")

    def action_close(self) -> None:
        self.dismiss(None)
