"""The turn table: one row per turn, score cells filling in as judgements arrive, fitted to its width.

Every column has a fixed budget, decided by the table's width alone (never by what the cells hold):
a run that is going on keeps its columns as turns finish, and a long status (`empty_response (3
retries)`) takes a shorter form (`empty ↻3`) instead of pushing columns off. The dimensions share
one column of two-letter codes (`KB IF TU`, `widgets.dimensions`), one glyph under each code. A
verdict a person gave (`arena-tui review`, the turn detail's `v`) is marked `✎`, its glyphs
underlined; why a turn failed (`judge.causes`) has a column where the width leaves room for it
(the line under the tables says the selected turn's at any width, the detail each one in words).
"""

from __future__ import annotations

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from collections.abc import Sequence

from arena_tui.spine.causes import APART_CAUSES, label
from ..run_view import RunState, TurnRow
from ..timing import UNTRUSTED_MARK, barge_in_ms, comparable, latency_counts
from ..verdicts import counts
from .dimensions import dim_code, dim_legend
from .fit import fit_cell, fit_columns

STATUS_STYLE = {
    "ok": "green",
    "running": "bold yellow",
    "pending": "grey50",
    "no_response": "red",
    "empty_response": "red",
    "error": "bold red",
    "interrupted": "yellow",
    "lost_pace": "bold yellow",  # our machine, not the model: counted nowhere, played again by a resume
    "infra_error": "bold yellow",  # the endpoint, not the model: counted nowhere, played again by a resume
    "not_played": "grey50",  # the run ended before it: counted nowhere
    "ended_session": "magenta",
    "ended_early": "magenta",
}
VERDICT_CELL = {
    "pass": Text("✓", "bold green"),
    "fail": Text("✗", "bold red"),
    "na": Text("–", "grey50"),
}


def is_failure(row: TurnRow) -> bool:
    """A bad status of the model's, a failing or unjudgeable turn, wrong tools, or a (re-)judge that
    failed; never a turn that was not the model's doing (not played, stopped, lost: `verdicts.counts`)."""
    if row.status not in ("pending", "running") and not counts(row.status):
        return False
    bad_status = row.status not in ("ok", "pending", "running")
    judging = row.verdict in ("fail", "judge_error") or row.judge_error is not None
    return bad_status or judging or row.tools_ok is False


STATUS_SHORT = {"no_response": "no resp", "empty_response": "empty", "interrupted": "interrupt",
                "ended_session": "ended", "ended_early": "end early", "infra_error": "infra", "not_played": "unplayed"}
RETRIES = "↻"  # `↻3`: three retries (the help screen's legend; the turn detail says it in words)
FAULT = "↯"  # `ok ↯`: a simulator fault was injected on the turn (the border's legend; the detail says which)
PROVISIONAL = "~"  # `PASS~`: scored live, provisional until the whole-run judgement (the table's legend says so)
HUMAN = "✎"  # `FAIL✎`: a person's verdict decides some dimension (the legend says so; the detail says who and why)


def status_cell(row: TurnRow, width: int | None = None) -> Text:
    """The turn's status, then what the status alone does not say: retries taken, no audio.

    In `width` cells: `empty_response (3 retries)`, else `empty_response ↻3`, else `empty ↻3`
    (`STATUS_SHORT`), else cut; the turn detail always has it whole. A turn a simulator fault was
    injected on ends in `↯` (kept when the rest is cut)."""
    retries = max(row.attempts - 1, 0)
    no_audio = row.result is not None and row.result.no_audio
    forms = [
        (row.status, f" ({retries} retr{'y' if retries == 1 else 'ies'})", " no audio"),
        (row.status, f" {RETRIES}{retries}", " no audio"),
        (STATUS_SHORT.get(row.status, row.status), f" {RETRIES}{retries}", " ∅audio"),
    ]
    fault = Text(f" {FAULT}", "bold magenta") if row.fault is not None else Text()
    status = Text()
    for name, retried, silent in forms:
        status = Text(name, STATUS_STYLE.get(row.status, ""))
        if retries:
            status.append(retried, "bold dark_orange")
        if no_audio:
            status.append(silent, "bold dark_orange")
        if width is None or status.cell_len + fault.cell_len <= width:
            return status.append_text(fault)
    assert width is not None  # without a width the first form was returned whole
    status.truncate(max(width - fault.cell_len, 1), overflow="ellipsis")
    return status.append_text(fault)


