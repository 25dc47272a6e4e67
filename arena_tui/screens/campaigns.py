"""Campaigns in the TUI: the list of every recorded campaign, and one campaign's matrix of cells.

What a cell shows (state from its run's turn rows, turn progress, strict pass rate as the
report counts it, its cost and its judge's when a cell has one: estimates, the legend says of
which prices) is `arena_tui.campaign.records.cell_views`, the same rows
`arena-tui campaign show` prints. A campaign usually runs in another process (`arena-tui
campaign run`) writing the same database, so both screens poll the store (`PollingScreen`).
`enter` on a cell opens its run the way the runs list does (`Arena.open_run`: live when this app
runs it, else as stored). Under the matrix, the gaps between the campaign's rows (its models,
conditions, efforts) in strict pass, paired (`records.campaign_gaps`, as `campaign show` prints them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..campaign.records import ACTIVE, CampaignView, CellView, campaign_runs, campaign_view, campaign_views
from ..campaign.spec import Cell
from ..compare.columns import costs_text
from ..compare.costs import cost_note
from ..compare.gap import STRICT_KEY, gap_core, p_text, verdict_word
from ..compare.pairwise import family_note
from ..widgets.board_cells import cost_cell
from ..widgets.dimensions import cell_strict, rate_slots, rates_legend, slot_dims, slots_header
from ..widgets.fit import PAD, fit_cell, fit_columns, hidden_text, natural_widths
from .polling import PollingScreen, T
from .base import BACK
from ..verdicts import STRICT
from ..timing import speed_text
from arena_tui.spine.ids import short_ids
from arena_tui.spine.labels import Label, Labels, label_rows
from arena_tui.spine.paths import exports_dir
from arena_tui.spine.times import when_text

if TYPE_CHECKING:
    from ..store import Store

STATE_STYLE = {"queued": "yellow", "running": "bold green", "complete": "bold cyan", "interrupted": "bold yellow",
               "failed": "bold red", "pending": "grey62", "skipped": "magenta"}
OPENABLE = frozenset({"running", "complete", "interrupted", "failed"})  # a run with a runs row


def state_text(state: str) -> Text:
    return Text(state, STATE_STYLE.get(state, ""))


#: parts of a cell's label every cell of a campaign may share, left out in this order when the labels
#: are too long (the title names them); the model stays: a cell's variants read after it, as a run's do
SHAREABLE = ("benchmark", "repeat")


def shared_parts(cells: Sequence[Cell]) -> frozenset[str]:
    """Which of `SHAREABLE` every cell has alike: one benchmark name, one repeat."""
    distinct = {"benchmark": len({c.bench_name for c in cells}), "repeat": len({c.repeat for c in cells})}
    return frozenset(part for part, n in distinct.items() if n == 1)


def cell_labels(cells: Sequence[Cell]) -> Labels:
    """The cells' variants named by the one rule of row labels (`spine.labels`): what every cell has
    alike is the campaign's (its title says it), each cell says what tells it apart, whole."""
    return label_rows([(c.alias, c.variants) for c in cells], enclose="()")


def variants_of(cell: Cell, label: Label | None) -> str:
    """` (telephony, effort=high)`: the cell's variants after its model (`label`: among its campaign's cells)."""
    parts = label.parts_text() if label is not None else cell_labels([cell]).rows[0].parts_text()
    return f" {parts}" if parts else ""


def label_form(cell: Cell, dropped: frozenset[str] | set[str] = frozenset(), label: Label | None = None) -> str:
    """`demo_bench × sim (telephony, effort=high) #1` without the `dropped` parts (`SHAREABLE`)."""
    head = cell.alias if "benchmark" in dropped else f"{cell.bench_name} × {cell.alias}"
    return head + variants_of(cell, label) + ("" if "repeat" in dropped else f" #{cell.repeat}")


def column_form(cells: Sequence[Cell], width: int, shared: frozenset[str], names: Labels | None = None) -> frozenset[str]:
    """What the cell column leaves out, the same for every cell: the fewest `shared` parts (in
    `SHAREABLE` order) with which every label fits `width` (all of them when none does)."""
    dropped: set[str] = set()
    labels = names.rows if names is not None else [None] * len(cells)
    for part in SHAREABLE:
        if all(len(label_form(c, dropped, n)) <= width for c, n in zip(cells, labels, strict=True)):
            break
        if part in shared:
            dropped.add(part)
    return frozenset(dropped)


