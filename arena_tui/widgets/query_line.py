"""A one-line query under a table: `/` find (the cursor jumps between matching rows) or a filter
(the rows narrow as you type). It shows what it is, the text, and what came of it (`2/7`, `3 of 12
runs`); the screen decides what matches (`screens/find.py`)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static


class QueryLine(Horizontal):
    """Hidden until opened (`open`); `escape` in it closes it (`Closed`: the screen forgets the
    query). Typing posts `Changed`, enter `Submitted`; `say` shows the outcome beside the text."""

    DEFAULT_CSS = """
    QueryLine { height: 1; display: none; padding: 0 1; background: $boost; }
    QueryLine.-open { display: block; }
    QueryLine > .query-label { width: auto; color: $accent; text-style: bold; }
    QueryLine > Input { width: 1fr; }
    QueryLine > .query-said { width: auto; color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    class Changed(Message):
        def __init__(self, line: QueryLine, value: str) -> None:
            super().__init__()
            self.line = line
            self.value = value

    class Submitted(Changed):
        pass

    class Closed(Message):
        def __init__(self, line: QueryLine) -> None:
            super().__init__()
            self.line = line

    def __init__(self, label: str, placeholder: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield Static(f"{self.label} ", classes="query-label")
        yield Input(placeholder=self.placeholder, compact=True)
        yield Static("", classes="query-said")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def value(self) -> str:
        return self.query_one(Input).value if self.is_open else ""

    def open(self) -> None:
        """Show it with the cursor in its text (what was typed before is kept, selected)."""
        self.add_class("-open")
        field = self.query_one(Input)
        field.focus()
        field.select_all()

    def action_close(self) -> None:
        self.remove_class("-open")
        self.query_one(Input).value = ""
        self.say("")
        self.post_message(self.Closed(self))

    def say(self, text: str | Text) -> None:
        self.query_one(".query-said", Static).update(text)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.value))