def verdict_cell(row: TurnRow) -> Text:
    if row.index == -1:
        return Text("–", "grey50")  # the greeting is never judged
    verdict = row.verdict
    vcell = {
        "pass": Text("PASS", "bold green"),
        "fail": Text("FAIL", "bold white on red"),
        "judge_error": Text("JUDGE ERR", "bold red"),
        "na": Text("n/a", "grey50"),
        "pending": Text("…" if row.result is not None else "", "yellow"),
        # not the model's doing: no verdict, counted nowhere (`verdicts.APART`)
        "lost_pace": Text("LOST PACE", "bold yellow"),
        "interrupted": Text("STOPPED", "bold yellow"),
        "infra_error": Text("INFRA ERR", "bold yellow"),
        "error": Text("ENGINE ERR", "bold yellow"),
        "not_played": Text("NOT PLAYED", "grey50"),
    }[verdict]
    judgement = row.latest
    if row.human and verdict in ("pass", "fail"):
        vcell.append(HUMAN, "bold cyan")  # a person's verdict counts (over the judge's, whatever its scope)
    elif row.provisional and verdict in ("pass", "fail"):
        vcell.append(PROVISIONAL, "bold yellow")  # scored live: the whole-run judgement follows
    if verdict != "judge_error" and row.judge_error is not None:  # a failed re-judge: the verdict stands
        vcell.append("+ERR" if row.provisional and not row.human else " +ERR", "bold red")  # before "(h)": in a narrow column it is kept
    elif judgement is not None and judgement.heuristic and verdict in ("pass", "fail"):
        vcell.append(" (h)", "italic yellow")
    return vcell


def v2v_cell(row: TurnRow, speed: float | None = 1.0) -> Text:
    """A latency (grey and marked `*` when the run's speed makes it not comparable) or a barge-in."""
    lat = row.result.latencies if row.result else None
    overlap = barge_in_ms(lat) if lat else None
    if overlap is not None:
        return Text(f"barge {overlap / 1000:.1f}s", "bold dark_orange", justify="right")  # barge-in, its overlap
    early = row.result.early_start_ms if row.result else None
    if early is not None:  # it began before the user finished, in a pause of theirs: how much before
        return Text(f"early {early / 1000:.1f}s", "bold dark_orange", justify="right")
    v2v = lat.voice_to_voice_ms if lat else None
    if v2v is None:
        return Text("–", justify="right")
    if not latency_counts(row.status, row.untrusted):  # in no latency figure: not the model's, or input sent late
        return Text(f"{v2v:.0f}{UNTRUSTED_MARK}", "grey50 italic", justify="right")
    if comparable(speed):
        return Text(f"{v2v:.0f}", justify="right")
    return Text(f"{v2v:.0f}*", "grey50 italic", justify="right")


def scores_cell(row: TurnRow, dims: list[str]) -> Text:
    """One glyph per dimension, each under its code in `scores_header(dims)`: ✓ ✗ – as judged,
    … while due and not judged yet, blank where the turn is not scored on it."""
    scores = row.scores
    spec_dims = set(row.spec.dimensions) if row.spec else set(scores)
    human = set(row.human)
    t = Text()
    for i, d in enumerate(dims):
        t.append(" " if i else "")
        if d in scores:
            glyph = VERDICT_CELL[scores[d].verdict]
            t.append(" ").append_text(glyph if d not in human else Text(glyph.plain, f"{glyph.style} underline"))
        elif row.latest is None and d in spec_dims and row.result is not None:
            t.append(" …", "yellow")
        else:
            t.append("  ")
    return t


def scores_header(dims: list[str]) -> str:
    return " ".join(f"{dim_code(d):>2}" for d in dims) or "scores"


def causes_cell(causes: Sequence[str], width: int | None = None) -> Text:
    """`missed call, partial answer`; in `width` cells the first and how many more (`missed call +1`),
    then that cut ("…"); blank for a turn that did not fail. A cause of a turn counted apart (lost
    pace: our machine's, never the model's failure) is yellow."""
    style = "yellow" if set(causes) <= APART_CAUSES else "red"
    whole = Text(", ".join(label(c) for c in causes), style)
    if width is None or whole.cell_len <= width or not causes:
        return whole
    more = Text(f" +{len(causes) - 1}", "grey62") if len(causes) > 1 else Text()
    first = Text(label(causes[0]), style)
    if first.cell_len + more.cell_len > width:
        first.truncate(max(width - more.cell_len, 1), overflow="ellipsis")
    return first.append_text(more)


def row_cells(row: TurnRow, dims: list[str], speed: float | None = 1.0, status_width: int | None = None,
              causes: Sequence[str] = (), causes_width: int | None = None) -> list[Text | str]:
    """Cells in `columns(dims)` order: what must always show first, then the scores, then the rest."""
    idx = "G" if row.index == -1 else str(row.index)
    exp, made = row.expected_tools, row.made_tools
    ok = row.tools_ok
    tools = Text(f"{len(exp)}/{len(made)} ")
    if ok is True:
        tools.append("✓", "bold green")
    elif ok is False:
        tools.append("✗", "bold red")
    return [idx, status_cell(row, status_width), verdict_cell(row), scores_cell(row, dims), v2v_cell(row, speed), tools,
            causes_cell(causes, causes_width), Text(",".join(row.categories) or "–")]


