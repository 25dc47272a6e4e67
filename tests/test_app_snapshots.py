"""Snapshots of every screen, from a frozen real recording (fixed times, fixed data).

Regenerate after an intended UI change with `pytest tests/test_app_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.widgets.run_state import RunState, specs_from_benchmark
from arena_tui.widgets.turn_table import TurnTable
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events, load_fixture_db

SIZE = (150, 42)


@pytest.fixture
def fixture_db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_fixture_db(db))


async def _until(pilot, cond, timeout: float = 15.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("screen did not settle")


async def _replay_ready(pilot) -> None:
    app = pilot.app
    await _until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)


def test_runs_list(snap_compare, fixture_db) -> None:
    db, _ = fixture_db

    async def ready(pilot) -> None:
        await _until(pilot, lambda: isinstance(pilot.app.screen, RunsScreen) and pilot.app.screen.rows)
        await pilot.pause(0.2)

    assert snap_compare(ArenaApp(db), terminal_size=SIZE, run_before=ready)


def test_live_run_mid_turn_with_overlap(snap_compare, tmp_path: Path) -> None:
    events = fixture_events()
    turn = next(ev.turn_index for ev in events if ev.kind == "overlap")

    async def live(pilot) -> None:
        app = pilot.app
        from benchmarks.loader import load_benchmark

        run_id = events[0].run_id
        app.live[run_id] = RunState(run_id, specs_from_benchmark(load_benchmark("demo_bench")))
        for ev in cut_mid_turn(events, turn):
            app.bus.publish(ev)
        app.pump()
        app.push_screen(RunScreen(app.live[run_id], live=True))
        await _until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(tmp_path / "arena.db"), terminal_size=SIZE, run_before=live)


def test_turn_detail(snap_compare, fixture_db) -> None:
    db, run_id = fixture_db

    async def detail(pilot) -> None:
        await _replay_ready(pilot)
        await pilot.press("end")
        table = pilot.app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("3"))  # the turn with the rotation and retry
        await pilot.press("enter")
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=(150, 60), run_before=detail)


def test_replay_step(snap_compare, fixture_db) -> None:
    db, run_id = fixture_db

    async def replay(pilot) -> None:
        await _replay_ready(pilot)
        await pilot.press("n", "n", "n")
        await pilot.pause(0.3)

    assert snap_compare(ArenaApp(db, open_run=run_id), terminal_size=SIZE, run_before=replay)


def test_help(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(ArenaApp(tmp_path / "arena.db"), terminal_size=SIZE, press=["question_mark"])
