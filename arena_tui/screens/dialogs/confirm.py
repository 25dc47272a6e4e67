"""Yes/no questions: deleting a run (`ConfirmDialog`), quitting with runs still streaming (`QuitDialog`)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from ..base import ArenaDialog


class ConfirmDialog(ArenaDialog[bool]):
    """The question wraps to the dialog's width (a run id and a list of what goes never run off it);
    No has the focus, so a stray enter keeps things as they are."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("y", "yes", "Yes", show=False)]
    DEFAULT_CSS = """
    ConfirmDialog #question { width: 1fr; height: auto; }
    """

    def __init__(self, question: str | Text, yes: str = "Yes", no: str = "No", id: str | None = None) -> None:
        super().__init__(id=id)
        self.question = question
        self.labels = (yes, no)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question if isinstance(self.question, Text) else Text(self.question), id="question")
            with Horizontal(classes="buttons"):
                yield Button(self.labels[0], id="yes", variant="error")
                yield Button(self.labels[1], id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class QuitDialog(ConfirmDialog):
    """Quitting while runs stream: `q` again (or `y`) quits; a modal screen keeps the app's own `q`."""

    BINDINGS = [Binding("q", "yes", "Quit", show=False)]
