"""Every key of every screen, read from the screens' own BINDINGS so it cannot go stale.

Which screens: every one registered where it is defined (`screens.base.SCREENS`, a screen's
`HELP_WHERE`): opening the help imports the package's screen modules, so a new screen is listed
without an entry here.
"""

from __future__ import annotations

import importlib
import pkgutil

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .. import screens
from .base import SCREENS, ArenaScreen
from ..verdicts import DIMENSIONS
from ..widgets.dimensions import dim_legend
from ..widgets.turn_table import HUMAN, RETRIES

KEY_NAMES = {"question_mark": "?", "escape": "esc", "full_stop": ".", "comma": ",", "enter": "enter",
             "equals_sign": "=", "space": "space", "slash": "/", "left_square_bracket": "[",
             "right_square_bracket": "]", "minus": "-"}


def key_label(keys: str) -> str:
    return " / ".join(KEY_NAMES.get(k, k) for k in keys.split(","))


def registered_screens() -> list[type[ArenaScreen]]:
    """Every screen of the package that names itself for the help, in its `HELP_ORDER` (the
    modules load here: the app imports a screen's module only when it is first opened)."""
    for info in pkgutil.iter_modules(screens.__path__):
        if not info.ispkg:
            importlib.import_module(f"{screens.__name__}.{info.name}")  # registers its screens
    return sorted(SCREENS, key=lambda s: s.HELP_ORDER)


def bindings_table(app_bindings: list) -> Table:
    """`app_bindings`: the app's own keys (passed in, so this screen never imports the app)."""
    t = Table(expand=True, show_edge=False, box=None, padding=(0, 1))
    t.add_column("where", style="bold cyan")
    t.add_column("key", style="bold")
    t.add_column("does")
    sections = [("anywhere", list(app_bindings) + [Binding("ctrl+p", "", "Command palette (every action by name)")])]
    sections += [(screen.HELP_WHERE or "", screen.help_keys()) for screen in registered_screens()]
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
             f"got to answer: no verdict, in no figure, counted apart\n       FAIL{HUMAN} a person's verdict decides "
             "some dimension (underlined glyph; v in the turn detail gives or withdraws one) · causes: why a turn "
             "failed, from a fixed list (docs/judging.md)", "grey62")
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
