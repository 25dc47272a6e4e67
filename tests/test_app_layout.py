"""The run screen fits the terminal it is in, the retry count shows, and the event log follows live.

Driven through the real app on the frozen demo recording (tests/snapshots/demo_run.jsonl).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.widgets.event_log import EventLog
from arena_tui.widgets.fit import fit_columns
from arena_tui.run_view import RunState
from arena_tui.widgets.turn_table import TurnTable
from tests.snapshots.fixture_run import fixture_events, load_fixture_db
from tests.pilot import until

SIZES = [(80, 24), (120, 40), (160, 48)]


def test_fit_keeps_the_required_columns_and_cuts_only_the_stretching_one() -> None:
    need = [1, 11, 9, 2, 5, 58]
    shown = fit_columns(40, need, [0, 1, 2, 3, 4], 3, stretch=5, min_stretch=8)
    assert list(shown) == [0, 1, 2, 3, 4]  # 3+13+11+4+7 = 38: no room left for the categories
    wide = fit_columns(80, need, [0, 1, 2, 3, 4], 3, stretch=5)
    assert wide[5] == 80 - 38 - 2  # the categories take what is left, cut to it
    narrow = fit_columns(10, need, [0, 1, 2, 3, 4], 3, stretch=5)
    assert list(narrow) == [0, 1, 2]  # the required ones even when they do not fit


@pytest.fixture
def fixture_db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_fixture_db(db))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_turn_table_shows_turn_status_verdict_and_dimensions_at_every_size(fixture_db, size) -> None:
    db, run_id = fixture_db
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        table = app.screen.query_one(TurnTable)
        shown = table.shown_columns
        assert shown[:3] == ["idx", "status", "verdict"]
        assert sum(c.startswith("dim:") for c in shown) >= 3, shown
        # every column shown is whole inside the table: nothing runs off its right edge
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width, (total, table.size.width)
        # a cell's content is never cut but the categories' (status, verdict, numbers stay whole)
        for col in table.columns.values():
            if col.key.value != "cats":
                assert col.content_width >= max((len(str(table.get_cell(r, col.key))) for r in table.rows), default=0)
        retried = {ev.turn_index for ev in fixture_events() if ev.kind == "retry"}
        for turn in retried:
            assert "ok (1 retry)" == str(table.get_cell(str(turn), "status")), turn
        assert "retr" not in str(table.get_cell("0", "status"))
        header = str(app.screen.query_one("#run-header").render())
        assert "00:16" in header and "6/6" in header and "COMPLETED" in header  # where the run is
        assert " demo_bench " in header and "sim" in header  # and what it is: benchmark and model stay


async def test_turn_table_refits_when_the_terminal_is_resized(fixture_db) -> None:
    db, run_id = fixture_db
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        table = app.screen.query_one(TurnTable)
        wide = table.shown_columns
        assert "cats" in wide and "v2v" in wide
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: table.shown_columns != wide)
        narrow = table.shown_columns
        assert narrow[:3] == ["idx", "status", "verdict"] and "cats" not in narrow
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: table.shown_columns == wide)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_runs_list_shows_pass_rates_whole(fixture_db, size) -> None:
    db, _ = fixture_db
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one("#runs").row_count)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs")
        keys = [str(c.key.value) for c in table.columns.values()]
        assert {"id", "status", "progress", "rates"} <= set(keys)
        rates = table.get_cell_at((0, keys.index("rates")))
        assert "…" not in rates.plain and ("heuristic:" in rates.plain or "h:" in rates.plain)
        assert "KB" in rates.plain and rates.plain.rstrip()[-1].isdigit() or rates.plain.endswith("%")
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width


async def test_event_log_follows_the_live_run_with_wrapped_lines_indented(tmp_path: Path) -> None:
    events = fixture_events()
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        run_id = events[0].run_id
        state = app.live[run_id] = RunState(run_id)
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(EventLog))
        log = app.screen.query_one(EventLog)
        fed = 0
        for ev in events:  # the whole run streams in, a screenful of log lines many times over
            app.bus.publish(ev)
            fed += 1
            if fed % 200 == 0:
                app.pump()
                await pilot.pause(0.05)
        app.pump()
        await until(pilot, lambda: "run completed" in str(log.blocks[-1].content))
        # followed to the end: the newest line is on screen, not only the first page
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        # a long line wraps under its text, not under the time stamp: render what a block shows
        from rich.console import Console

        console = Console(width=log.size.width, record=True, file=open(os.devnull, "w"))
        block = next(b.content for b in log.blocks if "run started" in str(b.content))
        console.print(block)
        drawn = console.export_text().splitlines()
        assert drawn[0].lstrip().startswith("0.00s run started") and len(drawn) > 1, drawn
        stamp = drawn[0].index("run started")
        wrapped = [ln for ln in drawn[1:] if ln.strip() and not ln.strip()[0].isdigit()]
        assert wrapped, drawn
        assert all(ln[:stamp].strip() == "" for ln in wrapped), drawn


async def test_runs_list_refits_when_the_terminal_is_resized(fixture_db) -> None:
    db, _ = fixture_db
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one("#runs").row_count)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs")

        def keys() -> list[str]:
            return [str(c.key.value) for c in table.columns.values()]

        assert "started" in keys()
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: "started" not in keys())
        assert {"id", "status", "progress", "rates"} <= set(keys())
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= table.size.width
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: "started" in keys())
