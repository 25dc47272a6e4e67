"""The run screen's category filter."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label, Select

from ..base import ArenaDialog


class CategoryDialog(ArenaDialog[str | None]):
    """Pick a category to filter the turn table by ('' clears the filter)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, categories: list[str], current: str | None) -> None:
        super().__init__()
        self.categories = categories
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Show only turns of category:")
            options = [("(all categories)", "")] + [(c, c) for c in self.categories]
            yield Select(options, value=self.current or "", allow_blank=False, id="category")
            with Horizontal(classes="buttons"):
                yield Button("Apply", id="apply", variant="primary")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#apply")
    def apply(self) -> None:
        self.dismiss(str(self.query_one("#category", Select).value or ""))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
