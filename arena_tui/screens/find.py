"""Finding and filtering a screen's rows: `/` then text, enter jumps to the first matching row at or
after the cursor, `]` and `[` to the next and previous; `f` narrows the rows as you type (the
runs list and the leaderboard). What matches is the screen's (`Finding.found`, `filter_changed`);
a turn's texts are search's (`compare.search`: what the user said, the answer, the reasons that
count, the causes), so `/` on a screen finds what `arena-tui search` finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from ..compare.search import answer_of, fields, matched_in, reasons_text, user_of
from ..run_view import TurnRow
from ..widgets.query_line import QueryLine

FIND_KEYS = [
    Binding("slash", "find", "Find", show=False, tooltip="Find rows by text: enter jumps to a match"),
    Binding("right_square_bracket", "find_step(1)", "Next match", show=False, tooltip="The next row found by /"),
    Binding("left_square_bracket", "find_step(-1)", "Previous match", show=False, tooltip="The previous row found by /"),
]
FILTER_KEY = Binding("f", "filter", "Filter", show=False, tooltip="Narrow the rows as you type (esc clears)")


def find_line(what: str) -> QueryLine:
    return QueryLine("/", f"find in {what}; enter", id="find")


def filter_line(what: str) -> QueryLine:
    return QueryLine("filter", f"narrow the rows by {what}", id="filter")


def turn_matches(row: TurnRow, causes: Sequence[str], text: str) -> tuple[str, ...]:
    """Where a turn of a run's state matches `text`, by search's texts (`compare.search.fields`)."""
    res = row.result
    user = user_of(res) if res is not None else (row.spec.input if row.spec is not None else "")
    answer = answer_of(res) if res is not None else ""
    return matched_in(fields(user, answer, reasons_text(row.standing), causes), text)


if TYPE_CHECKING:
    from textual.screen import Screen as _Screen  # what it is mixed into, as a type checker reads it
else:
    _Screen = object


class Finding(_Screen):
    """Mixed into a screen with a `find_line` (and maybe a `filter_line`) and the DataTable
    `FIND_TABLE`: the keys `FIND_KEYS` (and `FILTER_KEY`) act on them, and escape (`action_back`)
    closes an open line before it leaves the screen."""

    FIND_TABLE: ClassVar[str] = ""
    _matches: list[str] = []
    _at = -1
    _sought = ""

    def found(self, text: str) -> list[str]:
        """The keys of the rows matching `text`, in the table's order."""
        raise NotImplementedError

    def filter_changed(self, text: str) -> None:
        """The filter line's text changed ("" when closed): narrow the rows."""

    @property
    def typing(self) -> bool:
        """Whether a query line has the focus (a screen's priority keys then leave its text alone)."""
        return any(line.has_focus_within for line in self.query(QueryLine))

    def _table(self) -> DataTable:
        return self.query_one(f"#{self.FIND_TABLE}", DataTable)

    def action_find(self) -> None:
        self.query_one("#find", QueryLine).open()

    def close_query(self) -> bool:
        """Close an open query line, the find line first (its matches are the most recent thing
        asked), then the filter; False when none is open. Its text may have lost the focus (enter
        hands it to the table) but its bar still says `esc`: escape closes it."""
        for line_id in ("find", "filter"):
            line = next(iter(self.query(f"#{line_id}").results(QueryLine)), None)
            if line is not None and line.is_open:
                line.action_close()
                return True
        return False

    def action_back(self) -> None:
        """escape: the open find or filter line closes; only with none open does it leave the screen."""
        if not self.close_query():
            super().action_back()  # type: ignore[misc]  # (the screen's: `ArenaScreen.action_back`)

    def action_filter(self) -> None:
        self.query_one("#filter", QueryLine).open()

    def on_query_line_changed(self, message: QueryLine.Changed) -> None:
        if message.line.id == "filter":
            self.filter_changed(message.value)

    def on_query_line_submitted(self, message: QueryLine.Submitted) -> None:
        if message.line.id == "find":
            self.find(message.value)
        self._table().focus()

    def on_query_line_closed(self, message: QueryLine.Closed) -> None:
        if message.line.id == "find":
            self._matches, self._at, self._sought = [], -1, ""
        else:
            self.filter_changed("")
        self._table().focus()

    def find(self, text: str) -> None:
        """Jump to the first row matching `text` at or after the cursor, and say how many match."""
        self._sought = text.strip()
        self._matches = self.found(self._sought) if self._sought else []
        table = self._table()
        order = [str(k.value) for k in table.rows]
        here = table.cursor_row if table.row_count else 0
        after = [i for i, key in enumerate(self._matches) if key in order and order.index(key) >= here]
        self._at = after[0] if after else 0
        self._go()

    def action_find_step(self, step: int) -> None:
        if not self._matches:
            self.notify("nothing found yet: / and a text first" if not self._sought else f"no row matches “{self._sought}”",
                        severity="warning", timeout=3)
            return
        self._at = (self._at + step) % len(self._matches)
        self._go()

    def refind(self) -> None:
        """The rows changed: the matches again, the cursor where it is."""
        if self._sought:
            at = self._matches[self._at] if 0 <= self._at < len(self._matches) else None
            self._matches = self.found(self._sought)
            self._at = self._matches.index(at) if at in self._matches else 0
            self._say()

    def _go(self) -> None:
        table = self._table()
        if self._matches:
            key = self._matches[self._at]
            if key in {str(k.value) for k in table.rows}:
                table.move_cursor(row=table.get_row_index(key))
        self._say()

    def _say(self) -> None:
        line = self.query_one("#find", QueryLine)
        if not self._sought:
            line.say("")
        elif not self._matches:
            line.say(Text("no match", "yellow"))
        else:
            line.say(Text.assemble((f"{self._at + 1}/{len(self._matches)}", "bold"), " · ] next · [ previous · esc"))