def columns(dims: list[str], speed: float | None = 1.0) -> list[tuple[str, str]]:
    """(key, label) of every column, in the order of `row_cells`; latency at a speed other than 1
    is marked in the header (`v2v ms*`; the run screen's bar says `* latency at 20× — not comparable`,
    `timing.latency_caveat`)."""
    v2v = "v2v ms" if comparable(speed) else "v2v ms*"
    return [("idx", "#"), ("status", "status"), ("verdict", "verdict"), ("dims", scores_header(dims)),
            ("v2v", v2v), ("tools", "tools e/m"), ("causes", "causes"), ("cats", "categories")]


STATUS, CAUSES, CATS = 1, 6, 7
# the status's budget by the table's width: (at least this wide, status cells); `empty_response ↻3`
# needs 18, `empty ↻3` 8; narrower, only the turn, status, verdict and scores fit
STATUS_BUDGETS = [(100, 18), (70, 16), (0, 10)]
VERDICT_W = 10  # NOT PLAYED, ENGINE ERR, JUDGE ERR, LOST PACE, PASS +ERR
V2V_W = 10  # barge 3.0s
TOOLS_W = 9
MIN_CAUSES = 11  # `missed call`: causes narrower than this say too little: the column goes (the line under the tables says them)
CAUSES_WANT = 16  # kept for the causes before the categories join
CATS_W = 16  # the categories, cut with "…" past this (the detail has them whole)


def budgets(width: int, dims: list[str], idx_width: int, speed: float | None = 1.0) -> list[int]:
    """Each column's width for a table `width` cells wide: what it may show, whatever it holds."""
    labels = [label for _, label in columns(dims, speed)]
    status = next(w for at_least, w in STATUS_BUDGETS if width >= at_least)
    return [max(idx_width, 1), status, VERDICT_W, len(labels[3]),
            max(V2V_W, len(labels[4])), TOOLS_W, width, CATS_W]


def layout_for(width: int, dims: list[str], idx_width: int = 1, speed: float | None = 1.0) -> dict[int, int]:
    """Turn, status, verdict and the scores always; then v2v and tools while they fit; the causes
    take what is left (cut with "…"), or go when too little is left; the categories join when the
    causes still have `CAUSES_WANT` beside them."""
    need = budgets(width, dims, idx_width, speed)
    base = fit_columns(width, need, list(range(CAUSES)), 4, stretch=CAUSES, min_stretch=MIN_CAUSES)
    more = fit_columns(width, need, [*range(CAUSES), CATS], 4, stretch=CAUSES, min_stretch=MIN_CAUSES,
                       reserve=CAUSES_WANT)
    return more if CATS in more and base.keys() <= more.keys() else base


def row_signature(row: TurnRow, dims: list[str], speed: float | None = 1.0) -> tuple:
    """Everything `row_cells` reads, cheaply: results and judgements are replaced or appended,
    never edited in place, so identities and counts say when the cells can differ."""
    return (row.status, row.attempts, id(row.result), len(row.tool_calls), len(row.judgements), id(row.spec),
            tuple(dims), speed, row.untrusted, row.fault)


HUMAN_LEGEND = f"{HUMAN} a person's verdict"


BORDER_CHROME = 6  # the border's corners and the spaces and dashes around its subtitle
MORE_CODES = "more in ?"


def border_legend(hidden: list[str], provisional: bool, faults: bool, dims: list[str], room: int,
                  human: bool = False) -> str:
    """`tools e/m, categories: enter · ↯ fault injected · ✎ a person's verdict · ~ provisional · KB
    knowledge base · …` in `room` cells: the hidden columns always, then each mark and code whole
    while it fits; `more in ?` when some did not."""
    first = [f"{', '.join(hidden)}: enter"] if hidden else []
    marks = [f"{FAULT} fault injected"] if faults else []
    marks += [HUMAN_LEGEND] if human else []
    rest = marks + ([f"{PROVISIONAL} provisional"] if provisional else []) + [dim_legend([d]).plain for d in dims]
    shown = list(first)
    for i, part in enumerate(rest):
        tail = [] if i == len(rest) - 1 else [MORE_CODES]
        if len(" · ".join([*shown, part, *tail])) > room:
            shown.append(MORE_CODES)
            break
        shown.append(part)
    return " · ".join(shown)


