"""The runs list: every stored run (and every live one), newest first.

Its figures are a run's tally by the one rule (`arena_tui.verdicts`, a stored run's through
`compare.stored.run_tally`): the strict pass over the judged turns the model played; the turns
not the model's doing beside the progress (`8/10 · 2 stopped`), those the judge could not score
beside the rates (`judge err 1`, `1 not judged`); `no answer` for a run in which the model got no
turn, `never answered — check the setup` where the rates of one it heard and never answered would be
(its strict pass counts every turn, failed); a resumed run's duration is the time it ran (`RunRow.active_s`); a run a
campaign's re-run replaced says `superseded` (it counts nowhere). `/` finds a run by model,
benchmark, status or id; `f` narrows the list to those as you type."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..messages import LiveUpdate, RunFinished
from ..compare.costs import cost_note
from ..compare.load import stored_figures
from ..cost import Estimate
from ..verdicts import APART_REASONS, NEVER_ANSWERED, NO_ANSWER, PLAY_REASONS, STRICT, UNJUDGED, Tally
from ..widgets.board_cells import cost_cell
from ..widgets.dimensions import rate_slots, rates_legend, slot_dims, slots_header, strict_text
from ..widgets.run_header import STATUS_STYLE
from ..widgets.fit import PAD, as_text, fit_cell, fit_columns, fit_lines, hidden_text, natural_widths
from ..widgets.query_line import QueryLine
from .find import FILTER_KEY, FIND_KEYS, Finding, filter_line, find_line
from .polling import PollingScreen
from arena_tui.spine.paths import exports_dir
from arena_tui.spine.ids import short_ids
from arena_tui.spine.labels import MODEL_KEPT, Label, Labels, cut_name, label_rows
from arena_tui.spine.source import tag as source_tag, variant_labels
from arena_tui.spine.times import as_utc, duration_text, when_text

if TYPE_CHECKING:
    from ..launcher import RunRequest
    from ..store import RunRow, Store


RUN_COLUMNS = [("id", "run"), ("bench", "benchmark"), ("model", "model"), ("status", "status"),
               ("progress", "turns"), ("strict", STRICT), ("started", "started"), ("dur", "duration"),
               ("rates", "pass rates"), ("cost", "cost (est.)")]
ID, BENCH, MODEL, STATUS, PROGRESS, STRICT_COL, STARTED, DUR, RATES, COST = range(len(RUN_COLUMNS))
# one line per run when run, benchmark, status, turns (and the turns counted apart), strict pass, pass
# rates and at least MODEL_MIN of the model fit; the model then takes up to MODEL_WANT before duration
# and start time join, and the rest after them. Narrower, each run takes two lines: model over
# benchmark, status over turns (and those counted apart), the rates over the strict pass.
SINGLE_REQUIRED = [ID, BENCH, STATUS, PROGRESS, STRICT_COL, RATES]
SINGLE_OPTIONAL = [DUR, STARTED, COST]
MODEL_MIN = 16
MODEL_WANT = 24
STACKED = [("id", "run"), ("model", "model / benchmark"), ("status", "status"), ("rates", "pass rates")]


def model_text(r: dict[str, Any], width: int | None = None, label: Label | None = None) -> Text:
    """`model / provider [SIM] (telephony, effort=high)`, as the run screen heads it. How its input
    differed (`RunRow.variants`) is said by the one rule of row labels (`spine.labels`: `label`, the
    run's among the runs listed). In `width`: without the provider, then whole parts dropped (and
    named) from the least telling end, then the model cut; never its source tag (a simulator's scores
    are no model's), never what tells the run apart from the others listed."""
    model, provider = r.get("model", "?"), r.get("provider", "?")
    tag = source_tag(r.get("source"))
    label = label if label is not None else run_labels([r]).rows[0]
    whole = label.parts_text()
    if provider not in (model, "?") and (width is None or len(f"{model} / {provider}{tag} {whole}".rstrip()) <= width):
        return _model_line(f"{model} / {provider}", tag, whole)
    parts = label.parts_text(None if width is None else width - len(model) - len(tag) - 1)
    if width is not None and len(model) + len(tag) + (len(parts) + 1 if parts else 0) > width:  # its middle goes
        return _model_line(cut_name(model, width - len(tag) - (len(parts) + 1 if parts else 0)), tag, parts)
    return _model_line(model, tag, parts)


def _model_line(name: str | Text, tag: str, parts: str) -> Text:
    return Text.assemble(name, (tag, "bold magenta"), (f" {parts}" if parts else "", "cyan"))


def run_labels(rows: Sequence[dict[str, Any]]) -> Labels:
    """The runs listed together named by the one rule (`spine.labels`): what they all share said once
    under the list, each run's line what tells it apart."""
    return label_rows([(r.get("model", "?"), tuple(r.get("variants") or ())) for r in rows], enclose="()")


def model_least(r: dict[str, Any], label: Label) -> int:
    """The fewest cells a run's model line takes: a few letters of the model, its tag, what tells it apart."""
    return min(len(r.get("model", "?")), MODEL_KEPT) + len(source_tag(r.get("source"))) + 1 + label.least


def live(r: dict[str, Any]) -> bool:
    """Still recording: its turns to come are not "not played", nor is it "no answer" yet."""
    return r.get("status") in ("running", "starting")


def apart_of(r: dict[str, Any], reasons: tuple[str, ...] = APART_REASONS) -> str:
    """The run's turns counted apart for `reasons`, `2 not played · 1 stopped` ('' when none; while
    it records, the turns still to come or being judged are not said)."""
    t: Tally | None = r.get("tally")
    return t.apart_text(live=live(r), reasons=reasons) if t is not None else ""


def run_cells(r: dict[str, Any], now: dt.datetime, dims: list[str], shown_id: str, marked: bool = False,
              label: Label | None = None) -> tuple:
    """One run's cells in RUN_COLUMNS order (a run marked for comparison gets a dot; `label`: its name
    among the runs listed, `run_labels`)."""
    st = r.get("status", "?")
    status = Text(st, STATUS_STYLE.get(st, ""))
    run: RunRow | None = r.get("run")
    if run is not None and run.superseded_by:  # replaced by a re-run: counts nowhere
        status.append(" superseded", "italic grey50")
    started, ended = r.get("started"), r.get("ended")
    dur = run.active_s(now) * 1000 if run is not None else ((ended or now) - started).total_seconds() * 1000 if started else None
    progress = Text(f"{r.get('done', 0)}/{r.get('total', 0)}")
    if apart := apart_of(r, PLAY_REASONS):
        progress.append(f" · {apart}", "yellow")
    t: Tally | None = r.get("tally")
    unscored = t is not None and not t.scored and not live(r)
    mute = t is not None and t.never_answered and not live(r)  # counted; said where its rates would be
    return (
        Text.assemble(("● ", "bold cyan"), shown_id) if marked else shown_id,
        r.get("benchmark", "?"),
        model_text(r, label=label),
        status,
        progress,
        strict_text(r.get("tally"), live=live(r), mute=False),
        when_text(started),
        duration_text(dur),
        Text(NO_ANSWER, "grey50") if unscored else Text(NEVER_ANSWERED, "bold red") if mute else
        rate_slots(r.get("rates") or {}, dims, bool(r.get("heuristic")), r.get("judge_errors", 0), apart_of(r, (UNJUDGED,))),
        cost_cell(*r.get("cost", (None, None))),
    )


def single_layout(room: int, need: list[int], priced: bool = False, least: int = 0) -> dict[int, int] | None:
    """{column: width} of the one-line layout, or None when it does not fit `room` (`priced`: a run
    has a cost, its column is offered last; `least`: the model column's narrowest, `model_least`)."""
    model_min = min(need[MODEL], max(MODEL_MIN, least))
    if sum(need[c] + PAD for c in SINGLE_REQUIRED) + model_min + PAD > room:
        return None
    optional = SINGLE_OPTIONAL if priced else [c for c in SINGLE_OPTIONAL if c != COST]
    return fit_columns(room, need, SINGLE_REQUIRED + optional, len(SINGLE_REQUIRED), stretch=MODEL,
                       min_stretch=model_min, reserve=max(MODEL_WANT, model_min))


def stacked_model(r: dict[str, Any], label: Label, bench: str, width: int) -> Text:
    """The model over the benchmark; when what tells the run apart (`spine.labels`: its parts never
    dropped) does not fit beside the model, it has a line of its own between them, never cut."""
    model, tag = r.get("model", "?"), source_tag(r.get("source"))
    line = model_text(r, width, label)
    if label.fixed and len(model) + len(tag) + 1 + len(label.parts_text(width - len(model) - len(tag) - 1)) > width:
        line = Text.assemble(model_text(r, width, Label(model, ())), "\n", (label.parts_text(width), "cyan"))
    return Text("\n").join([line, Text(bench, "italic")])


def stacked_rows(table: DataTable, room: int, order: list[tuple[str, dict[str, Any]]], cells: list[tuple],
                 rates_label: str, need: list[int], names: Labels) -> None:
    """Two lines a run: id over duration, model over benchmark, status over turns (and those counted
    apart), the rates over the strict pass; three when what tells the run apart needs its own line."""
    strict = [Text.assemble((f"{STRICT} ", "grey62"), row[STRICT_COL]) for row in cells]
    id_w = max(need[ID], need[DUR])
    status_w = max([need[STATUS], need[PROGRESS]])
    rates_w = max([need[RATES], *(t.cell_len for t in strict)])
    model_w = max(room - id_w - status_w - rates_w - 4 * PAD, len("model"))
    labels = [label for _, label in STACKED[:-1]] + [rates_label]
    for (key, _), label, w in zip(STACKED, labels, (id_w, model_w, status_w, rates_w), strict=True):
        table.add_column(label, key=key, width=w)
    for (run_id, r), row, pass_line, name in zip(order, cells, strict, names.rows, strict=True):
        model = stacked_model(r, name, row[BENCH], model_w)
        table.add_row(fit_lines(Text("\n").join([as_text(row[ID]), Text(row[DUR], "grey62")]), id_w),
                      fit_lines(model, model_w),
                      fit_lines(Text("\n").join([as_text(row[STATUS]), as_text(row[PROGRESS])]), status_w),
                      fit_lines(Text("\n").join([as_text(row[RATES]), pass_line]), rates_w), key=run_id,
                      height=len(model.plain.split("\n")))


def default_export_dir(data_dir: Path | None) -> Path:
    """Where exports go unless the user says otherwise (never into the benchmark data)."""
    return exports_dir()


def run_matches(r: dict[str, Any], text: str) -> bool:
    """Whether a run's model, provider, benchmark, status, id or variants holds `text` (case aside)."""
    text = text.casefold().strip()
    fields = [str(r.get(k) or "") for k in ("model", "provider", "benchmark", "status", "run_id")]
    return any(text in f.casefold() for f in [*fields, *(r.get("variants") or ())])


class RunsScreen(Finding, PollingScreen[dict[str, dict[str, Any]]]):
    """Polled like the campaign screens: runs recorded by another process (a campaign in another
    terminal) appear here too."""

    HELP_WHERE, HELP_ORDER = "runs list", 1
    TABLE = FIND_TABLE = "runs"
    BINDINGS = [
        Binding("enter", "open", "Open"),
        Binding("n", "new_run", "New run"),
        # in the line above the table, ? and the palette; the footer keeps what fits 80 columns
        Binding("t", "replay", "Step through", show=False),
        Binding("d", "delete", "Delete", show=False),
        Binding("e", "export", "Export", show=False),
        Binding("space", "mark", "Mark", show=False),
        Binding("equals_sign", "compare", "Compare marked", show=False),
        Binding("L", "app.leaderboard", "Leaderboard"),
        Binding("C", "app.campaigns", "Campaigns"),
        FILTER_KEY,
        *FIND_KEYS,
        Binding("escape", "back", "Close find/filter", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, Any]] = {}
        self.now: dt.datetime | None = None  # fixed clock for deterministic snapshots
        self.marked: list[str] = []  # run ids marked for comparison (the two newest), in marking order
        # run -> (what it was tallied from, its tally, its cost, its judge's)
        self._tallies: dict[str, tuple[Any, Tally, Estimate, Estimate]] = {}
        self.narrow = ""  # the filter line's text: the runs shown hold it

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="runs-status")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield filter_line("model, benchmark, status or id")
        yield find_line("model, benchmark, status or id")
        yield Static("", id="runs-legend")
        yield Footer()

    def on_resize(self) -> None:
        if self.is_mounted:  # once the table has its new size: the columns are fitted to it
            self.call_after_refresh(self._render_rows)

    def on_live_update(self, message: LiveUpdate) -> None:
        if message.kinds & {"run_started", "turn_ended", "run_ended", "judgement"}:
            self.load()

    def on_run_finished(self, message: RunFinished) -> None:
        self.load()

    @property
    def selected(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    async def read(self, store: Store) -> dict[str, dict[str, Any]]:
        """The stored runs' rows (the live ones are laid over them when drawn). Pass rates are the
        report's (`arena_tui.compare.stored.run_tally`: over the turns each run set out to
        run). A run is tallied again only while it records or when its judgements
        (`Reader.judgement_marks`), turn rows or status changed: reading every run of a
        leaderboard-sized store is most of a second on the UI's loop."""
        rows: dict[str, dict[str, Any]] = {}
        marks = await store.judgement_marks()
        runs = await store.list_runs()
        keys = {r.run_id: (marks.get(r.run_id), r.turns_done, r.status, r.ended_at) for r in runs}
        stale = [r.run_id for r in runs if r.status == "running" or (c := self._tallies.get(r.run_id)) is None
                 or c[0] != keys[r.run_id]]
        fresh = await stored_figures(store, stale, self.arena.data_dir, self._benchmarks) if stale else {}
        tallies: dict[str, tuple[Any, Tally, Estimate, Estimate]] = {}
        for r in runs:
            _, t, cost, judge = (keys[r.run_id], *fresh[r.run_id]) if r.run_id in fresh else self._tallies[r.run_id]
            tallies[r.run_id] = (keys[r.run_id], t, cost, judge)
            rows[r.run_id] = {
                "benchmark": r.benchmark, "model": r.model, "provider": r.provider,
                "source": r.source, "variants": r.variants, "status": r.status, "done": r.turns_done,
                "total": r.turns_total, "started": as_utc(r.started_at), "ended": as_utc(r.ended_at),
                "run": r, "tally": t, "rates": t.dimensions, "heuristic": t.heuristic,
                "judge_errors": len(t.judge_errors) + len(t.rejudge_errors), "cost": (cost, judge),
            }
        self._tallies = tallies
        return rows

    def show(self, result: dict[str, dict[str, Any]]) -> None:
        self.query_one("#runs-status", Static).update(
            f"{len(result)} stored run(s)  ·  enter open · t step through · d delete · e export · "
            "space mark, = compare two · / find · f filter · ? every key")
        self._with_live(result)

    def show_error(self, error: str | None) -> None:
        arena = self.arena
        why = (Text(f"store unavailable: {arena.store_error}; live runs only", "bold yellow") if arena.store is None
               else Text(f"cannot read runs: {error}", "bold red"))
        self.query_one("#runs-status", Static).update(why)
        self._with_live({})

    def _with_live(self, stored: dict[str, dict[str, Any]]) -> None:
        """The stored rows with this app's live runs laid over them (their state is newer than the store's)."""
        arena = self.arena
        rows = {run_id: dict(row) for run_id, row in stored.items()}
        for run_id, st in arena.live.items():
            row = rows.setdefault(run_id, {"started": dt.datetime.now(dt.UTC), "ended": None})
            row.update(benchmark=st.benchmark, model=st.started.model if st.started else "?",
                       provider=st.started.provider if st.started else "?",
                       source=st.source,
                       done=st.turns_done, total=st.turns_total, status=st.status)
            row.setdefault("variants", variant_labels(st.started.recorded) if st.started else ())
            if not arena.running(run_id) and row["status"] == "running":
                row["status"] = "interrupted"
            if run_id in stored:  # its rates are the store's, by the report's rule (`read`)
                continue
            tallied = st.tally()  # a run the store has not got (yet, or the store is unavailable)
            row["tally"], row["cost"] = tallied, (st.costs.model(st.started.model if st.started else ""), st.costs.judge())
            if tallied.dimensions or tallied.judge_errors or tallied.rejudge_errors:
                row["rates"], row["heuristic"] = tallied.dimensions, st.any_heuristic
                row["judge_errors"] = len(tallied.judge_errors) + len(tallied.rejudge_errors)
        for run_id, row in rows.items():
            row["run_id"] = run_id
        self.rows = rows
        self._render_rows()

    def _render_rows(self) -> None:
        table = self.query_one("#runs", DataTable)
        selected = self.selected
        now = self.now or dt.datetime.now(dt.UTC)
        order = sorted(self.rows.items(), key=lambda kv: kv[1].get("started") or now, reverse=True)
        if self.narrow:
            order = [(run_id, r) for run_id, r in order if run_matches(r, self.narrow)]
            self.query_one("#filter", QueryLine).say(f"{len(order)} of {len(self.rows)} runs")
        room = max(table.size.width - table.styles.scrollbar_size_vertical, 0) or self.app.size.width
        shown_ids = short_ids(self.rows)
        dims = slot_dims(r.get("rates") or {} for _, r in order)
        heuristic = any(r.get("heuristic") and r.get("rates") for _, r in order)
        names = run_labels([r for _, r in order])
        cells = [run_cells(r, now, dims, shown_ids[rid], marked=rid in self.marked, label=label)
                 for (rid, r), label in zip(order, names.rows, strict=True)]
        labels = [label for _, label in RUN_COLUMNS]
        if dims:
            labels[RATES] = slots_header(dims)
        need = natural_widths(labels, cells)
        table.clear(columns=True)
        priced = any(c is not None and c.reports for _, r in order for c in r.get("cost", ()))
        least = max((model_least(r, label) for (_, r), label in zip(order, names.rows, strict=True)), default=0)
        layout = single_layout(room, need, priced, least)
        if layout is not None:
            for col, w in layout.items():
                table.add_column(labels[col], key=RUN_COLUMNS[col][0], width=w)
            for (run_id, r), row, label in zip(order, cells, names.rows, strict=True):
                row = (*row[:MODEL], model_text(r, layout[MODEL], label), *row[MODEL + 1:])
                table.add_row(*(fit_cell(row[col], w) for col, w in layout.items()), key=run_id)
        else:
            stacked_rows(table, room, order, cells, labels[RATES], need, names)
        if selected in dict(order):  # (a run the filter hides has no row to keep the cursor on)
            table.move_cursor(row=table.get_row_index(selected))
        shown = layout if layout is not None else {c: 0 for c in range(len(RUN_COLUMNS)) if c not in (STARTED, COST)}
        if not priced:  # no run has a cost: no column to miss
            shown = {**shown, COST: 0}
        hidden = hidden_text([label for _, label in RUN_COLUMNS], shown, "enter opens the run")
        human = any((t := r.get("tally")) is not None and t.human for _, r in order)
        legend = rates_legend(dims, heuristic=heuristic, human=human)
        gone = Text("superseded: a campaign's re-run replaced it, it counts nowhere", "grey50") \
            if any((run := r.get("run")) is not None and run.superseded_by for _, r in order) else Text()
        note = cost_note([c for _, r in order for c in r.get("cost", ()) if c is not None]) if layout and COST in layout else None
        priced_text = Text(note.split(" (", 1)[0], "grey62") if note else Text()
        shared = Text(names.header(noun="runs"), "cyan")  # said once: on no run's line
        self.query_one("#runs-legend", Static).update(
            Text("  ·  ").join(t for t in (shared, legend, gone, priced_text, Text(hidden)) if t))
        self.refind()

    def found(self, text: str) -> list[str]:
        table = self.query_one("#runs", DataTable)
        return [str(k.value) for k in table.rows if run_matches(self.rows.get(str(k.value), {}), text)]

    def filter_changed(self, text: str) -> None:
        self.narrow = text.strip()
        self._render_rows()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    # --- actions -------------------------------------------------------------------------
    def action_open(self) -> None:
        if (run_id := self.selected) is not None:
            self.arena.open_run(run_id)

    def action_replay(self) -> None:
        """Step through a stored run turn by turn (opening it shows the finished run)."""
        if (run_id := self.selected) is not None:
            if self.arena.running(run_id):
                self.notify("the run is still running: open it to watch it live", severity="warning")
                return
            self.arena.open_replay(run_id, stepping=True)

    def action_mark(self) -> None:
        if (run_id := self.selected) is not None:
            keep = [m for m in self.marked if m != run_id]
            self.marked = keep if run_id in self.marked else [*keep, run_id][-2:]  # the two newest marks
            self._render_rows()

    def action_compare(self) -> None:
        from .compare import CompareScreen  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        marked = [m for m in self.marked if m in self.rows]
        if len(marked) != 2:
            self.notify("mark two runs (space), then = compares them", severity="warning")
            return
        if any(self.arena.running(m) for m in marked):
            self.notify("a marked run is still recording: compare it once it has ended", severity="warning")
            return
        self.app.push_screen(CompareScreen(run_ids=(marked[0], marked[1])))

    def action_new_run(self) -> None:
        from .dialogs.new_run import NewRunDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        def started(request: RunRequest | None) -> None:
            if request is not None:
                run_id = self.arena.start_run(request.benchmark, request.settings, judge=request.judge)
                if run_id:
                    self.arena.open_run(run_id)

        self.app.push_screen(NewRunDialog(self.arena.data_dir, self.arena.launcher), started)

    def action_back(self) -> None:
        """escape closes an open find or filter line; the runs list is the first screen: nothing is under it."""
        self.close_query()

    def action_delete(self) -> None:
        from .dialogs.confirm import ConfirmDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        run_id = self.selected
        if run_id is None:
            return
        if self.arena.running(run_id):
            self.notify("stop the run before deleting it", severity="warning")
            return
        if not self.settled("d", f"delete run {run_id}"):  # a `d` meant for the screen before (compare's)
            return

        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            self.arena.live.pop(run_id, None)
            if (store := self.arena.store) is not None:
                try:
                    await store.delete_run(run_id)
                except Exception as e:
                    self.notify(f"delete failed: {e}", severity="error")
                    return
            self.notify(f"deleted {run_id}")
            self.load()

        self.app.push_screen(ConfirmDialog(f"Delete run {run_id} and all its events, audio and judgements?"), confirmed)

    def action_export(self) -> None:
        from .dialogs.export import ExportDialog  # deferred: a screen's module loads when it is first opened (keeps the monitor's start short)

        run_id = self.selected
        if run_id is None:
            self.notify("no run selected", severity="warning")
            return
        arena = self.arena
        if arena.store is None:
            self.notify(f"cannot export: {arena.store_error}", severity="error")
            return
        if arena.running(run_id):
            self.notify(f"{run_id} is still running: the export holds what is recorded so far", severity="warning")
        self.app.push_screen(ExportDialog(run_id, default_export_dir(arena.data_dir)))

    def palette_commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("New run", "Start a benchmark run (dialog)", self.action_new_run)
        yield SystemCommand("Open run", "Open the selected run", self.action_open)
        yield SystemCommand("Replay step by step", "Step through the selected stored run turn by turn",
                            self.action_replay)
        yield SystemCommand("Delete run", "Delete the selected run (asks first)", self.action_delete)
        yield SystemCommand("Export run", "Export the selected run", self.action_export)
        yield SystemCommand("Mark run", "Mark the selected run for comparison (space)", self.action_mark)
        yield SystemCommand("Compare marked runs", "The two marked runs side by side, turn by turn", self.action_compare)
        yield SystemCommand("Find a run", "By model, benchmark, status or id (/; ] next, [ previous)", self.action_find)
        yield SystemCommand("Filter runs", "Narrow the list by model, benchmark, status or id as you type (f)",
                            self.action_filter)
