"""A store read still going when its screen closes (the app quits, the screen is popped) must
end quietly: what it read is dropped, never drawn into widgets that are gone (a race CI hit as
`NoMatches: No nodes match '#runs'` when a test left the app mid-read)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from tests.pilot import until
from tests.snapshots.fixture_run import record_demo_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("recorded") / "arena.db"
    return db, asyncio.run(record_demo_run(db, turns=[0], speed=5.0, run_id="td-1"))


def hold_until_gone(owner, method: str, screen, finished: list[str]) -> None:
    """Make `owner.<method>` (a screen's last await before it draws) do its work, then return
    only once every widget of `screen` is gone."""
    real = getattr(owner, method)

    async def held(*args, **kwargs):
        out = await real(*args, **kwargs)
        while any(w.is_attached for w in screen.children):
            await asyncio.sleep(0)
        finished.append(method)
        return out

    setattr(owner, method, held)


@pytest.mark.parametrize("where", ["runs list", "replay"])
async def test_a_read_finishing_after_its_screen_closed_draws_nothing(where, recorded) -> None:
    db, run_id = recorded
    app = ArenaApp(db)
    finished: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        if where == "runs list":
            hold_until_gone(app.store, "judgements", app.screen, finished)
            app.screen._tallies.clear()  # the run is tallied again: `judgements` is the read's last await
            app.screen.load()
        else:
            app.open_replay(run_id, stepping=False)
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
            hold_until_gone(app, "load_specs", app.screen, finished)
            app.screen.load()
        await pilot.pause()
    # Leaving run_test closed the app with the read held: a draw into the gone widgets would have
    # been re-raised here. The read itself did finish (else this test would prove nothing).
    assert finished, "the held read never returned: the race was not exercised"
