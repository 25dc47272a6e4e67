"""Two runs (or two leaderboard rows) side by side, turn by turn, differences highlighted; under
the table, the selected turn in full: the golden answer, what each side said with the other's
differences marked word by word, the calls, latencies, verdicts and causes (`widgets/pair_turn.py`).

The comparison is `arena_tui.compare.pair` (`compare_runs`, `compare_models`): which fields
differ is decided there; this screen only highlights them. The title says the gap in strict pass,
paired (`compare.gap`: B − A, its interval, whether it is more than noise, the turns left out and
how many decide it; `d` shows those turns alone), and what each side cost (`compare.columns.costs_text`,
the judge's apart; the line under them says of which prices: `compare.costs.cost_note`). Two runs are read in a worker that
posts `PairLoaded`; two rows come ready from the leaderboard. `/` finds turns by what was said,
answered, reasoned or caused (search's texts, `compare.search`).
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from ..compare.columns import costs_text
from ..compare.costs import cost_note
from ..compare.gap import PairGap, pair_gap, row_side, run_side
from ..compare.leaderboard import BoardRow
from ..compare.stored import StoredRun
from ..compare.load import load_stored
from ..compare.pair import ModelTurnComparison, Side, TurnComparison, compare_models, compare_runs
from ..compare.search import fields, matched_in
from ..compare.word_diff import shared
from ..widgets.board_cells import MUTED, ms_text, pattern_text, verdict_text
from ..widgets.fit import PAD, fit_cell, fit_columns, natural_widths
from ..widgets.pair_gap import gap_line
from ..widgets.pair_turn import pair_turn
from ..timing import speed_text
from ..verdicts import NEVER_ANSWERED
from .base import BACK, ArenaScreen
from .find import FIND_KEYS, Finding, find_line

DIFF = "bold on #6b4a00"  # a cell whose value differs between the two sides (its own colours kept)
CELL_MAX = 30  # each side's calls: cut past this ("…"); the turn detail has them whole
DIFFERS_MIN = 12  # what differs is cut no narrower than this
USER_MIN = 12  # what the user said takes what is left, cut; narrower, it goes (named in the title)


class PairLoaded(Message):
    def __init__(self, runs: list[StoredRun] | None, error: str | None = None) -> None:
        super().__init__()
        self.runs = runs
        self.error = error


def _mark(text: Text | str, differs: bool) -> Text:
    t = text if isinstance(text, Text) else Text(text)
    if differs:
        t = t.copy()
        t.stylize(DIFF)
    return t


def _calls(calls: list[str]) -> str:
    return "; ".join(calls) if calls else "–"


def _shared(a: Side | None, b: Side | None) -> Text:
    """The share of words the two answers have in common (`100%`: the same words), `–` when a side has none."""
    share = shared(a.answer, b.answer) if a is not None and b is not None and a.played and b.played else None
    if share is None:
        return Text("–", MUTED)
    return Text(f"{100 * share:.0f}%", "green" if share >= 0.999 else "yellow" if share >= 0.5 else "red")


def _sides(t: TurnComparison | ModelTurnComparison) -> list[Side]:
    """Every side of a turn: the two runs', or each repeat that played it."""
    return [t.a, t.b] if isinstance(t, TurnComparison) else [s for _, s in (*t.a.repeats, *t.b.repeats)]


def _firsts(t: TurnComparison | ModelTurnComparison) -> tuple[Side | None, Side | None]:
    if isinstance(t, TurnComparison):
        return t.a, t.b
    return (t.a.repeats[0][1] if t.a.repeats else None), (t.b.repeats[0][1] if t.b.repeats else None)


def _latency_note(run: StoredRun) -> str:
    """Why a side's latency is not compared (the pane says it under the side), "" when it is."""
    return f"({run.latency_excluded})" if run.latency_excluded else ""


def _delta(a: float | None, b: float | None) -> Text:
    if a is None or b is None:
        return Text("–", MUTED)
    d = b - a
    return Text(f"{d:+,.0f} ms", "red" if d >= 0.5 else "green" if d <= -0.5 else MUTED)