class TurnTable(DataTable):
    """Rebuilt only when its rows' content or its column layout changes; keeps the cursor on the
    same turn. The columns are fitted to the widget's width (`layout_for`), again on every resize."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._layout: tuple | None = None  # (dims, {column: width}) the table was built with
        self._rows: dict[int, tuple] = {}
        self._cells: dict[int, tuple[tuple, tuple]] = {}  # turn -> (row_signature, cells)
        self.failures_only = False
        self.category: str | None = None
        self._state: RunState | None = None
        self._follow: int | None = None

    @property
    def selected_turn(self) -> int | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:
            return None
        return int(key.value) if key.value is not None else None

    @property
    def shown_columns(self) -> list[str]:
        """Keys of the columns on screen (for tests)."""
        return [str(c.key.value) for c in self.columns.values()]

    def visible_rows(self, state: RunState) -> list[TurnRow]:
        rows = sorted(state.turns.values(), key=lambda r: r.index)
        if self.failures_only:
            rows = [r for r in rows if is_failure(r)]
        if self.category:
            rows = [r for r in rows if self.category in r.categories]
        return rows

    def cells_for(self, row: TurnRow, dims: list[str], speed: float | None = 1.0, status_width: int | None = None,
                  causes: Sequence[str] = (), causes_width: int | None = None) -> tuple:
        """The row's cells, rebuilt only when something they show changed (Text is not cheap)."""
        sig = (row_signature(row, dims, speed), status_width, tuple(causes), causes_width)
        cached = self._cells.get(row.index)
        if cached is not None and cached[0] == sig:
            return cached[1]
        cells = tuple(row_cells(row, dims, speed, status_width, causes, causes_width))
        self._cells[row.index] = (sig, cells)
        return cells

    @staticmethod
    def idx_width(state: RunState) -> int:
        """The turn column's width: the run's longest turn number (all of them, filtered or not)."""
        return max((len(str(i)) for i in [*state.turns, *state.specs] if i >= 0), default=1)  # the greeting: G

    def on_resize(self) -> None:
        if self._state is not None:
            self.refresh_from(self._state, self._follow)

    def _room(self) -> int:
        # the vertical scrollbar may come and go: always leave it its columns
        return max(self.size.width - self.styles.scrollbar_size_vertical, 0)

    def refresh_from(self, state: RunState, follow_turn: int | None = None) -> None:
        if state is not self._state:  # another run (or a replay step): nothing cached applies
            self._state, self._cells = state, {}
        self._follow = follow_turn
        dims = state.dimensions
        rows = self.visible_rows(state)
        speed = state.speed
        fitted = layout_for(self._room(), dims, self.idx_width(state), speed)
        causes = state.causes() if CAUSES in fitted else {}
        rendered = {r.index: self.cells_for(r, dims, speed, fitted[STATUS], causes.get(r.index, ()), fitted.get(CAUSES))
                    for r in rows}
        layout = (tuple(dims), tuple(fitted.items()), speed)
        if layout != self._layout or list(rendered) != list(self._rows):
            self._rebuild(dims, layout, rendered)
        else:
            shown = dict(layout[1])
            for idx, cells in rendered.items():
                old = self._rows[idx]
                if cells is not old and _plain(cells) != _plain(old):
                    for pos, (col, w) in enumerate(shown.items()):
                        if _plain((cells[col],)) != _plain((old[col],)):
                            self.update_cell_at(Coordinate(self.get_row_index(str(idx)), pos), fit_cell(cells[col], w))
            self._rows = rendered
        self._subtitle(dims, fitted)
        if follow_turn is not None and str(follow_turn) in self.rows:
            target = self.get_row_index(str(follow_turn))
            if self.cursor_row != target:
                self.move_cursor(row=target)

    def _subtitle(self, dims: list[str], fitted: dict[int, int]) -> None:
        """What this width leaves out (never silently off-screen), then what the marks and codes
        mean, as many whole as the border holds (never one cut): the rest is in `?`."""
        cols = columns(dims, self._state.speed if self._state else 1.0)
        hidden = [label for i, (_, label) in enumerate(cols) if i not in fitted]
        rows = self._state.turns.values() if self._state is not None else []
        text = border_legend(hidden, any(r.provisional for r in rows), any(r.fault for r in rows), dims,
                             self.size.width - BORDER_CHROME, human=any(r.human for r in rows))
        if text != self.border_subtitle:
            self.border_subtitle = text

    def _rebuild(self, dims: list[str], layout: tuple, rendered: dict[int, tuple]) -> None:
        selected = self.selected_turn
        self.clear(columns=True)
        cols = columns(dims, layout[2])
        shown = dict(layout[1])
        for col, w in shown.items():
            key, label = cols[col]
            self.add_column(label, key=key, width=w)
        for idx, cells in rendered.items():
            self.add_row(*(fit_cell(cells[col], w) for col, w in shown.items()), key=str(idx))
        self._layout, self._rows = layout, rendered
        if selected is not None and str(selected) in self.rows:
            self.move_cursor(row=self.get_row_index(str(selected)))


def _plain(cells: tuple) -> tuple:
    return tuple((c.plain, str(c.style), tuple(map(str, c.spans))) if isinstance(c, Text) else c for c in cells)
