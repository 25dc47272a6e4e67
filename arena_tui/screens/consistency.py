"""A leaderboard row's drill-down: consistency across its repeats, turn by turn.

Per turn: its verdict in each repeat (run order), how often it flips from one repeat to the
next, the dimensions whose verdict changes, why it failed where it did (each failing repeat's causes,
`judge.causes` through `StoredRun.causes`), and whether it never passes. From
`verdicts.turn_consistency` via the row (the data layer's figures; nothing is recounted here). With
k >= 2 repeats, each turn's pass^k and pass@k and the row's, its flip rate and its strict pass over
turns and runs (`compare.repeats`). Opened against another row (`versus`: the leaderboard's marked
row), the gap between them (`compare.gap`) and, per turn, the other row's share where it decides it.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..compare.gap import PairGap, pair_gap, row_side
from ..compare.leaderboard import POOLED, BoardRow
from ..compare.repeats import row_repeats
from ..judge.causes import causes_text
from ..verdicts import APART, STRICT
from ..widgets.board_cells import MUTED, pattern_text, rate_cell
from ..widgets.pair_gap import gap_line
from ..timing import speed_text
from .base import BACK, ArenaScreen


class ConsistencyScreen(ArenaScreen):
    HELP_WHERE, HELP_ORDER = "consistency", 6
    CSS_PATH = "board.tcss"
    BINDINGS = [
        BACK,
        Binding("f", "toggle_flips", "Only flipping / failing"),
    ]

    def __init__(self, row: BoardRow, versus: BoardRow | None = None) -> None:
        super().__init__()
        self.row = row
        self.only_unstable = False
        self.repeats = row_repeats(row)
        # the gap from `versus` (A) to this row (B), when they share a benchmark
        self.gap: PairGap | None = (pair_gap(row_side(versus), row_side(row)) if versus is not None and versus is not row
                                    and versus.benchmark == row.benchmark != POOLED else None)  # fmt: skip

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="drill-title")
        yield Static("", id="drill-runs")
        yield DataTable(id="drill", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        row = self.row
        c = row.consistency
        title = Text.assemble((row.model, "bold"), " on ", (row.benchmark, "bold"), f" · {len(row.runs)} repeat(s)")
        if row.benchmark == POOLED:
            title.append(" · pooled rows have no per-turn consistency (turn numbers differ across benchmarks): "
                         "open a benchmark's row", "yellow")  # fmt: skip
        elif c:
            always = [str(t.turn_index) for t in c if t.always_fails]
            title.append(f" · {sum(t.unstable for t in c)}/{len(c)} turns flip between repeats · always failing: ")
            title.append(", ".join(always) or "none", "bold red" if always else MUTED)
        if self.repeats is not None and self.repeats.text:
            title.append(f"\n{self.repeats.text}")
        if self.gap is not None:
            title.append(f"\nagainst A = {self.gap.a.name}: ").append_text(gap_line(self.gap, self.app.size.width))
        self.query_one("#drill-title", Static).update(title)
        lines = []
        for f in row.runs:
            strict = rate_cell(f.strict, f.run.judged).plain.replace("\n", " ")
            excluded = f"  latency excluded: {f.run.latency_excluded}" if f.run.latency_excluded else ""
            apart = f"  counted apart: {t}" if (t := f.run.tally.apart_text()) else ""
            lines.append(f"#{f.repeat} = {f.run.run_id}  {f.run.row.status}  {speed_text(f.run.speed)}  {STRICT} {strict}{apart}{excluded}")
        self.query_one("#drill-runs", Static).update(Text("\n".join(lines), MUTED))
        table = self.query_one("#drill", DataTable)
        table.add_column("turn", key="turn")
        table.add_column("user said", key="user")
        table.add_column(" ".join(f"#{f.repeat}" for f in row.runs) or "repeats", key="pattern")
        k = len(row.runs)
        columns = [("flips", "flips")]
        if self.repeats is not None:
            columns += [("hat", f"pass^{k}"), ("at", f"pass@{k}")]
        if self.gap is not None:
            columns.append(("versus", "decides the gap: A"))
        columns += [("dims", "dimensions that flip"), ("why", "why it failed (causes)"), ("always", "always fails"),
                    ("apart", "counted apart (· in the pattern)")]
        for key, label in columns:
            table.add_column(label, key=key)
        self.paint()
        table.focus()

    def _share(self, value: float | None) -> Text:
        return Text(f"{100 * value:.0f}%") if value is not None else Text("–", MUTED)

    def paint(self) -> None:
        table = self.query_one("#drill", DataTable)
        table.clear()
        per_turn = {t.turn: t for t in self.repeats.turns} if self.repeats is not None else {}
        deciding = {d.turn: d for d in self.gap.deciding} if self.gap is not None else {}
        for c in self.row.consistency:
            if self.only_unstable and not (c.unstable or c.always_fails):
                continue
            user = next((t for f in self.row.runs if (t := f.run.user_text(c.turn_index))), "")
            pattern = Text("  ").join(pattern_text([s]) for s in c.statuses)  # one glyph under each #N
            style = "bold red" if c.always_fails else ("yellow" if c.unstable else MUTED)
            apart = " · ".join(f"#{f.repeat} {APART[f.apart[c.turn_index]]}" for f in self.row.runs
                               if c.turn_index in f.apart)
            why = "; ".join(f"#{f.repeat} {causes_text(f.run.causes.get(c.turn_index, ()))}" for f, status
                            in zip(self.row.runs, c.statuses, strict=True) if status == "fail")
            extra: list[Text] = []
            if self.repeats is not None:
                tr = per_turn.get(c.turn_index)
                extra += [self._share(tr.pass_hat_k if tr else None), self._share(tr.pass_at_k if tr else None)]
            if self.gap is not None:
                d = deciding.get(c.turn_index)
                extra.append(Text(f"A {d.share(d.a)} · B {d.share(d.b)}", "yellow") if d else Text("", MUTED))
            table.add_row(
                Text(str(c.turn_index), style),
                user[:60] + ("…" if len(user) > 60 else ""),
                pattern,
                Text(str(c.flips), "bold yellow" if c.flips else MUTED),
                *extra,
                ", ".join(f"{d}×{n}" for d, n in c.metric_flips.items()) or Text("–", MUTED),
                Text(why, "red") if why else Text("–", MUTED),
                Text("always fails", "bold red") if c.always_fails else Text("", MUTED),
                Text(apart, "yellow"),
                key=str(c.turn_index),
            )

    def action_toggle_flips(self) -> None:
        self.only_unstable = not self.only_unstable
        self.paint()
