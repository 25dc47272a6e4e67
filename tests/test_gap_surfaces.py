"""One gap, every surface: compare, the leaderboard's `G`, report.html, pairwise.csv, `campaign show`
and the campaign screen say the same B − A for the same pair of rows (`compare.gap` computes it once).

Constructed runs of demo_bench through the real Store (tests/counting_runs.py): gemini-live twice
(A: two repeats, so the bootstrap over turn blocks and runs), gpt-realtime once (B). Turn 8 is judged by
another judge than A's runs' own (so it is not judged by their judge), turn 9 never played by A: both
are left out and named, never counted. A run judged wholly by another judge pairs nothing with them.
"""

from __future__ import annotations

import asyncio
import csv
from html import escape
from pathlib import Path

import pytest
from textual.widgets import Static

from arena_tui.app import ArenaApp
from arena_tui.campaign import records
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.cli import main
from arena_tui.compare.gap import BOOTSTRAP, STRICT_KEY, gap_core, pair_gap, row_side, run_side
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.stored import load_runs
from arena_tui.screens.campaigns import gaps_text
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.dialogs.gap import GapDialog
from arena_tui.spine.events import RunEnded
from arena_tui.stats.paired import MCNEMAR, RUN_WIDE
from arena_tui.store import Store
from benchmarks.registry import load_benchmark

from .counting_runs import PASSING, ended, judged, record, started
from .test_app_leaderboard import open_board, order
from tests.pilot import until

CAMPAIGN = "gaps01"
A, B = "gemini-live", "gpt-realtime"
FAIL = {**PASSING, "kb_grounding": "fail"}


def run(run_id: str, model: str, fails: set[int], *, played: range = range(10), other_judge: set[int] = frozenset()) -> list:
    evs: list = [started(run_id, list(range(10)), model=model)]
    for t in played:
        evs += [ended(run_id, t), judged(run_id, t, FAIL if t in fails else None,
                                         judge="bedrock:claude-haiku-4-5" if t in other_judge else "openai:gpt-5-mini")]
    return [*evs, RunEnded(run_id=run_id, t_ms=20_000.0, status="completed")]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "arena.db"

    async def build() -> None:
        await record(path,
                     run("a1", A, {1, 2, 3, 6}, played=range(9), other_judge={8}),
                     run("a2", A, {2, 3, 6, 7}, played=range(9), other_judge={8}),
                     run("b1", B, {1, 4}))  # fmt: skip
        spec = build_spec({}, {"benchmarks": "demo_bench", "models": f"{B},{A}", "repeats": 2, "speed": 1.0})
        async with await Store.open(path) as store:
            await records.create(store, CAMPAIGN, spec)
            for cell, run_id in ((Cell("demo_bench", A, 1), "a1"), (Cell("demo_bench", A, 2), "a2"),
                                 (Cell("demo_bench", B, 1), "b1")):
                await records.set_cell(store, CAMPAIGN, cell, status="done", run_id=run_id)
            await records.set_cell(store, CAMPAIGN, Cell("demo_bench", B, 2), status="skipped", reason="not asked for")

    asyncio.run(build())
    return path


async def expected(db: Path):
    """The pair's gap by `compare.gap`, from the leaderboard's rows (A, B: the board's row order)."""
    async with await Store.open(db) as store:
        runs = await load_runs(store, ["a1", "a2", "b1"], lambda name: load_benchmark(name))
    board = build_leaderboard(runs)
    a, b = board.row(A, "demo_bench"), board.row(B, "demo_bench")
    assert a is not None and b is not None and [r.model for r in board.rows] == [A, B]
    return pair_gap(row_side(a), row_side(b)), {r.run_id: r for r in runs}


async def judged_by_another(db: Path):
    """A run of B's judged wholly by another judge than A's runs (its own store)."""
    await record(db, run("c1", B, set(), other_judge=set(range(10))))
    async with await Store.open(db) as store:
        return (await load_runs(store, ["c1"], lambda name: load_benchmark(name)))[0]


