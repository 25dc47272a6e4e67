"""The leaderboard: stored runs compared, one row per model (per benchmark and pooled).

Every figure comes from `arena_tui.compare` (the report's data layer): pass rates with Wilson
intervals, strict turn pass, voice-to-voice percentiles with bootstrap intervals (speed-1 runs
only; the exclusions are listed under the table), tool split, counts. `m` shows the failure mix
instead (per row, its failed turns per cause: `compare.failure_mix`); `f` narrows the rows as you
type, `/` finds one. `G` says the gap between two rows, paired (`compare.gap`): the two marked, or
the one marked (the baseline, A) and the row under the cursor (B). Loading runs in a worker that posts `BoardLoaded`; until then the screen says
"loading…" and keys keep working.

Rows are named by the one rule (`spine.labels`): what every row shown shares is said once above the
table, each row says what tells it apart, never cut. Rows first (`widgets.board_frame.place`): the
notes, the legend and the plots take what the rows leave; `n` opens or closes the notes, `v` the plots.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from ..compare.leaderboard import POOLED, BoardRow
from ..compare.load import Loaded, load_board
from ..compare.selection import ALL
from arena_tui.spine.labels import Label, Labels, label_rows
from arena_tui.spine.source import FULL_DUPLEX_LABEL

from ..compare.columns import Column, board_columns, has_cost, sort_rows
from ..compare.failure_mix import mix_columns
from ..compare.gap import pair_gap, row_side
from ..widgets.board_cells import cell, model_cell
from ..widgets.board_notes import board_notes, row_human
from ..widgets.board_frame import ROW_LINES, columns_text, place, shared_text, status_text, window
from ..widgets.board_plots import CategoryBars, LatencyPlot, legend
from ..widgets.fit import fit_lines, lines_width
from ..widgets.query_line import QueryLine
from .base import BACK, ArenaScreen
from .find import FILTER_KEY, FIND_KEYS, Finding, filter_line, find_line


FIXED = 2  # model and benchmark stay in view (the benchmark said above when every row has one); the others scroll (← →)
BENCH = 1  # the benchmark column's index
MODEL_MIN = 18  # the model column is cut no narrower than this (a quarter of the width when wider)
COLUMN_MAX = 14  # `[1,250–2,500]`; a longer why-not (`speed not recorded`) is cut: the notes say it whole
NARROW = 100  # narrower than this the plots are one above the other (a lane keeps room for its row's name)
NOTES = 4  # lines of notes under the table at most (a sixth of the terminal's height when more)


class BoardLoaded(Message):
    """The loader worker's result (or the one line saying why there is none)."""

    def __init__(self, loaded: Loaded | None, error: str | None = None) -> None:
        super().__init__()
        self.loaded = loaded
        self.error = error


