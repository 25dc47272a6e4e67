"""The leaderboard: stored runs compared, one row per model (per benchmark and pooled).

Every figure comes from `arena_tui.compare` (the report's data layer): pass rates with Wilson
intervals, strict turn pass, voice-to-voice percentiles with bootstrap intervals (speed-1 runs
only; the exclusions are listed under the table), tool split, counts. Loading runs in a worker
that posts `BoardLoaded`; until then the screen says "loading…" and keys keep working.
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

from ..compare.judging import row_judge
from ..compare.leaderboard import POOLED, BoardRow
from ..compare.load import Loaded, load_board
from ..compare.selection import ALL
from ..timing import UNTRUSTED
from ..compare.columns import Column, board_columns, sort_rows
from ..widgets.board_cells import cell, model_cell
from ..widgets.board_plots import CategoryBars, LatencyPlot, legend
from ..widgets.fit import Forms, column_window, fit_lines, fit_parts, lines_width
from arena_tui.spine.ids import short_ids
from .base import ArenaScreen


PLOT_MIN_HEIGHT = 30  # below this the plots would be a few rows tall: hidden until `v`
FIXED = 2  # model and benchmark stay in view; the other columns scroll by whole columns (← →)
MODEL_MIN = 18  # the model column is cut no narrower than this (a quarter of the width when wider)
COLUMN_MAX = 14  # `[1,250–2,500]`; a longer why-not (`speed not recorded`) is cut: the notes say it whole
NOTES = 4  # lines of notes under the table at least (a sixth of the terminal's height when more)


def listed(head: str, items: list[str], count: str, width: int, style: str, sep: str = ", ",
           elsewhere: str = "") -> Text:
    """`head` then how many (`10 runs`) and the items in one line of `width`: as many whole as fit,
    then `+N more` (never one cut, never a list that just stops); none fitting, the count and where
    they are shown (`elsewhere`)."""
    for shown in range(len(items), 0, -1):
        rest = len(items) - shown
        body = sep.join(items[:shown]) + (f"{sep}+{rest} more" if rest else "")
        line = f"{head}{count}: {body}" if count and len(items) > 1 else f"{head}{body}"
        if len(line) <= width:
            return Text(line, style)
    return Text(f"{head}{count}" + (f" ({elsewhere})" if elsewhere else ""), style)


class BoardLoaded(Message):
    """The loader worker's result (or the one line saying why there is none)."""

    def __init__(self, loaded: Loaded | None, error: str | None = None) -> None:
        super().__init__()
        self.loaded = loaded
        self.error = error