def test_the_pairing_names_what_it_leaves_out(db: Path, tmp_path: Path) -> None:
    pair, _ = asyncio.run(expected(db))
    assert pair.pairing.turns == tuple(range(8))
    assert pair.pairing.left_out == {8: "not judged on A", 9: "not played on A"}
    assert pair.pairing.left_out_text == "2 turns left out: 1 not judged on A · 1 not played on A"
    other = pair_gap(pair.a, run_side(asyncio.run(judged_by_another(tmp_path / "other.db"))))
    assert other.strict is None and other.pairing.turns == ()  # every verdict of B's by another judge than A's
    assert {t for t, why in other.pairing.left_out.items() if why == "judged by different judges"} == set(range(8))
    g = pair.strict
    assert g is not None and g.method == BOOTSTRAP and g.runs == (2, 1) and g.turns == 8
    # A passes 4/8 and 4/8 on the paired turns, B 6/8
    assert (g.a, g.b) == (pytest.approx(0.5), pytest.approx(0.75))
    assert [d.turn for d in pair.deciding][:2] == [2, 3] and {d.turn for d in pair.deciding} == {1, 2, 3, 4, 6, 7}


def test_every_surface_says_the_same_gap(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pair, runs = asyncio.run(expected(db))
    g = pair.strict
    assert g is not None
    core = gap_core(g)
    assert core.startswith("B − A = +25.0 pts [")

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", CAMPAIGN, str(out)]) == 0
    with (out / "pairwise.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    strict = next(r for r in rows if r["dimension"] == "turn_pass_strict")
    assert (strict["row_a"], strict["row_b"], strict["n_paired"], strict["method"]) == (A, B, "8", BOOTSTRAP)
    assert [float(strict[k]) for k in ("difference", "ci_lower", "ci_upper", "p")] == [g.difference, *g.ci, g.p]
    assert core in strict["words"] and strict["turns_left_out"] == pair.pairing.left_out_text
    kb = next(r for r in rows if r["dimension"] == "kb_grounding")  # a dimension: its own gap, the same turns
    assert float(kb["difference"]) == pair.figures["kb_grounding"].difference  # type: ignore[union-attr]
    assert escape(core) in (out / "report.html").read_text(encoding="utf-8")
    assert core in (out / "summary.md").read_text(encoding="utf-8").replace("\\[", "[").replace("\\]", "]")  # Markdown's escapes
    capsys.readouterr()

    assert main(["--db", str(db), "campaign", "show", CAMPAIGN]) == 0
    shown = capsys.readouterr().out
    assert f"A {A} → B {B}: {core}" in shown, shown

    async def campaign_screen_text() -> str:
        async with await Store.open(db) as store:
            view = await records.campaign_view(store, CAMPAIGN, gaps=True)
        assert view is not None
        return gaps_text(view).plain

    assert core in asyncio.run(campaign_screen_text())

    async def tui() -> None:
        app = ArenaApp(db, None)
        async with app.run_test(size=(160, 48)) as pilot:
            board = await open_board(pilot)
            table = board.query_one("#board")
            await pilot.press("G")  # nothing marked: a notice, no dialog
            assert app.screen is board
            table.move_cursor(row=order(board).index(f"{A}\x1fdemo_bench"))
            await pilot.press("space")  # A, the baseline
            table.move_cursor(row=order(board).index(f"{B}\x1fdemo_bench"))
            await pilot.press("G")  # B: the row under the cursor
            await until(pilot, lambda: isinstance(app.screen, GapDialog))
            text = str(app.screen.query_one("#gap", Static).render())
            assert core in text and pair.pairing.left_out_text in text and "decided by" in text
            await pilot.press("equals_sign")  # its turns, side by side
            await until(pilot, lambda: isinstance(app.screen, CompareScreen))
            assert core in str(app.screen.query_one("#pair-title", Static).render())
            await pilot.press("escape")
            # compare RUN RUN: one run a side, McNemar on effective turns, the same words as `compare.gap`'s
            two = pair_gap(run_side(runs["a1"]), run_side(runs["b1"]))
            assert two.strict is not None and two.strict.method == MCNEMAR
            await app.push_screen(CompareScreen(run_ids=("a1", "b1")))
            await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.gap is not None)
            title = str(app.screen.query_one("#pair-title", Static).render())
            assert gap_core(two.strict) in title and RUN_WIDE in title  # what one run a side cannot see

    asyncio.run(tui())
    assert STRICT_KEY in pair.figures


def test_report_baseline_compares_each_row_with_it(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", CAMPAIGN, str(out), "--baseline", "gpt-real"]) == 0  # a unique part of its name
    with (out / "pairwise.csv").open(newline="", encoding="utf-8") as fh:
        pairs = {(r["row_a"], r["row_b"]) for r in csv.DictReader(fh)}
    assert pairs == {(B, A)}  # the baseline is A
    capsys.readouterr()
    assert main(["--db", str(db), "report", CAMPAIGN, str(tmp_path / "r2"), "--baseline", "claude"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--baseline 'claude': no row" in err and A in err, err
    assert not (tmp_path / "r2").exists()  # nothing written
