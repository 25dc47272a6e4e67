"""The counting rule on screen at 80, 120 and 160 columns: every screen that shows a run's figures
says the turns counted apart plainly (`6 not played · 1 stopped`), never as failures, `no answer`
for a run no turn of which got one, and a late turn's latency marked, not the whole run's dropped.

The runs are tests/counting_runs.py's, recorded through the real Store, shown by the real app.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from arena_tui.app import ArenaApp
from arena_tui.campaign import records
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.screens.campaigns import CampaignScreen
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.store import Store
from arena_tui.widgets.turn_table import TurnTable
from tests.pilot import until
from tests.test_app_flows import text_of

from .counting_runs import interrupted_run, paced_run, record, sim_run, unanswered_run

SIZES = [(80, 24), (120, 40), (160, 48)]
APART = "6 not played · 1 stopped"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "arena.db"

    async def go() -> None:
        await record(path, interrupted_run("stopped"), unanswered_run("down"), paced_run("paced"),
                     sim_run("simA"), sim_run("simB", faults="1:no_response*"))
        spec = build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", "repeats": 2})
        async with await Store.open(path) as store:
            await records.create(store, "camp", spec)
            for repeat, run_id in ((1, "stopped"), (2, "down")):
                await records.set_cell(store, "camp", Cell("demo_bench", "gpt-realtime", repeat), status="done",
                                       run_id=run_id)

    asyncio.run(go())
    return path


def plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def row_text(table: DataTable, key: str) -> str:
    return " ".join(plain(c) for c in table.get_row(key))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_runs_list_says_what_is_counted_apart_at_every_width(db: Path, size) -> None:
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs", DataTable)
        stopped, down = row_text(table, "stopped"), row_text(table, "down")
        assert "3/10" in stopped and "1 stopped" in stopped and "6 not played" in stopped, stopped
        assert "67% 2/3" in stopped and not any("…" in ln for ln in stopped.splitlines() if "/" in ln), stopped
        assert "no answer" in down and "4 infra failure" in down and "0/4" in down, down
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width  # nothing off the right edge
        legend = str(app.screen.query_one("#runs-legend", Static).render())
        if size[0] < 160:  # what this width leaves out is named, never silently gone
            assert "hidden at this width:" in legend and "started" in legend


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_run_screen_says_the_figures_and_marks_a_late_turn(db: Path, size) -> None:
    app = ArenaApp(db, open_run="stopped")
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        bar = str(app.screen.query_one("#run-filter", Static).render())
        assert " ".join(bar.split()).find(f"strict pass 2/3 · counted apart: {APART}") >= 0, bar
        table = app.screen.query_one(TurnTable)
        assert [plain(table.get_cell(str(i), "verdict")) for i in (3, 4)] == ["STOPPED", "NOT PLAYED"]
        header = str(app.screen.query_one("#run-header").render())
        assert "3/10" in header  # done: the turns that ran to their end, not the stopped one
    app = ArenaApp(db, open_run="paced")
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        table = app.screen.query_one(TurnTable)
        if "v2v" in table.shown_columns:
            assert plain(table.get_cell("1", "v2v")) == "1584!" and plain(table.get_cell("0", "v2v")) == "1000"
        table.move_cursor(row=table.get_row_index("1"))
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "TurnDetailScreen")
        await pilot.pause(0.2)
        latency = text_of(app.screen.query_one("#detail-latency", Static))
        assert "untrusted" in " ".join(latency.split()), latency


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_campaign_cells_say_what_is_counted_apart(db: Path, size) -> None:
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CampaignScreen("camp"))
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
        await pilot.pause(0.2)
        table = app.screen.query_one("#cells", DataTable)
        first = plain(table.get_cell("demo_bench\x1fgpt-realtime\x1f1", "strict")).strip()
        second = plain(table.get_cell("demo_bench\x1fgpt-realtime\x1f2", "strict"))
        assert first == f"67% 2/3 · {APART}" and second == "no answer · 4 infra failure"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_leaderboard_and_compare_say_not_played_never_failed(db: Path, size) -> None:
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(LeaderboardScreen())
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        await pilot.pause(0.2)
        board = app.screen
        notes = " ".join(str(board.query_one("#board-notes", Static).render()).split())
        assert "not scored: down (the model got no turn: 4 infra failure)" in notes
        # said, or (the terminal too short for every note) named in the line that says how many more
        assert f"gpt-realtime on demo_bench: {APART}" in notes or "turns counted apart" in notes.split("more notes")[-1]
        assert "1 turn(s) left out of latency: untrusted" in notes or "untrusted latencies" in notes.split("more notes")[-1]
        models = {r.model for r in board.loaded.board.rows}
        assert models == {"gpt-realtime", "sim [simulator, heuristic judge]",
                          "sim [simulator, heuristic judge, faults: 1:no_response*]"}  # faults: their own row
        gpt = board.loaded.board.row("gpt-realtime", "demo_bench")
        assert [f.run.run_id for f in gpt.runs] == ["paced", "stopped"]
        app.push_screen(CompareScreen(rows=(gpt, gpt)))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause(0.2)
        pair = app.screen.query_one("#pair", DataTable)
        assert plain(pair.get_cell("5", "A")) == "1 not played"  # never "0/1 pass"
        assert plain(pair.get_cell("0", "A")) == "2/2 pass" and "≠" not in plain(pair.get_cell("5", "turn"))
