"""Keys that cannot destroy by surprise: escape closes the find or filter bar it is in (its bar says
`esc`) and only then leaves the screen; a destructive key (`d` delete, `S` stop) asks first and does
nothing as the first key on a screen that just came up (compare's `d`, "only differences", pressed
after an escape that left compare, never reaches the runs list's delete); a live run is stopped on a
key no navigation scheme uses, once asked. Real app, real store, real engine for the live run."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from arena_tui.app import ArenaApp
from arena_tui.launcher import RunRequest
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.spine.settings import build_settings
from arena_tui.widgets.query_line import QueryLine
from benchmarks.registry import load_benchmark
from tests.pilot import until
from tests.test_app_review import layout as review_layout

layout = review_layout  # the demo recording and the long-named run: (database, demo run id, long run id)


def dialogs(app) -> list[str]:
    return [type(s).__name__ for s in app.screen_stack if type(s).__name__.endswith("Dialog")]


async def found_then_enter(pilot, text: str) -> QueryLine:
    """`/ text enter`: the cursor on the first match, the focus back on the table, the bar still open."""
    await pilot.press("slash", *text, "enter")
    await pilot.pause()
    line = pilot.app.screen.query_one("#find", QueryLine)
    assert line.is_open and not line.has_focus_within
    return line


async def open_compare(pilot) -> CompareScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
    await pilot.press("space", "down", "space", "equals_sign")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen))
    await pilot.pause(0.2)
    return app.screen


async def test_escape_closes_the_find_bar_it_is_in_before_it_leaves_compare_and_d_then_deletes_nothing(layout) -> None:
    db, _, _ = layout
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        compare = await open_compare(pilot)
        line = await found_then_enter(pilot, "tune")
        await pilot.press("escape")  # the bar says esc: it closes, compare stays
        await pilot.pause()
        assert app.screen is compare and not line.is_open
        await pilot.press("escape")  # nothing left to close: back to the runs list
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        runs = app.screen
        await pilot.press("d")  # meant for compare ("only differences"): the first key here destroys nothing
        await pilot.pause(0.2)
        assert app.screen is runs and dialogs(app) == []
        assert any("press d again" in str(n.message) for n in app._notifications)
        await pilot.press("d")  # asked for again, on purpose: the question, No focused
        await until(pilot, lambda: dialogs(app) == ["ConfirmDialog"])
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is runs)
        assert len(runs.rows) == 2  # nothing deleted


async def test_the_runs_list_asks_before_it_deletes_when_it_has_been_in_use(layout) -> None:
    """The first screen, or one used since it came up: `d` asks at once (a dialog of its own is no change of screen)."""
    db, _, _ = layout
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await pilot.press("d")
        await until(pilot, lambda: dialogs(app) == ["ConfirmDialog"])
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("d")  # back from its own question: still in use, asks again at once
        await until(pilot, lambda: dialogs(app) == ["ConfirmDialog"])


@pytest.mark.parametrize("where", ["leaderboard", "run", "runs"])
async def test_escape_closes_an_open_find_or_filter_bar_first_everywhere(layout, where: str) -> None:
    db, run_id, _ = layout
    app = ArenaApp(db, open_run=run_id if where == "run" else None)
    async with app.run_test(size=(120, 40)) as pilot:
        if where == "run":
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        else:
            await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        if where == "leaderboard":
            await pilot.press("L")
            await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        screen = app.screen
        line = await found_then_enter(pilot, "demo" if where != "run" else "tune")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and not line.is_open
        if where != "run":  # the filter too, once enter handed the focus back to the table
            await pilot.press("f", *"sim", "enter")
            await pilot.pause()
            narrowed = screen.query_one("#filter", QueryLine)
            assert narrowed.is_open and not narrowed.has_focus_within
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is screen and not narrowed.is_open
        if where != "runs":
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is not screen)


async def test_a_live_run_stops_on_a_key_no_navigation_uses_and_only_once_asked(tmp_path: Path) -> None:
    bench = load_benchmark("demo_bench")
    settings = build_settings("sim", turns="0-2", greeting=False)
    app = ArenaApp(tmp_path / "arena.db", launch=RunRequest(bench, settings, "none"), launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.state.started is not None)
        screen = app.screen
        run_id = screen.state.run_id
        await until(pilot, lambda: app.running(run_id))
        table = screen.query_one(DataTable)
        await pilot.press("k", "k", "j")  # up, up, down to a vim user: nothing stops
        await pilot.pause(0.2)
        assert app.running(run_id) and dialogs(app) == [] and table.has_focus
        await pilot.press("S")  # asked
        await until(pilot, lambda: dialogs(app) == ["ConfirmDialog"])
        await pilot.press("enter")  # No has the focus: a stray enter keeps it running
        await until(pilot, lambda: app.screen is screen)
        assert app.running(run_id)
        await pilot.press("S")
        await until(pilot, lambda: dialogs(app) == ["ConfirmDialog"])
        await pilot.press("y")
        await until(pilot, lambda: screen.state.ended is not None, timeout=60)
        assert screen.state.ended.status == "interrupted"
