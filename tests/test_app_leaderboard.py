"""The leaderboard, consistency and compare screens on constructed runs in a real SQLite store.

The runs are `tests/compare_runs.py`'s (figures worked out by hand in test_compare_leaderboard.py)
plus one never-judged run; mini_bench's data is a folder the app finds through its data dir.
"""

from __future__ import annotations

import io

import asyncio
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Static

from arena_tui.app import ArenaApp
from arena_tui.screens.compare import DIFF, CompareScreen
from arena_tui.screens.consistency import ConsistencyScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.runs import RunsScreen

from .compare_runs import LONG_MODEL, long_model_run, record_scenario, unjudged_run, write_data
from tests.pilot import until

GPT = "gpt-realtime\x1fmini_bench"
SIM = "sim [simulator]\x1fmini_bench"
UNJUDGED = "gpt-realtime [not judged]\x1fmini_bench"
SIZES = [(80, 24), (120, 40), (160, 48)]


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "arena.db"
    asyncio.run(record_scenario(db, extra=[unjudged_run()]))
    return db, write_data(tmp_path / "data")


async def open_board(pilot) -> LeaderboardScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
    await pilot.press("L")
    await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
    await pilot.pause(0.1)
    return app.screen


def cells(screen, table_id: str, key: str) -> list[str]:
    return [c.plain if isinstance(c, Text) else str(c) for c in screen.query_one(table_id, DataTable).get_row(key)]


def order(screen: LeaderboardScreen) -> list[str]:
    return [screen.row_key(r) for r in screen.shown]


WIDE = (300, 48)  # every column in view at once


async def test_the_leaderboard_shows_the_data_layers_figures(stored) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=WIDE) as pilot:
        board = await open_board(pilot)
        head = [str(c.label) for c in board.query_one("#board", DataTable).columns.values()]
        assert head[:8] == ["model", "benchmark", "strict pass ↓", "tool+IF+KB pass", "v2v p50", "v2v p95", "runs", "KB"]
        assert not board.hidden and not str(board.query_one("#board-columns", Static).render())
        row = cells(board, "#board", GPT)
        # strict 7/10 with its Wilson interval (R2's judge error and unplayed turn apart), kb 10/10, p50 1200 /
        # p95 2250 over R1 and R2 only (R3 is at 20x); the original eval's pass (tool ∧ instruction ∧ KB) 9/10:
        # R1's state_tracking failure passes it
        assert row[6] == "3\n2 at 1×"
        assert row[2] == "70% 7/10\n[40–89]" and row[7] == "100% 10/10\n[72–100]"
        assert row[3] == "90% 9/10\n[60–98]"
        assert row[head.index("overlap")] == "1/4\nmax 150 ms"  # R1's four turns measured (R2 places no audio)
        p50, p95 = head.index("v2v p50"), head.index("v2v p95")
        assert row[p50].startswith("1,200 ms\n[") and row[p95].startswith("2,250 ms\n[")
        assert row[head.index("tool p50")] == "2,000 ms\nn=2"
        assert row[head.index("empty")] == "1" and row[head.index("ended")] == "1"
        assert row[head.index("counted apart")] == "1 not played\n1 judge error"
        # which judge made the figures, and how sure it was (no turn judged twice: no figure, never 100 %)
        assert row[head.index("judge")] == "openai\ngpt-5-mini" and row[head.index("judge agree")] == "–\nnot repeated"
        # a run never judged: its rates are "not judged", never 0 %; its latency still counts
        unjudged = cells(board, "#board", UNJUDGED)
        assert unjudged[0] == "gpt-realtime\n[not judged]"
        assert unjudged[2] == "–\nnot judged" and unjudged[3] == "–\nnot judged" and unjudged[7] == "–\nnot judged"
        assert unjudged[p50] == "800 ms\n[800–800]"
        heuristic = cells(board, "#board", "gpt-realtime [heuristic judge]\x1fmini_bench")
        assert heuristic[p50] == "–\nspeed not rec…"  # cut to its column; the notes say it whole
        notes = str(board.query_one("#board-notes", Static).render())
        assert "latency from speed-1 runs only; speed 20×: r3" in notes and "; speed not recorded: r6" in notes
        assert "skipped r7: still recording" in notes and "labelled rows are not real model scores" in notes
        assert "judged by heuristic; openai:gpt-5-mini" in notes
        assert "counted apart (not the model's, in no figure): 2 rows: gpt-realtime on mini_bench: 1 not played · 1 judge" in notes
        assert "[not judged] on mini_bench:" not in notes  # a row never judged has nothing counted apart turn by turn
        # filter to one benchmark: no pooled row, no other_bench row
        await pilot.press("b")
        assert board.benchmark == "mini_bench"
        assert "gpt-realtime\x1fall" not in order(board) and GPT in order(board)