class LeaderboardScreen(Finding, ArenaScreen):
    HELP_WHERE, HELP_ORDER = "leaderboard", 5
    FIND_TABLE = "board"
    HELP_EXTRA = [Binding("click", "", "Sort by that column (header)")]
    CSS_PATH = "board.tcss"
    BINDINGS = [
        BACK,
        Binding("enter", "drill", "Consistency", show=False,
                tooltip="The row's turns across its repeats (against the one marked row: the turns that decide their gap)"),
        Binding("s", "sort_next", "Sort", tooltip="Sort by the next column (again: the one after)"),
        Binding("S", "reverse", "Reverse order", show=False),
        Binding("b", "cycle_benchmark", "Benchmark", tooltip="Show one benchmark's rows, the next, … all"),
        # priority: the focused table would scroll by one cell; these move by whole columns
        Binding("right", "scroll_columns(1)", "Columns", key_display="←→", priority=True,
                tooltip="Scroll the columns right by one whole column (model and benchmark stay)"),
        Binding("left", "scroll_columns(-1)", "Columns ←", show=False, priority=True,
                tooltip="Scroll the columns left by one whole column"),
        Binding("v", "toggle_plots", "Plots", tooltip="Show or hide the legend and the plots (shown by themselves "
                "when the rows leave room for them)"),
        Binding("n", "toggle_notes", "Notes", show=False, tooltip="Every note under the table, or the one line saying how many"),
        Binding("m", "toggle_mix", "Failure mix", show=False, tooltip="Each row's failed turns per cause (again: the figures)"),
        FILTER_KEY,
        *FIND_KEYS,
        Binding("space", "mark", "Mark row", show=False),
        Binding("equals_sign", "compare", "Compare marked", show=False),
        Binding("G", "gap", "Gap", show=False,
                tooltip="B − A with its 95 % interval, paired: the two marked rows, or the marked one and this row"),
        Binding("g", "reload", "Reload", show=False),
    ]

    def __init__(self, targets: Sequence[str] = (ALL,), benchmark: str | None = None) -> None:
        super().__init__()
        self.targets = list(targets)
        self.benchmark = benchmark  # None: every benchmark and the pooled rows
        self.loaded: Loaded | None = None
        self.columns: list[Column] = []
        self.sort_key = "strict"
        self.descending = True
        self.shown: list[BoardRow] = []  # the table's rows, in display order
        self.marked: list[tuple[str, str]] = []  # (model, benchmark) of marked rows, in marking order
        self.plots: bool | None = None  # None: shown when the rows leave room for them (`board_frame.place`)
        self.notes_open: bool | None = None  # None: every note when the rows leave room for them
        self.labels = Labels((), ())  # the shown rows' names (`spine.labels`), in `shown` order
        self.bench_apart = False  # the benchmark column left out: every row has one, said above the table
        self.first = 0  # the first scrolling column in view (after model and benchmark)
        self.hidden: list[Column] = []  # the columns this width leaves out, in column order
        self.mix = False  # the failure mix (`m`) instead of the figures
        self.narrow = ""  # the filter line's text: rows whose model or benchmark hold it

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="board-status")
        yield Static("", id="board-shared")
        yield Static("", id="board-columns")
        yield DataTable(id="board", cursor_type="row", zebra_stripes=True)
        yield filter_line("model or benchmark")
        yield find_line("model, benchmark")
        yield Static("", id="board-notes")
        yield Static("", id="board-legend")
        with Horizontal(id="board-plots"):
            with VerticalScroll(id="plot-latency-lanes"):  # more lanes than room: they scroll, never squeeze
                yield LatencyPlot(id="plot-latency")
            with VerticalScroll(id="plot-categories"):
                yield CategoryBars()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#board", DataTable).focus()
        self.query_one("#board-plots").display = self.query_one("#board-legend").display = False
        self.load()

    def on_resize(self) -> None:
        if self.loaded is not None:  # once the table has its new size: the columns are chosen for it
            self.call_after_refresh(self.render_board)

    def action_toggle_plots(self) -> None:
        self.plots = not self.query_one("#board-plots").display
        if self.loaded is not None:
            self.render_board()

    def action_toggle_notes(self) -> None:
        self.notes_open = not self._notes_full
        if self.loaded is not None:
            self.render_board()

    def _place(self) -> None:
        """Rows first (`board_frame.place`): the room the table, the notes and the plots share now is
        measured, then shared again for the rows shown."""
        table = self.query_one("#board", DataTable)
        flexible = [table, *(self.query(w).first() for w in ("#board-notes", "#board-legend", "#board-plots"))]
        room = sum(w.outer_size.height for w in flexible if w.display)
        if not room:  # not laid out yet
            return
        notes = board_notes(self.loaded, self.rows, self._line_width(), self._notes_room()) if self.loaded else Text()
        at = place(room, len(self.shown), len(notes.split("\n")) if notes.plain else 0, self.plots, self.notes_open)
        if at.notes != self._notes_full:
            self._notes_full = at.notes
            self._notes()
        table.styles.height = at.table if at.table is not None else "1fr"
        for w in ("#board-plots", "#board-legend"):
            self.query_one(w).display = at.plots
        self.query_one("#board-plots").set_class(self.size.width < NARROW, "narrow")
        if at.plots:
            self._plots()

    @work(exclusive=True, group="leaderboard-load")
    async def load(self) -> None:
        store = self.arena.store
        if store is None:
            self.post_message(BoardLoaded(None, f"no database: {self.arena.store_error}"))
            return
        try:
            await store.flush()
            loaded = await load_board(store, self.targets, self.arena.data_dir)
        except Exception as e:  # LookupError (bad target), StoreError...: one line, the screen stays
            self.post_message(BoardLoaded(None, str(e) or type(e).__name__))
            return
        self.post_message(BoardLoaded(loaded))

    def on_board_loaded(self, message: BoardLoaded) -> None:
        if message.loaded is None:
            why = Text(f"cannot load the leaderboard: {message.error}", "bold red")
            self.query_one("#board-status", Static).update(why)
            return
        self.loaded = message.loaded
        if self.benchmark is not None and self.benchmark not in self.loaded.board.benchmarks:
            self.benchmark = None
        self._set_columns()
        self.render_board()

    def _set_columns(self) -> None:
        """The figures' columns, or the failure mix's (`m`)."""
        assert self.loaded is not None
        rows = self.loaded.board.rows
        if self.mix:
            self.columns = mix_columns(rows)
        else:
            self.columns = board_columns(self.loaded.board.dimensions, stages=any(r.stages for r in rows),
                                         duplex=any(r.duplex.cues or FULL_DUPLEX_LABEL in r.labels for r in rows),
                                         cost=has_cost(rows))
        if self.sort_key not in [c.key for c in self.columns]:
            self.sort_key, self.descending = ("failed", True) if self.mix else ("strict", True)

    # --- rendering -----------------------------------------------------------------------
    @property
    def rows(self) -> list[BoardRow]:
        """The rows the filters let through: one benchmark's, or all (pooled rows last by default);
        those whose model or benchmark hold the filter line's text."""
        if self.loaded is None:
            return []
        rows = self.loaded.board.rows
        rows = [r for r in rows if r.benchmark == self.benchmark] if self.benchmark else list(rows)
        return [r for r in rows if self.matches(r, self.narrow)] if self.narrow else rows

    @staticmethod
    def matches(row: BoardRow, text: str) -> bool:
        text = text.casefold().strip()
        return text in row.model.casefold() or text in row.benchmark.casefold()

    def found(self, text: str) -> list[str]:
        return [self.row_key(r) for r in self.shown if self.matches(r, text)]

    def filter_changed(self, text: str) -> None:
        self.narrow = text.strip()
        if self.loaded is not None:
            self.render_board()
            shown, total = len(self.rows), len(self._unfiltered())
            self.query_one("#filter", QueryLine).say(f"{shown} of {total} rows" if self.narrow else "")

    def _unfiltered(self) -> list[BoardRow]:
        rows = self.loaded.board.rows if self.loaded is not None else []
        return [r for r in rows if r.benchmark == self.benchmark] if self.benchmark else list(rows)

    @property
    def column(self) -> Column | None:
        return next((c for c in self.columns if c.key == self.sort_key), None)

    @staticmethod
    def row_key(row: BoardRow) -> str:
        return f"{row.model}\x1f{row.benchmark}"

    @property
    def cursor_row(self) -> BoardRow | None:
        table = self.query_one("#board", DataTable)
        if not self.shown or table.row_count == 0:
            return None
        return self.shown[min(table.cursor_row, len(self.shown) - 1)]

    def render_board(self) -> None:
        """The rows sorted, in the columns this width holds: model and benchmark always, then whole
        columns from `first` on (`column_window`); what is left out is named above the table."""
        table = self.query_one("#board", DataTable)
        current = self.row_key(self.cursor_row) if self.cursor_row is not None else None
        column = self.column
        self.shown = sort_rows(self.rows, column, self.descending) if column else self.rows
        self.labels = label_rows([r.naming for r in self.shown])
        labels = [c.label + ((" ↓" if self.descending else " ↑") if c.key == self.sort_key else "") for c in self.columns]
        cells = [[self._model_cell(row, name)] + [cell(c.figure(row)) for c in self.columns[1:]]
                 for row, name in zip(self.shown, self.labels.rows, strict=True)]  # fmt: skip
        need = [max([len(label)] + [lines_width(r[i]) for r in cells]) for i, label in enumerate(labels)]
        room = max(table.size.width - table.styles.scrollbar_size_vertical, 0) or self.app.size.width
        # a long model id is cut ("…"), never the columns; what tells a row apart never is (`spine.labels`)
        need[0] = min(need[0], max(MODEL_MIN, room // 4, *(name.least for name in self.labels.rows)))
        need[FIXED:] = [min(w, max(COLUMN_MAX, len(label))) for w, label in zip(need[FIXED:], labels[FIXED:], strict=True)]
        visible, self.first, self.bench_apart = window(room, need, FIXED, self.first,
                                                       len({r.benchmark for r in self.shown}) == 1)
        self.hidden = [c for i, c in enumerate(self.columns) if i not in visible and not (i == BENCH and self.bench_apart)]
        table.clear(columns=True)
        for i in visible:
            table.add_column(labels[i], key=self.columns[i].key, width=need[i])
        for row, name, row_cells in zip(self.shown, self.labels.rows, cells, strict=True):
            row_cells[0] = self._model_cell(row, name, need[0])
            table.add_row(*(fit_lines(row_cells[i], need[i]) for i in visible), key=self.row_key(row), height=ROW_LINES)
        keys = [self.row_key(r) for r in self.shown]
        if current in keys:
            table.move_cursor(row=keys.index(current))
        self._status()
        bench = self.shown[0].benchmark if self.bench_apart else None
        lines = 1 if self.app.size.height < 30 else 2
        for line, text in (("#board-shared", shared_text(self.labels, bench, self._line_width(), lines)),
                           ("#board-columns", columns_text(self.columns, visible, {BENCH} if self.bench_apart else set(),
                                                           self._line_width()))):
            self.query_one(line, Static).update(text)
            self.query_one(line).display = bool(text.plain)  # (an empty line would take a row's room)
        self._notes()
        self._plots()
        self.refind()
        self.call_after_refresh(self._place)

    def _model_cell(self, row: BoardRow, name: Label, width: int | None = None) -> Text:
        return model_cell(row, name, width, (row.model, row.benchmark) in self.marked, row_human(row))

    def _line_width(self) -> int:
        return (self.size.width or self.app.size.width) - 2  # a line's padding

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action == "scroll_columns" and self.typing)  # ← → move in the query line's text

    def action_scroll_columns(self, step: int) -> None:
        """Scroll by whole columns: one more (or one fewer) on the left goes out of view."""
        if self.loaded is None:
            return
        before = self.first
        self.first = max(0, self.first + step)
        self.render_board()
        if self.first == before:
            self.notify("no more columns that way", timeout=2)

    def _status(self) -> None:
        assert self.loaded is not None
        column = self.column
        sort = f"{column.label if column else '?'} {'↓' if self.descending else '↑'}"
        self.query_one("#board-status", Static).update(status_text(
            self.loaded, sort=sort, bench=self.benchmark or "all + pooled", mix=self.mix, narrow=self.narrow,
            rows=(len(self.rows), len(self._unfiltered())), marked=len(self.marked), width=self._line_width()))

    _notes_full = True  # every note shown (`_place` decides; else the one line saying how many)

    def _notes_room(self) -> int:
        return max(NOTES, self.app.size.height // 6)  # a taller terminal has room for more

    def _notes(self) -> None:
        """What the figures leave out and why, one line each (`widgets/board_notes.py`), in at most
        `NOTES` lines (a sixth of the terminal's height when more); when the rows leave no room for
        them (or `n` closed them), one line: how many notes, of what, and `n`."""
        assert self.loaded is not None
        room = self._notes_room() if self._notes_full else 1
        self.query_one("#board-notes").styles.max_height = room
        names = {r.model: label.text() for r, label in zip(self.shown, self.labels.rows, strict=True)}
        self.query_one("#board-notes", Static).update(board_notes(self.loaded, self.rows, self._line_width(), room,
                                                                  more="n shows them", names=names))

    def _plots(self) -> None:
        if not self.query_one("#board-plots").display:
            return
        row = self.cursor_row
        bench = row.benchmark if row is not None else self.benchmark
        names = {self.row_key(r): name for r, name in zip(self.shown, self.labels.rows, strict=True)}
        rows = [r for r in self.rows if r.benchmark == bench] if bench else []  # (colours by the board's order)
        labels = [names[self.row_key(r)] for r in rows]
        name = "pooled" if bench == POOLED else (bench or "–")
        self.query_one("#board-legend", Static).update(legend(labels, self._line_width()))
        self.query_one(LatencyPlot).show(f"voice-to-voice per turn — {name}", rows, labels)
        self.query_one(CategoryBars).show(f"strict pass per category — {name}", rows, labels)

    @on(DataTable.RowHighlighted, "#board")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.loaded is not None:
            self._plots()

    @on(DataTable.HeaderSelected, "#board")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    @on(DataTable.RowSelected, "#board")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_drill()

    # --- actions -------------------------------------------------------------------------
    def sort_by(self, key: str, descending: bool | None = None) -> None:
        """Sort by a column; the same column again reverses the order."""
        column = next((c for c in self.columns if c.key == key), None)
        if column is None:
            return
        if descending is None:
            descending = (not self.descending) if key == self.sort_key else column.descending
        self.sort_key, self.descending = key, descending
        index = [c.key for c in self.columns].index(key)
        if index >= FIXED and any(c.key == key for c in self.hidden):  # bring the sorted column into view
            self.first = index - FIXED
        self.render_board()

    def action_sort_next(self) -> None:
        if not self.columns:
            return
        keys = [c.key for c in self.columns]
        nxt = keys[(keys.index(self.sort_key) + 1) % len(keys)] if self.sort_key in keys else keys[0]
        self.sort_by(nxt, next(c.descending for c in self.columns if c.key == nxt))

    def action_reverse(self) -> None:
        if self.columns:
            self.sort_by(self.sort_key, not self.descending)

    def action_cycle_benchmark(self) -> None:
        if self.loaded is None:
            return
        options: list[str | None] = [None, *self.loaded.board.benchmarks]
        self.set_benchmark(options[(options.index(self.benchmark) + 1) % len(options)])

    def set_benchmark(self, benchmark: str | None) -> None:
        self.benchmark = benchmark
        self.render_board()

    def action_reload(self) -> None:
        self.query_one("#board-status", Static).update("loading…")
        self.load()

    def action_toggle_mix(self) -> None:
        """The failure mix (each row's failed turns per cause), or back to the figures."""
        if self.loaded is None:
            return
        self.mix, self.first = not self.mix, 0
        self._set_columns()
        self.render_board()

    def action_drill(self) -> None:
        from .consistency import ConsistencyScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        row = self.cursor_row
        if row is not None:  # against the one marked row (A), its turns that decide their gap are marked
            marked = [r for m, bench in self.marked if self.loaded and (r := self.loaded.board.row(m, bench))]
            self.app.push_screen(ConsistencyScreen(row, marked[0] if len(marked) == 1 else None))

    def action_mark(self) -> None:
        row = self.cursor_row
        if row is None:
            return
        key = (row.model, row.benchmark)
        if key in self.marked:
            self.marked.remove(key)
        else:
            self.marked = [*self.marked, key][-2:]  # the two newest marks
        self.render_board()

    def action_compare(self) -> None:
        from .compare import CompareScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        if self.loaded is None:
            return
        if len(self.marked) != 2:
            self.notify("mark two model rows of one benchmark (space), then =", severity="warning")
            return
        a, b = (self.loaded.board.row(m, bench) for m, bench in self.marked)
        if a is None or b is None:
            return
        if a.benchmark != b.benchmark or a.benchmark == POOLED:
            self.notify("compare two rows of the same benchmark (pooled rows have no common turns)", severity="warning")
            return
        self.app.push_screen(CompareScreen(rows=(a, b)))

    def _gap_pair(self) -> tuple[BoardRow, BoardRow] | str:
        """(A, B) of `G`: the two marked rows, or the one marked and the cursor's; else why not."""
        assert self.loaded is not None
        rows = [r for m, bench in self.marked if (r := self.loaded.board.row(m, bench)) is not None]
        if len(rows) == 1 and self.cursor_row is not None and self.cursor_row is not rows[0]:
            rows.append(self.cursor_row)
        if len(rows) != 2:
            return "mark a row (space) as A, then G on another row of its benchmark (or mark two)"
        a, b = rows
        if a.benchmark != b.benchmark or a.benchmark == POOLED:
            return "a gap is between two rows of one benchmark (pooled rows pair no turns)"
        return a, b

    def action_gap(self) -> None:
        from .dialogs.gap import GapDialog  # deferred: a dialog's module loads when it is first opened

        if self.loaded is None:
            return
        pair = self._gap_pair()
        if isinstance(pair, str):
            self.notify(pair, severity="warning")
            return
        a, b = pair

        def turns(wanted: bool | None) -> None:
            if wanted:
                from .compare import CompareScreen  # deferred: a screen's module loads when it is first opened

                self.app.push_screen(CompareScreen(rows=(a, b)))

        self.app.push_screen(GapDialog(pair_gap(row_side(a), row_side(b))), turns)

    def palette_commands(self) -> Iterable[SystemCommand]:
        for c in self.columns:
            yield SystemCommand(f"Leaderboard: sort by {c.label}", "Sort the leaderboard by this column",
                                lambda key=c.key: self.sort_by(key))  # fmt: skip
        yield SystemCommand("Leaderboard: all benchmarks", "Every benchmark's rows and the pooled ones",
                            lambda: self.set_benchmark(None))  # fmt: skip
        for name in self.loaded.board.benchmarks if self.loaded else []:
            yield SystemCommand(f"Leaderboard: only {name}", f"Show the rows of {name}",
                                lambda name=name: self.set_benchmark(name))  # fmt: skip
        yield SystemCommand("Leaderboard: reverse order", "Sort the other way round", self.action_reverse)
        yield SystemCommand("Leaderboard: columns right", "Scroll the columns by one whole column (→)",
                            lambda: self.action_scroll_columns(1))  # fmt: skip
        yield SystemCommand("Leaderboard: columns left", "Scroll the columns back by one whole column (←)",
                            lambda: self.action_scroll_columns(-1))  # fmt: skip
        yield SystemCommand("Leaderboard: consistency", "The selected row's turns across its repeats",
                            self.action_drill)  # fmt: skip
        yield SystemCommand("Mark row", "Mark the selected row for comparison (space)", self.action_mark)
        yield SystemCommand("Compare marked rows", "Two model rows of one benchmark, turn by turn", self.action_compare)
        yield SystemCommand("Gap between rows", "B − A with its 95 % interval, paired: the marked rows, or the marked "
                            "one and the selected (G)", self.action_gap)  # fmt: skip
        yield SystemCommand("Leaderboard: failure mix", "Each row's failed turns per cause, or back to the figures (m)",
                            self.action_toggle_mix)  # fmt: skip
        yield SystemCommand("Leaderboard: filter rows", "Narrow the rows by model or benchmark as you type (f)",
                            self.action_filter)  # fmt: skip