class CompareScreen(Finding, ArenaScreen):
    HELP_WHERE, HELP_ORDER = "compare", 7
    HELP_EXTRA = [Binding("up,down", "", "Select turn: it shows in full under the table")]
    CSS_PATH = "board.tcss"
    FIND_TABLE = "pair"
    BINDINGS = [
        BACK,
        Binding("d", "toggle_diff", "Only differences"),
        *FIND_KEYS,
    ]

    def __init__(
        self, *, run_ids: tuple[str, str] | None = None, rows: tuple[BoardRow, BoardRow] | None = None
    ) -> None:
        super().__init__()
        if (run_ids is None) == (rows is None):
            raise ValueError("CompareScreen: give two run ids or two leaderboard rows")
        self.run_ids = run_ids
        self.board_rows = rows
        self.runs: list[StoredRun] = []
        self.turns: list[TurnComparison] | list[ModelTurnComparison] = []
        self.only_differences = False
        self.hidden: list[str] = []  # the columns this width leaves out
        self.gap: PairGap | None = None  # the two sides' gap in strict pass, paired

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…" if self.run_ids else "", id="pair-title")
        yield DataTable(id="pair", cursor_type="row", zebra_stripes=True, fixed_columns=1)
        with VerticalScroll(id="pair-pane"):
            yield Static("", id="pair-turn")
        yield find_line("the turns: said, answered, reasons, causes")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#pair", DataTable).focus()
        if self.board_rows is not None:
            a, b = self.board_rows
            self.turns = compare_models(a, b)
            self.gap = pair_gap(row_side(a), row_side(b))
            self.paint()
        else:
            self.load()

    @work(exclusive=True, group="compare-load")
    async def load(self) -> None:
        assert self.run_ids is not None
        store = self.arena.store
        if store is None:
            self.post_message(PairLoaded(None, f"no database: {self.arena.store_error}"))
            return
        try:
            runs, _ = await load_stored(store, list(self.run_ids), self.arena.data_dir)
        except Exception as e:
            self.post_message(PairLoaded(None, str(e) or type(e).__name__))
            return
        self.post_message(PairLoaded(runs))

    def on_pair_loaded(self, message: PairLoaded) -> None:
        if message.runs is None:
            self.query_one("#pair-title", Static).update(Text(f"cannot compare: {message.error}", "bold red"))
            return
        self.runs = message.runs
        self.turns = compare_runs(self.runs[0], self.runs[1])
        self.gap = pair_gap(run_side(self.runs[0]), run_side(self.runs[1]))
        self.paint()

    # --- rendering -----------------------------------------------------------------------
    def _title(self) -> Text:
        differing = [t for t in self.turns if t.differences]
        counts: dict[str, int] = {}
        for t in differing:
            for d in t.differences:
                counts[d] = counts.get(d, 0) + 1
        title = Text()
        # each side's cost, when either recorded usage or a judge's request (the runs list's rule)
        note = cost_note([c for side in (self.runs or self.board_rows or ()) for c in (side.cost, side.judge_cost)])
        priced = note is not None
        if self.runs:
            for side, run in zip("AB", self.runs):
                title.append(f"{side}: ", "bold")
                title.append(f"{run.run_id}  {run.group}  {run.row.benchmark}  {speed_text(run.speed)}  {run.row.status}"
                             f"  judge {run.judge_label}")
                if run.tally.never_answered:  # counted, each turn its failure
                    title.append(f"  {NEVER_ANSWERED}", "bold red")
                if run.latency_excluded:
                    title.append(f"  (latency not compared: {run.latency_excluded})", "yellow")
                if priced:
                    title.append(f"  {costs_text(run.cost, run.judge_cost, run.tally.strict[0])}", "grey70")
                title.append("\n")
        elif self.board_rows:
            for side, row in zip("AB", self.board_rows):
                title.append(f"{side}: ", "bold")
                title.append(f"{row.model}  {row.benchmark}  {len(row.runs)} repeat(s)  judge {row.judge}")
                if row.never_answered:
                    title.append(f"  {len(row.never_answered)} {NEVER_ANSWERED}", "bold red")
                if priced:
                    title.append(f"  {costs_text(row.cost, row.judge_cost, row.strict.passes)}", "grey70")
                title.append("\n")
        if note:  # what the costs are
            title.append(f"{note}\n", MUTED)
        judges = {run.judge_label for run in self.runs} or {row.judge for row in self.board_rows or ()}
        if len(judges) > 1:  # each side's verdicts are its own judge's: a difference may be the judges'
            title.append("two judges: a verdict that differs may be the judges' difference, not the models'\n", "bold yellow")
        title.append(f"{len(differing)}/{len(self.turns)} turns differ", "bold yellow" if differing else "green")
        if counts:
            title.append(" · " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        title.append("  (d: only differences)" + (" · showing differences only" if self.only_differences else ""), MUTED)
        if self.gap is not None:
            title.append("\n").append_text(gap_line(self.gap, self.size.width or self.app.size.width))
        if self.hidden:
            title.append(f"\nhidden at this width: {', '.join(self.hidden)} (a wider terminal shows them)", "yellow")
        return title

    def on_resize(self) -> None:
        if self.turns:  # the columns are fitted to the width
            self.call_after_refresh(self.paint)

    def paint(self) -> None:
        """The turns in the columns this width holds: turn, what differs and both verdicts always,
        then latency, the calls (or repeats) and what the user said; those left out are named in
        the title (never silently off-screen)."""
        table = self.query_one("#pair", DataTable)
        table.clear(columns=True)
        models = self.board_rows is not None
        heads = ["turn", "differs", "A", "B"]
        if models:
            heads += ["A repeats", "B repeats", "A v2v p50", "B v2v p50"]
        else:
            heads += ["A calls", "B calls", "A v2v", "B v2v"]
        heads += ["Δ v2v", "same words", "user said"]
        rows = self._rows()
        need = [min(w, CELL_MAX) if i in (4, 5) else w for i, w in enumerate(natural_widths(heads, [r for _, r in rows]))]
        room = max(table.size.width - table.styles.scrollbar_size_vertical, 0) or self.app.size.width
        # what differs is always shown, cut to what the turn, both verdicts and the words in common leave
        # (the title counts them all)
        need[1] = min(need[1], max(DIFFERS_MIN, room - need[0] - need[2] - need[3] - need[9] - 5 * PAD))
        order = [0, 2, 3, 1, 9, 6, 7, 8, 4, 5]  # turn, verdicts, what differs, same words; then latency, then the calls
        shown = fit_columns(room, need, order, 5, stretch=10, min_stretch=USER_MIN)
        if (4 in shown) != (5 in shown):  # both sides' calls, or neither: what is left goes to what was said
            shown.pop(4, None)
            shown = fit_columns(room, need, [c for c in order if c not in (4, 5)], 5, stretch=10, min_stretch=USER_MIN)
        self.hidden = [h for i, h in enumerate(heads) if i not in shown]
        self.query_one("#pair-title", Static).update(self._title())
        for col, w in shown.items():
            table.add_column(heads[col], key=heads[col], width=w)
        current = self.selected
        for key, row in rows:
            table.add_row(*(fit_cell(row[col], w) for col, w in shown.items()), key=key)
        if current is not None and str(current) in table.rows:
            table.move_cursor(row=table.get_row_index(str(current)))
        self._pane()
        self.refind()

    @property
    def selected(self) -> int | None:
        table = self.query_one("#pair", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value  # a turn's index, as its row was added
        return int(key) if key is not None else None

    @on(DataTable.RowHighlighted, "#pair")
    def _pane(self) -> None:
        """The selected turn in full under the table."""
        turn = next((t for t in self.turns if t.turn_index == self.selected), None)
        pane = self.query_one("#pair-turn", Static)
        if turn is None:
            pane.update("")
            return
        notes = (_latency_note(self.runs[0]), _latency_note(self.runs[1])) if self.runs else ("", "")
        pane.update(pair_turn(turn, max((self.size.width or self.app.size.width) - 4, 20), notes))

    def found(self, text: str) -> list[str]:
        shown = [str(k.value) for k in self.query_one("#pair", DataTable).rows]
        hits = {str(t.turn_index) for t in self.turns if any(
            matched_in(fields(t.user_text, "\n".join([s.answer, *s.calls]), "\n".join(s.reasons.values()), s.causes), text)
            for s in _sides(t))}  # fmt: skip
        return [k for k in shown if k in hits]

    def _rows(self) -> list[tuple[str, list[Text | str]]]:
        out: list[tuple[str, list[Text | str]]] = []
        for t in self.turns:
            if self.only_differences and not t.differences:
                continue
            diff = set(t.differences)
            user = t.user_text
            if isinstance(t, TurnComparison):
                verdict = bool(diff - {"calls", "latency", "status"})  # the verdict, a dimension of it, or counted
                cells = [
                    _mark(verdict_text(t.a.verdict) + Text(f" {t.a.status}", MUTED), verdict or "status" in diff),
                    _mark(verdict_text(t.b.verdict) + Text(f" {t.b.status}", MUTED), verdict or "status" in diff),
                    _mark(_calls(t.a.calls), "calls" in diff),
                    _mark(_calls(t.b.calls), "calls" in diff),
                    _mark(ms_text(t.a.voice_to_voice_ms), "latency" in diff),
                    _mark(ms_text(t.b.voice_to_voice_ms), "latency" in diff),
                    _delta(t.a.voice_to_voice_ms, t.b.voice_to_voice_ms),
                ]
            else:
                share = "pass share" in diff
                cells = [
                    _mark(t.a.share_text, share),
                    _mark(t.b.share_text, share),
                    pattern_text(t.a.statuses),
                    pattern_text(t.b.statuses),
                    _mark(ms_text(t.a.voice_to_voice_p50_ms), "latency" in diff),
                    _mark(ms_text(t.b.voice_to_voice_p50_ms), "latency" in diff),
                    _delta(t.a.voice_to_voice_p50_ms, t.b.voice_to_voice_p50_ms),
                ]
            turn = Text(("≠ " if diff else "  ") + str(t.turn_index), "bold yellow" if diff else "")
            differs = Text(", ".join(t.differences), "yellow") if diff else Text("same", MUTED)
            out.append((str(t.turn_index), [turn, differs, *cells, _shared(*_firsts(t)), user]))
        return out

    def action_toggle_diff(self) -> None:
        self.only_differences = not self.only_differences
        self.paint()