async def test_sorting_by_key_and_by_clicking_a_header(stored) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=WIDE) as pilot:
        board = await open_board(pilot)
        # default: strict pass, best first; rows without a rate (never judged) last
        assert order(board)[-1] == UNJUDGED
        assert order(board).index(SIM) < order(board).index(GPT)
        await pilot.press("s")  # next column: the original eval's pass, best first
        assert board.sort_key == "original" and board.descending
        await pilot.press("S")  # reversed: worst first (mini_bench's 9/10), the unjudged row still last
        assert not board.descending and order(board)[0] == GPT
        assert order(board)[-1] == UNJUDGED
        await pilot.press("s", "s", "s", "s")  # p50, p95, runs, then kb_grounding, best first
        assert board.sort_key == "dim:kb_grounding" and board.descending

        table = board.query_one("#board", DataTable)
        keys = [str(k.value) for k in table.columns]
        x = sum(c.get_render_width(table) for c in list(table.columns.values())[: keys.index("p50")]) + 2
        await pilot.click("#board", offset=(x, 0))
        assert board.sort_key == "p50" and not board.descending  # latency: fastest first
        # sim 600, unjudged 800, other_bench 850, pooled 1050, mini_bench 1200; no speed-1 latency last
        assert order(board) == [SIM, UNJUDGED, "gpt-realtime\x1fother_bench", "gpt-realtime\x1fall", GPT,
                                "gpt-realtime [heuristic judge]\x1fmini_bench"]  # fmt: skip
        await pilot.click("#board", offset=(x, 0))  # the same header again: reversed
        assert board.descending and order(board)[0] == GPT and order(board)[-1].startswith("gpt-realtime [heuristic")


async def test_drill_down_shows_flips_and_always_failing_turns(stored) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=(160, 48)) as pilot:
        board = await open_board(pilot)
        board.query_one("#board", DataTable).move_cursor(row=order(board).index(GPT))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConsistencyScreen))
        drill = app.screen
        title = str(drill.query_one("#drill-title", Static).render())
        assert "3 repeat(s)" in title and "1/4 turns flip between repeats" in title and "always failing: 2" in title
        t1 = cells(drill, "#drill", "1")
        assert t1[2] == "✓  ✗  ✓" and t1[3] == "2" and t1[6] == "tool_use_correct×2" and t1[8] == ""
        assert t1[7] == "#1 wrong arguments"  # why it flipped: the repeat that failed it, and its cause
        assert (t1[4], t1[5]) == ("0%", "100%")  # 2 of 3 passed: pass^3 = C(2,3)/C(3,3), pass@3 = 1 - C(1,3)/C(3,3)
        t2 = cells(drill, "#drill", "2")
        assert t2[2] == "✗  ·  ✗" and t2[8] == "always fails"
        assert (t2[4], t2[5]) == ("–", "–")  # judged in 2 of the 3 repeats: no pass^3 of it, never guessed
        assert cells(drill, "#drill", "0")[3] == "0"
        t3 = cells(drill, "#drill", "3")  # missing in one repeat: no verdict there, so nothing flips
        assert t3[2] == "✓  ·  ✓" and t3[3] == "0" and t3[6] == "–"
        # the row over its repeats: pass^3 and pass@3 over the turns all 3 judged (0 and 1), flips, interval
        assert "pass^3 50% · pass@3 100% · over the 2/4 turns all 3 repeats judged" in title, title
        assert "flips on 1/4 turns" in title and "over turn blocks and runs" in title
        await pilot.press("f")  # only turns that flip or always fail
        assert drill.query_one("#drill", DataTable).row_count == 2


async def test_compare_two_marked_runs_highlights_differences(stored) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        runs = app.screen
        table = runs.query_one("#runs", DataTable)
        for run_id in ("r1", "r2"):
            table.move_cursor(row=table.get_row_index(run_id))
            await pilot.press("space")
        assert runs.marked == ["r1", "r2"] and cells(runs, "#runs", "r1")[0] == "● r1"
        await pilot.press("equals_sign")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        pair = app.screen
        grid = pair.query_one("#pair", DataTable)

        def row(key: str) -> dict:
            return {str(c.key.value): cell for c, cell in zip(grid.columns.values(), grid.get_row(key), strict=True)}

        t1 = row("1")
        for col in ("A", "B", "A v2v", "B v2v"):  # verdicts, latency: all highlighted
            assert any(str(s.style) == DIFF for s in t1[col].spans), (col, t1[col])
        assert t1["Δ v2v"].plain == "+1,000 ms" and t1["differs"].plain == "verdict, tool_use_correct, calls, latency"
        assert t1["same words"].plain == "100%"  # both said "reply": their calls are what differs
        t0 = row("0")
        assert t0["differs"].plain == "same" and not any(str(s.style) == DIFF for k in ("A", "B", "A v2v", "B v2v")
                                                        for s in t0[k].spans)
        grid.move_cursor(row=grid.get_row_index("1"))
        await pilot.pause()
        console = Console(width=156, record=True, file=io.StringIO())
        console.print(pair.query_one("#pair-turn", Static).content)
        pane = console.export_text()  # the selected turn in full: each side's calls with their arguments, why B failed
        assert 'call book(day="saturday")' in pane and 'call book(day="sunday")' in pane, pane
        assert "B ✗ fail · tool use · wrong arguments" in pane and "A ✓ pass" in pane, pane
        grid.move_cursor(row=grid.get_row_index("3"))  # B never played it: no answer, no verdict, never a fail
        await pilot.pause()
        console = Console(width=156, record=True, file=io.StringIO())
        console.print(pair.query_one("#pair-turn", Static).content)
        assert "B not played: no answer, no verdict (never a failure)" in console.export_text()
        title = str(pair.query_one("#pair-title", Static).render())
        assert "3/4 turns differ" in title
        await pilot.press("d")
        assert pair.query_one("#pair", DataTable).row_count == 3


