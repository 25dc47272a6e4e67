"""The turn table: one row per turn, score cells filling in as judgements arrive."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ..run_view import RunState, TurnRow

DIM_ABBREV = {
    "kb_grounding": "KB",
    "instruction_following": "Instr",
    "tool_use_correct": "Tool✓",
    "state_tracking": "State",
    "ambiguity_handling": "Ambig",
    "turn_taking": "Taking",
}
STATUS_STYLE = {
    "ok": "green",
    "running": "bold yellow",
    "pending": "grey50",
    "no_response": "red",
    "empty_response": "red",
    "error": "bold red",
    "interrupted": "yellow",
    "ended_session": "magenta",
    "ended_early": "magenta",
}
VERDICT_CELL = {
    "pass": Text("✓", "bold green"),
    "fail": Text("✗", "bold red"),
    "na": Text("–", "grey50"),
}


def dim_label(dim: str) -> str:
    return DIM_ABBREV.get(dim, dim[:6])


def is_failure(row: TurnRow) -> bool:
    """A bad status, a failing or unjudgeable turn, wrong tools, or a (re-)judge that failed."""
    bad_status = row.status not in ("ok", "pending", "running")
    judging = row.verdict in ("fail", "judge_error") or row.judge_error is not None
    return bad_status or judging or row.tools_ok is False


def row_cells(row: TurnRow, dims: list[str]) -> list[Text | str]:
    idx = "G" if row.index == -1 else str(row.index)
    cats = ",".join(row.categories) or "–"
    status = Text(row.status, STATUS_STYLE.get(row.status, ""))
    if row.result is not None and row.result.no_audio:
        status.append(" no audio", "bold dark_orange")
    v2v = row.result.latencies.voice_to_voice_ms if row.result else None
    v2v_s = Text(f"{v2v:.0f}" if v2v is not None else "–", justify="right")
    exp, made = row.expected_tools, row.made_tools
    ok = row.tools_ok
    tools = Text(f"{len(exp)}/{len(made)} ")
    if ok is True:
        tools.append("✓", "bold green")
    elif ok is False:
        tools.append("✗", "bold red")
    scores = row.scores
    judgement = row.latest
    cells: list[Text | str] = [idx, cats, status, v2v_s, tools]
    spec_dims = set(row.spec.dimensions) if row.spec else set(scores)
    for d in dims:
        if d in scores:
            cells.append(VERDICT_CELL[scores[d].verdict])
        elif judgement is None and d in spec_dims and row.result is not None:
            cells.append(Text("…", "yellow"))
        else:
            cells.append(Text("", "grey50"))
    verdict = row.verdict
    vcell = {
        "pass": Text("PASS", "bold green"),
        "fail": Text("FAIL", "bold white on red"),
        "judge_error": Text("JUDGE ERR", "bold red"),
        "na": Text("n/a", "grey50"),
        "pending": Text("…" if row.result is not None else "", "yellow"),
    }[verdict]
    if row.index == -1:
        vcell = Text("–", "grey50")  # the greeting is never judged
    if judgement is not None and judgement.heuristic and verdict in ("pass", "fail"):
        vcell.append(" (h)", "italic yellow")
    if verdict != "judge_error" and row.judge_error is not None:  # a failed re-judge: the verdict stands
        vcell.append(" +ERR", "bold red")
    cells.append(vcell)
    return cells


def row_signature(row: TurnRow, dims: list[str]) -> tuple:
    """Everything `row_cells` reads, cheaply: results and judgements are replaced or appended,
    never edited in place, so identities and counts say when the cells can differ."""
    return (row.status, id(row.result), len(row.tool_calls), len(row.judgements), id(row.spec), tuple(dims))


class TurnTable(DataTable):
    """Rebuilt only when its rows' content changes; keeps the cursor on the same turn."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._dims: list[str] | None = None
        self._rows: dict[int, tuple] = {}
        self._cells: dict[int, tuple[tuple, tuple]] = {}  # turn -> (row_signature, cells)
        self.failures_only = False
        self.category: str | None = None
        self._state: RunState | None = None

    @property
    def selected_turn(self) -> int | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:
            return None
        return int(key.value) if key.value is not None else None

    def visible_rows(self, state: RunState) -> list[TurnRow]:
        rows = sorted(state.turns.values(), key=lambda r: r.index)
        if self.failures_only:
            rows = [r for r in rows if is_failure(r)]
        if self.category:
            rows = [r for r in rows if self.category in r.categories]
        return rows

    def cells_for(self, row: TurnRow, dims: list[str]) -> tuple:
        """The row's cells, rebuilt only when something they show changed (Text is not cheap)."""
        sig = row_signature(row, dims)
        cached = self._cells.get(row.index)
        if cached is not None and cached[0] == sig:
            return cached[1]
        cells = tuple(row_cells(row, dims))
        self._cells[row.index] = (sig, cells)
        return cells

    def refresh_from(self, state: RunState, follow_turn: int | None = None) -> None:
        if state is not self._state:  # another run (or a replay step): nothing cached applies
            self._state, self._cells = state, {}
        dims = state.dimensions
        rows = self.visible_rows(state)
        rendered = {r.index: self.cells_for(r, dims) for r in rows}
        if dims != self._dims or list(rendered) != list(self._rows):
            self._rebuild(dims, rendered)
        else:
            for idx, cells in rendered.items():
                old = self._rows[idx]
                if cells is not old and _plain(cells) != _plain(old):
                    for col, (new, was) in enumerate(zip(cells, old)):
                        if _plain((new,)) != _plain((was,)):
                            self.update_cell_at((self.get_row_index(str(idx)), col), new)
            self._rows = rendered
        if follow_turn is not None and str(follow_turn) in self.rows:
            target = self.get_row_index(str(follow_turn))
            if self.cursor_row != target:
                self.move_cursor(row=target)

    def _rebuild(self, dims: list[str], rendered: dict[int, tuple]) -> None:
        selected = self.selected_turn
        self.clear(columns=True)
        self.add_column("#", key="idx")
        self.add_column("categories", key="cats")
        self.add_column("status", key="status")
        self.add_column("v2v ms", key="v2v")
        self.add_column("tools e/m", key="tools")
        for d in dims:
            self.add_column(dim_label(d), key=f"dim:{d}")
        self.add_column("verdict", key="verdict")
        for idx, cells in rendered.items():
            self.add_row(*cells, key=str(idx))
        self._dims, self._rows = list(dims), rendered
        if selected is not None and str(selected) in self.rows:
            self.move_cursor(row=self.get_row_index(str(selected)))


def _plain(cells: tuple) -> tuple:
    return tuple((c.plain, str(c.style), tuple(map(str, c.spans))) if isinstance(c, Text) else c for c in cells)