class LeaderboardScreen(ArenaScreen):
    HELP_WHERE, HELP_ORDER = "leaderboard", 5
    HELP_EXTRA = [Binding("click", "", "Sort by that column (header)")]
    CSS_PATH = "board.tcss"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "drill", "Consistency", show=False),
        Binding("s", "sort_next", "Sort", tooltip="Sort by the next column (again: the one after)"),
        Binding("S", "reverse", "Reverse order", show=False),
        Binding("b", "cycle_benchmark", "Benchmark", tooltip="Show one benchmark's rows, the next, … all"),
        # priority: the focused table would scroll by one cell; these move by whole columns
        Binding("right", "scroll_columns(1)", "Columns", key_display="←→", priority=True,
                tooltip="Scroll the columns right by one whole column (model and benchmark stay)"),
        Binding("left", "scroll_columns(-1)", "Columns ←", show=False, priority=True,
                tooltip="Scroll the columns left by one whole column"),
        Binding("v", "toggle_plots", "Plots"),
        Binding("space", "mark", "Mark row", show=False),
        Binding("equals_sign", "compare", "Compare marked", show=False),
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
        self.plots: bool | None = None  # None: shown when the terminal has room (PLOT_MIN_HEIGHT rows)
        self.first = 0  # the first scrolling column in view (after model and benchmark)
        self.hidden: list[Column] = []  # the columns this width leaves out, in column order

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="board-status")
        yield Static("", id="board-columns")
        yield DataTable(id="board", cursor_type="row", zebra_stripes=True)
        yield Static("", id="board-notes")
        yield Static("", id="board-legend")
        with Horizontal(id="board-plots"):
            yield LatencyPlot(id="plot-latency")
            with VerticalScroll(id="plot-categories"):
                yield CategoryBars()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#board", DataTable).focus()
        self._show_plots()
        self.load()

    def on_resize(self) -> None:
        self._show_plots()
        if self.loaded is not None:  # once the table has its new size: the columns are chosen for it
            self.call_after_refresh(self.render_board)

    def _show_plots(self) -> None:
        show = self.plots if self.plots is not None else self.app.size.height >= PLOT_MIN_HEIGHT
        self.query_one("#board-plots").display = show
        self.query_one("#board-legend").display = show

    def action_toggle_plots(self) -> None:
        self.plots = not self.query_one("#board-plots").display
        self._show_plots()
        if self.plots and self.loaded is not None:
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
        rows = self.loaded.board.rows
        self.columns = board_columns(self.loaded.board.dimensions, stages=any(r.stages for r in rows),
                                     duplex=any(r.duplex.cues for r in rows))
        self.render_board()

    # --- rendering -----------------------------------------------------------------------
    @property
    def rows(self) -> list[BoardRow]:
        """The rows the filter lets through: one benchmark's, or all (pooled rows last by default)."""
        if self.loaded is None:
            return []
        rows = self.loaded.board.rows
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
        labels = [c.label + ((" ↓" if self.descending else " ↑") if c.key == self.sort_key else "") for c in self.columns]
        cells = [[model_cell(row, (row.model, row.benchmark) in self.marked)] + [cell(c.figure(row)) for c in self.columns[1:]]
                 for row in self.shown]  # fmt: skip
        need = [max([len(label)] + [lines_width(r[i]) for r in cells]) for i, label in enumerate(labels)]
        room = max(table.size.width - table.styles.scrollbar_size_vertical, 0) or self.app.size.width
        need[0] = min(need[0], max(MODEL_MIN, room // 4))  # a long model id is cut ("…"), never the columns
        need[FIXED:] = [min(w, max(COLUMN_MAX, len(label))) for w, label in zip(need[FIXED:], labels[FIXED:], strict=True)]
        visible, self.first = column_window(room, need, FIXED, self.first)
        self.hidden = [c for i, c in enumerate(self.columns) if i not in visible]
        table.clear(columns=True)
        for i in visible:
            table.add_column(labels[i], key=self.columns[i].key, width=need[i])
        for row, row_cells in zip(self.shown, cells, strict=True):
            table.add_row(*(fit_lines(row_cells[i], need[i]) for i in visible), key=self.row_key(row), height=2)
        keys = [self.row_key(r) for r in self.shown]
        if current in keys:
            table.move_cursor(row=keys.index(current))
        self._status()
        self._columns_line(visible)
        self._notes()
        self._plots()

    def _columns_line(self, visible: list[int]) -> None:
        """Which columns are out of view and the keys that bring them (never silently off-screen):
        every one named, in at most two lines."""
        if not self.hidden:
            self.query_one("#board-columns", Static).update("")
            return
        left = [c.label for i, c in enumerate(self.columns) if i not in visible and i < visible[-1]]
        right = [c.label for i, c in enumerate(self.columns) if i > visible[-1]]
        parts: list[Forms] = [(Text(f"{len(visible)} of {len(self.columns)} columns in view", "bold"),
                               Text(f"{len(visible)}/{len(self.columns)} cols", "bold"))]
        if left:
            parts.append((f"← {', '.join(left)}", f"← {','.join(left)}"))
        if right:
            parts.append((f"→ {', '.join(right)}", f"→ {','.join(right)}"))
        self.query_one("#board-columns", Static).update(fit_parts(parts, self._line_width(), 2, sep="  "))

    def _line_width(self) -> int:
        return (self.size.width or self.app.size.width) - 2  # a line's padding

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
        board, sel = self.loaded.board, self.loaded.selection
        column = self.column
        sort = f"{column.label if column else '?'} {'↓' if self.descending else '↑'}"
        bench = self.benchmark or "all + pooled"
        parts: list[Forms] = [(f"{len(board.runs)} runs · {len(board.models)} models",),
                              (f"benchmark: {bench} (b)", f"b: {bench}"),
                              (f"sort: {sort} (s, S, click header)", f"s: {sort}"),
                              ("enter: consistency", "enter: repeats", ""), ("space mark, = compare two", "")]
        if self.marked:
            parts.append((f"marked {len(self.marked)} (= compares two)", f"marked {len(self.marked)}"))
        if not board.runs:
            unscored = f" ({len(board.unscored)} not scored: no turn got an answer)" if board.unscored else ""
            parts = [(f"no finished runs in {sel.description or 'the store'}{unscored}",)]
        self.query_one("#board-status", Static).update(fit_parts(parts, self._line_width(), 1, sep=" · "))

    def _notes(self) -> None:
        """What the figures leave out and why, one line each, most important first: the labelled
        rows, the judge, the runs not scored, latency exclusions, turns counted apart, skipped runs;
        past the lines the terminal's height gives them, the last says how many more and of what
        (never a list that just stops)."""
        assert self.loaded is not None
        width = self._line_width()
        notes: list[tuple[str, Text]] = []  # (what it is, its line)
        labelled = sorted({r.model for r in self.rows if r.labels})
        if labelled:
            notes.append(("labelled rows", fit_parts([(
                "labelled rows are not real model scores (simulator / protocol fake / heuristic judge / never judged)",
                "labelled rows are not real model scores")], width, 1)))
        judges = sorted({row_judge(r) for r in self.rows if r.judged})
        if judges:  # every figure says which judge made it (each row's is its `judge` column)
            notes.append(("judges", listed("judged by ", judges, "", width, "", sep="; ",
                                           elsewhere=f"{len(judges)} judges: the judge column")))
        unscored = self.loaded.board.unscored
        ids = short_ids([*(f.run.run_id for f in self.loaded.board.runs), *unscored])
        if unscored:
            notes.append(("runs not scored", listed("not scored: ", [f"{ids[k]} ({why})" for k, why in unscored.items()],
                                                    f"{len(unscored)} runs", width, "", sep="; ",
                                                    elsewhere="no turn got an answer")))
        excluded = {k: why for r in self.rows if r.benchmark != POOLED for k, why in r.latency_excluded.items()}
        by_why: dict[str, list[str]] = {}
        for run_id, why in excluded.items():
            by_why.setdefault(why, []).append(ids[run_id])
        for why, runs in by_why.items():
            notes.append(("latency exclusions", listed(f"latency from speed-1 runs only; {why}: ", runs,
                                                       f"{len(runs)} runs", width, "")))
        if untrusted := sum(r.untrusted for r in self.rows if r.benchmark != POOLED):
            notes.append(("untrusted latencies", fit_parts([(
                f"{untrusted} turn(s) left out of latency: {UNTRUSTED} (the runs' other turns count)",
                f"{untrusted} turn(s) left out of latency: sent late")], width, 1)))
        apart = [f"{r.model} on {r.benchmark}: {r.apart_text}" for r in self.rows if r.benchmark != POOLED and r.apart_text]
        if apart:
            notes.append(("turns counted apart", listed("counted apart (not the model's, in no figure): ", apart,
                                                        f"{len(apart)} rows", width, "", sep="; ",
                                                        elsewhere="their counted apart column")))
        for run_id, why in self.loaded.selection.skipped.items():
            notes.append(("skipped runs", Text(f"skipped {run_id}: {why}")))
        for name, why in sorted(self.loaded.unloadable.items()):
            why = why.split(" (", 1)[0]  # the reason, not where it was looked for (`arena-tui benchmarks` says)
            notes.append(("benchmarks without data", Text(f"no benchmark data for {name} ({why}): no categories")))
        room = max(NOTES, self.app.size.height // 6)  # a taller terminal has room for more
        self.query_one("#board-notes").styles.max_height = room
        if len(notes) > room:
            left = notes[room - 1:]
            kinds = ", ".join(dict.fromkeys(kind for kind, _ in left))
            more = fit_parts([(f"+{len(left)} more notes ({kinds}): a taller terminal shows them",
                               f"+{len(left)} more notes ({kinds})", f"+{len(left)} more notes (a taller terminal)")],
                             width, 1)
            notes = [*notes[:room - 1], ("", more)]
        style = {"labelled rows": "bold magenta", "judges": "grey62", "skipped runs": "grey62",
                 "benchmarks without data": "grey62", "": "grey62"}  # fmt: skip
        lines = [line.copy() for _, line in notes]
        for (kind, _), line in zip(notes, lines, strict=True):
            line.stylize(style.get(kind, "yellow"))
        self.query_one("#board-notes", Static).update(Text("\n").join(lines))

    def _plots(self) -> None:
        row = self.cursor_row
        bench = row.benchmark if row is not None else self.benchmark
        rows = [r for r in self.rows if r.benchmark == bench] if bench else []
        name = "pooled" if bench == POOLED else (bench or "–")
        self.query_one("#board-legend", Static).update(legend(rows))
        self.query_one(LatencyPlot).show(f"voice-to-voice per turn — {name}", rows)
        self.query_one(CategoryBars).show(f"strict pass per category — {name}", rows)

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

    def action_drill(self) -> None:
        from .consistency import ConsistencyScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        row = self.cursor_row
        if row is not None:
            self.app.push_screen(ConsistencyScreen(row))

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