async def test_compare_two_model_rows_from_the_leaderboard(stored) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=(160, 48)) as pilot:
        board = await open_board(pilot)
        table = board.query_one("#board", DataTable)
        await pilot.press("equals_sign")  # nothing marked: a notice, no screen
        assert app.screen is board
        for key in (GPT, SIM):
            table.move_cursor(row=order(board).index(key))
            await pilot.press("space")
        await pilot.press("equals_sign")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen))
        t1 = app.screen.query_one("#pair", DataTable).get_row("1")
        assert (t1[2].plain, t1[3].plain, t1[4].plain) == ("2/3 pass", "1/1 pass", "✓✗✓")
        assert any(str(s.style) == DIFF for s in t1[2].spans) and t1[1].plain == "pass share, latency"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_columns_that_do_not_fit_are_named_and_scroll_by_whole_columns(stored, size) -> None:
    app = ArenaApp(*stored)
    async with app.run_test(size=size) as pilot:
        board = await open_board(pilot)
        table = board.query_one("#board", DataTable)

        def keys() -> list[str]:
            return [str(k.value) for k in table.columns]

        first = keys()
        assert first[:3] == ["model", "benchmark", "strict"] and board.hidden
        if size[0] >= 120:
            assert {"p50", "p95"} <= set(first)  # latency is read next to strict pass, never off-screen
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width  # nothing cut off at the right edge
        line = str(board.query_one("#board-columns", Static).render())
        assert f"{len(first)} of {len(board.columns)} columns in view" in line or f"{len(first)}/{len(board.columns)} cols" in line
        assert all(c.label in line for c in board.hidden)  # each one named, and the key that brings it
        await pilot.press("right")  # one whole column: the first scrolling one goes, model and benchmark stay
        assert keys()[:2] == ["model", "benchmark"] and keys()[2] == first[3]
        assert "← strict pass" in str(board.query_one("#board-columns", Static).render())
        for _ in range(len(board.columns)):
            await pilot.press("right")
        assert keys()[-1] == "apart"  # the last column reached, the window full
        await pilot.press("left")
        assert keys()[-1] != "apart"
        board.sort_by("dim:turn_taking")  # sorting by a column out of view brings it into view
        await pilot.pause()
        assert "dim:turn_taking" in keys()


# --- snapshots ---------------------------------------------------------------------------------


@pytest.fixture
def stored_long(tmp_path: Path) -> tuple[Path, Path]:
    """The scenario with a model of a long id (and an empty response) too."""
    db = tmp_path / "arena.db"
    asyncio.run(record_scenario(db, extra=[unjudged_run(), long_model_run()]))
    return db, write_data(tmp_path / "data")


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_leaderboard_snapshot(snap_compare, stored_long, size) -> None:
    async def ready(pilot) -> None:
        board = await open_board(pilot)
        board.query_one("#board", DataTable).move_cursor(row=order(board).index(f"{LONG_MODEL}\x1fmini_bench"))
        await pilot.pause(0.2)

    assert snap_compare(ArenaApp(*stored_long), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_compare_snapshot(snap_compare, stored, size) -> None:
    async def ready(pilot) -> None:
        app = pilot.app
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CompareScreen(run_ids=("r1", "r2")))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        await pilot.pause(0.2)

    assert snap_compare(ArenaApp(*stored), terminal_size=size, run_before=ready)


async def test_without_a_store_the_leaderboard_says_why_in_one_line(tmp_path: Path) -> None:
    app = ArenaApp(None)  # no database configured
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("L")
        await until(pilot, lambda: "cannot load" in str(app.screen.query_one("#board-status", Static).render()))
        status = str(app.screen.query_one("#board-status", Static).render())
        assert status == "cannot load the leaderboard: no database: no database configured"
        await pilot.press("s", "b", "space", "equals_sign", "enter")  # nothing loaded: keys do nothing, no traceback
        assert isinstance(app.screen, LeaderboardScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


def test_consistency_snapshot(snap_compare, stored) -> None:
    async def ready(pilot) -> None:
        board = await open_board(pilot)
        board.query_one("#board", DataTable).move_cursor(row=order(board).index(GPT))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, ConsistencyScreen))
        await pilot.pause(0.2)

    assert snap_compare(ArenaApp(*stored), terminal_size=(120, 30), run_before=ready)