def short_label(cell: Cell, width: int, dropped: frozenset[str] = frozenset(), label: Label | None = None) -> str:
    """The cell in `width` cells (`Cell.shown`) without the `dropped` parts (`column_form`: what every
    cell shares, which the title names); still too long, the benchmark and model names are cut with
    "…". What tells the cells apart (their variants: speaker, condition, effort; a repeat not
    shared) is never cut; the selected cell is whole under the table."""
    whole = label_form(cell, dropped, label)
    if len(whole) <= width:
        return whole
    tail = variants_of(cell, label) + ("" if "repeat" in dropped else f" #{cell.repeat}")
    if "benchmark" in dropped:
        return cut_name(cell.alias, max(width - len(tail), 1)) + tail
    room = max(width - len(tail) - 3, 2)  # 3: " × "
    bench_w = max(min(len(cell.bench_name), room // 2), 1)
    model_w = max(room - bench_w, 1)
    if len(cell.alias) < model_w:  # a short model leaves its room to the benchmark
        bench_w, model_w = room - len(cell.alias), len(cell.alias)
    return f"{cut_name(cell.bench_name, bench_w)} × {cut_name(cell.alias, model_w)}{tail}"


def cut_name(name: str, w: int) -> str:
    return name if len(name) <= w else name[: max(w - 1, 0)] + "…"


def cell_key(cell: Cell) -> str:
    return f"{cell.benchmark}\x1f{cell.model}\x1f{cell.repeat}"


def room_of(table: DataTable, fallback: int) -> int:
    return max(table.size.width - table.styles.scrollbar_size_vertical, 0) or fallback


# --- the list --------------------------------------------------------------------------------


LIST_COLUMNS = [("id", "campaign"), ("spec", "matrix"), ("cells", "complete"), ("now", "cells now"),
                ("started", "started"), ("speed", "speed"), ("exec", "executor")]
# always: id, matrix (names where every column fits beside them, else counts), complete, and what is
# happening now (NOW_WANT of it before the others join, cut with "…"); then start time, speed, executor
LIST_ORDER = [0, 1, 2, 4, 5, 6]
LIST_REQUIRED = 3
SPEC, NOW = 1, 3
NOW_WANT, NOW_MIN = 24, 12


def activity_text(view: CampaignView) -> Text:
    """The cells that are not complete, by state: "1 running · 1 queued · 4 skipped"."""
    t = Text()
    for state in ("running", "queued", "interrupted", "failed", "pending", "skipped"):
        if n := view.count(state):
            if t:
                t.append(" · ")
            t.append(f"{n} {state}", STATE_STYLE[state])
    return t or Text("all complete", STATE_STYLE["complete"])


def list_cells(v: CampaignView, shape: bool = False) -> tuple:
    return (v.campaign_id, v.shape if shape else v.summary, f"{v.count('complete')}/{len(v.cells)}", activity_text(v),
            when_text(v.created_at), speed_text(v.spec.speed), v.spec.executor)


class Campaigns(PollingScreen[T]):
    """What both campaign screens are: pushed (escape goes back), polled, styled alike."""

    CSS_PATH = "campaigns.tcss"
    BINDINGS = [BACK]


class CampaignsScreen(Campaigns[list[CampaignView]]):
    """Every recorded campaign, newest first; enter opens its matrix."""

    HELP_WHERE, HELP_ORDER = "campaigns", 8
    BINDINGS = [Binding("enter", "open", "Open campaign")]

    TABLE = "campaigns"

    @property
    def views(self) -> list[CampaignView] | None:
        return self.loaded

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="campaigns-status")
        yield DataTable(id="campaigns", cursor_type="row", zebra_stripes=True)
        yield Footer()

    async def read(self, store: Store) -> list[CampaignView]:
        return await campaign_views(store, self.arena.data_dir, self._benchmarks)

    def show_error(self, error: str | None) -> None:
        self.query_one("#campaigns-status", Static).update(Text(f"cannot read campaigns: {error}", "bold red"))

    def show(self, views: list[CampaignView]) -> None:
        table = self.query_one("#campaigns", DataTable)
        selected = self.selected
        room = room_of(table, self.app.size.width)
        labels = [label for _, label in LIST_COLUMNS]
        cells = [list_cells(v) for v in views]
        need = natural_widths(labels, cells)
        left = room - sum(need[c] + PAD for c in range(len(LIST_COLUMNS)) if c != SPEC) - PAD
        if need[SPEC] > left:  # the names do not fit beside everything else: counts ("2 bench × 3 models × 5")
            cells = [list_cells(v, shape=True) for v in views]
            need = natural_widths(labels, cells)
        need[SPEC] = max(min(need[SPEC], left), len(labels[SPEC]))
        shown = fit_columns(room, need, LIST_ORDER, LIST_REQUIRED, stretch=NOW, min_stretch=NOW_MIN, reserve=NOW_WANT)
        table.clear(columns=True)
        for col, w in shown.items():
            table.add_column(LIST_COLUMNS[col][1], key=LIST_COLUMNS[col][0], width=w)
        for v, row in zip(views, cells, strict=True):
            table.add_row(*(fit_cell(row[col], w) for col, w in shown.items()), key=v.campaign_id)
        ids = [v.campaign_id for v in views]
        if selected in ids:
            table.move_cursor(row=ids.index(selected))
        active = sum(v.count(*ACTIVE) for v in views)
        if not views:
            line = "no campaigns recorded (start one with `arena-tui campaign run`)"
        else:
            line = "  ·  ".join(p for p in [f"{len(views)} campaign(s)", "enter: its cells",
                                             f"{active} cell(s) queued or running" if active else "nothing running",
                                             hidden_text(labels, shown, "enter: the campaign says all")] if p)  # fmt: skip
        self.query_one("#campaigns-status", Static).update(line)

    @property
    def selected(self) -> str | None:
        table = self.query_one("#campaigns", DataTable)
        if table.row_count == 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @on(DataTable.RowSelected, "#campaigns")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        if (cid := self.selected) is not None:
            self.app.push_screen(CampaignScreen(cid))

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Open campaign", "The selected campaign's cells", self.action_open)


# --- one campaign ----------------------------------------------------------------------------

CELL_COLUMNS = [("cell", "cell"), ("status", "status"), ("turns", "turns"), ("strict", STRICT),
                ("run", "run"), ("rates", "pass rates"), ("cost", "cost (est.)"), ("why", "reason")]
# always: cell, status, turn progress, strict pass; then the run id, the per-dimension rates and
# (when a cell has one) the cost; the reason takes what is left (the selected cell is also shown
# whole under the table)
CELL_ORDER = [0, 1, 2, 3, 4, 5, 6]
CELL_REQUIRED = 4
CELL_STRETCH = 7
RATES, COST = 5, 6
MIN_CELL = 12


def matrix_cells(v: CellView, dims: list[str], run_ids: dict[str, str]) -> tuple:
    errors = len(v.tally.judge_errors) + len(v.tally.rejudge_errors)
    # the strict column beside it marks "h" already: the rates do not repeat it
    rates = rate_slots(v.tally.dimensions, dims, False, errors) if v.tally.dimensions else Text("")
    return (v.cell.shown, state_text(v.state), v.progress, cell_strict(v), run_ids.get(v.run_id or "", "–"), rates,
            cost_cell(v.cost, v.judge_cost), Text(reason_of(v), "grey62"))


def reason_of(v: CellView) -> str:
    """The cell's reason without the "bench × model: " each preflight line starts with (the row says it)."""
    return v.reason.replace(f"{v.cell.benchmark} × {v.cell.model}: ", "")


GAPS_MIN_HEIGHT = 30  # below this the gaps are one line (how many pairs, how many distinguishable)


def gaps_text(view: CampaignView, full: bool = True) -> Text:
    """The gaps between the campaign's rows, a pair a line (A → B: B − A = … : verdict, p); '' for
    one row. Not `full`: one line, how many pairs are distinguishable (`campaign show` lists them)."""
    if not full:
        pairs = [(fam, i) for fam in view.gaps.values() for i in range(len(fam.pairs))]
        real = sum(1 for fam, i in pairs if (g := fam.pairs[i].strict) is not None and g.distinguishable(fam.p(i, STRICT_KEY)))
        return Text(f"gaps between its rows, strict pass: {real} of {len(pairs)} pair(s) distinguishable "
                    "(a taller terminal, or `campaign show`, lists them)", "grey62") if pairs else Text("")
    lines = []
    for bench, fam in view.gaps.items():
        shared, name = fam.labels  # the rows by the one rule of row labels: what they share said once
        if shared.shared:
            lines.append(Text(f"{bench}: {shared.header()}", "grey62"))
        for i, pair in enumerate(fam.pairs):
            g = pair.strict
            t = Text(f"{bench}: {name[pair.a.name]} → {name[pair.b.name]}: ", "grey62")
            if g is None:
                t.append("no paired turn", "grey62")
            else:
                held = fam.p(i, STRICT_KEY)
                t.append(gap_core(g), "bold yellow" if g.distinguishable(held) else "")
                t.append(f" ({p_text(g.p)}" + (f", Holm {p_text(held)}" if held is not None and len(fam.pairs) > 1 else "")
                         + f", {g.turns} turns)", "grey62")
                if held is not None and g.distinguishable(held) != g.distinguishable():
                    t.append(f" · over {len(fam.pairs)} pairs (Holm): {verdict_word(g.distinguishable(held))}", "yellow")
            lines.append(t)
    if not lines:
        return Text("")
    head = Text(f"gaps, strict pass, paired ({family_note(view.gaps)}):", "bold")
    return Text("\n").join([head, *lines])


class CampaignScreen(Campaigns[CampaignView]):
    """One campaign's cells (benchmark × model × repeat): state, turn progress, pass rates."""

    HELP_WHERE, HELP_ORDER = "campaign", 9
    BINDINGS = [
        Binding("enter", "open_run", "Open run"),
        Binding("R", "report", "Report"),
    ]

    TABLE = "cells"
    MISSING = "no such campaign"

    def __init__(self, campaign_id: str) -> None:
        super().__init__()
        self.campaign_id = campaign_id

    @property
    def view(self) -> CampaignView | None:
        return self.loaded

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"campaign {self.campaign_id}: loading…", id="campaign-title")
        yield DataTable(id="cells", cursor_type="row", zebra_stripes=True)
        yield Static("", id="cells-legend")
        yield Static("", id="campaign-gaps")
        yield Static("", id="cell-detail")
        yield Footer()

    async def read(self, store: Store) -> CampaignView | None:
        return await campaign_view(store, self.campaign_id, self.arena.data_dir, self._benchmarks, gaps=True)

    def show_error(self, error: str | None) -> None:
        why = Text(f"campaign {self.campaign_id}: cannot read it: {error}", "bold red")
        self.query_one("#campaign-title", Static).update(why)

    @property
    def cells(self) -> list[CellView]:
        return self.view.cells if self.view is not None else []

    @property
    def cursor_cell(self) -> CellView | None:
        table = self.query_one("#cells", DataTable)
        if not self.cells or table.row_count == 0:
            return None
        return self.cells[min(table.cursor_row, len(self.cells) - 1)]

    def show(self, view: CampaignView) -> None:
        table = self.query_one("#cells", DataTable)
        current = self.cursor_cell
        room = room_of(table, self.app.size.width)
        labels = [label for _, label in CELL_COLUMNS]
        dims = slot_dims(c.tally.dimensions for c in self.cells)
        if dims:
            labels[RATES] = slots_header(dims)
        run_ids = short_ids(c.run_id for c in self.cells if c.run_id)
        cells = [matrix_cells(c, dims, run_ids) for c in self.cells]
        need = natural_widths(labels, cells)
        others = sum(need[c] + PAD for c in CELL_ORDER[1:CELL_REQUIRED])
        # the cell label gives way first (the selected cell is whole below the table), but keeps the room
        # its shortest form needs: what the cells share left out, what tells them apart whole (`short_label`)
        shared = shared_parts([c.cell for c in self.cells])
        names = cell_labels([c.cell for c in self.cells])
        least = max((len(label_form(c.cell, shared, n)) for c, n in zip(self.cells, names.rows, strict=True)), default=0)
        need[0] = max(min(need[0], room - others - PAD, max(room // 3, least)), MIN_CELL)
        note = cost_note([e for c in self.cells for e in (c.cost, c.judge_cost)])  # a cell has a cost: its column
        order = CELL_ORDER if note else [c for c in CELL_ORDER if c != COST]
        shown = fit_columns(room, need, order, CELL_REQUIRED, stretch=CELL_STRETCH)
        table.clear(columns=True)
        for col, w in shown.items():
            table.add_column(labels[col], key=CELL_COLUMNS[col][0], width=w)
        dropped = column_form([c.cell for c in self.cells], shown[0], shared, names)
        for cell_view, row, name in zip(self.cells, cells, names.rows, strict=True):
            row = (Text(short_label(cell_view.cell, shown[0], dropped, name)), *row[1:])  # Text: `[…]` is no markup
            table.add_row(*(fit_cell(row[col], w) for col, w in shown.items()), key=cell_key(cell_view.cell))
        if current is not None:
            keys = [cell_key(c.cell) for c in self.cells]
            if cell_key(current.cell) in keys:
                table.move_cursor(row=keys.index(cell_key(current.cell)))
        heuristic = any(c.tally.heuristic for c in self.cells if c.total)
        hidden = hidden_text([label for _, label in CELL_COLUMNS], shown if note else {**shown, COST: 0},
                             "the selected cell is below")
        legend = rates_legend(dims if RATES in shown else [], heuristic=heuristic,
                              human=any(c.tally.human for c in self.cells if c.total))
        costs = Text(note, "grey62") if note and COST in shown else Text("")
        self.query_one("#cells-legend", Static).update(Text("  ·  ").join(t for t in (legend, costs, Text(hidden)) if t))
        self.query_one("#campaign-gaps", Static).update(
            gaps_text(self.view, self.app.size.height >= GAPS_MIN_HEIGHT) if self.view is not None else "")
        self._title()
        self._detail()

    def _title(self) -> None:
        assert self.view is not None
        v = self.view
        t = Text.assemble((f"campaign {v.campaign_id}", "bold"), f"  {v.summary}  ·  speed {speed_text(v.spec.speed)}  ·  "
                          f"{v.spec.executor}  ·  started {when_text(v.created_at)}  ·  "
                          f"{v.count('complete')}/{len(v.cells)} complete  ")
        t.append_text(activity_text(v))
        if shared := cell_labels([c.cell for c in self.cells]).header(noun="cells"):  # said on no cell's line
            t.append(f"  ·  {shared}", "cyan")
        if v.caps:  # the provider caps it was given
            t.append(f"  ·  {v.caps}")
        if v.pace:  # its live coordinator's admission control
            t.append(f"  ·  {v.pace}", "yellow" if "busy" in v.pace else "")
        self.query_one("#campaign-title", Static).update(t)

    def _detail(self) -> None:
        """The selected cell in full: its run and why it is in its state (never cut)."""
        c = self.cursor_cell
        if c is None:
            self.query_one("#cell-detail", Static).update("")
            return
        t = Text.assemble((c.cell.shown, "bold"), "  ", state_text(c.state))
        t.append(f"  run {c.run_id}" if c.run_id else "  no run yet")
        if c.total:
            t.append(f"  {STRICT} ").append_text(cell_strict(c))
        if c.cost.reports or c.judge_cost.reports:  # what its run cost, the judge's apart (`campaign show`'s)
            t.append(f"  {costs_text(c.cost, c.judge_cost, c.strict[0])}", "grey70")
        if c.reason:
            t.append(f"  —  {reason_of(c)}", "grey62")
        if c.state in OPENABLE:
            t.append("  (enter: open the run)", "grey50")
        self.query_one("#cell-detail", Static).update(t)

    @on(DataTable.RowHighlighted, "#cells")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.view is not None:
            self._detail()

    @on(DataTable.RowSelected, "#cells")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_run()

    def action_open_run(self) -> None:
        """The cell's run, as the runs list opens it: live when this app runs it, else as stored."""
        c = self.cursor_cell
        if c is None:
            return
        if c.run_id is None or c.state not in OPENABLE:
            why = f": {c.reason}" if c.reason else ""
            self.notify(f"{c.cell.shown} is {c.state}{why}; it has no recorded run to open yet", severity="warning",
                        markup=False)
            return
        self.arena.open_run(c.run_id)

    @work(exclusive=True, group="report")
    async def action_report(self) -> None:
        """The campaign's report (`arena-tui report CAMPAIGN DIR`: CSVs, summary.md, report.html)
        into the exports folder; drawn through `call_later` (the screen may have closed meanwhile)."""
        from ..compare.report import build_report  # deferred: the report renderer (numpy, SVG) loads only when asked for
        from ..judge.locate import find_benchmark  # deferred: benchmark reading loads only when asked for

        store = self.arena.store
        if store is None:
            self.call_later(self.notify, f"no report: {self.arena.store_error}", severity="error")
            return
        dest = exports_dir() / f"campaign-{self.campaign_id}-report"

        def benchmark_for(name: str):
            try:
                return find_benchmark(name, self.arena.data_dir)
            except LookupError:
                return None

        self.call_later(self.notify, f"writing the report of campaign {self.campaign_id}…")
        try:
            _, board, paths = await build_report(store, [self.campaign_id], dest, benchmark_for,
                                                 expand=lambda raw: campaign_runs(store, raw))
        except (LookupError, OSError) as e:
            self.call_later(self.notify, f"no report: {e}", severity="error")
            return
        self.call_later(self.notify, f"report of {len(board.runs)} runs written to {dest}", timeout=10)

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Open cell's run", "The selected cell's run (live if it is running here)",
                            self.action_open_run)
        yield SystemCommand("Campaign report", "Write this campaign's report (CSVs, summary.md, report.html) "
                            "to the exports folder", self.action_report)

