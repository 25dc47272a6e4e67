"""Screens that read the store in a worker. The runs list polls it: what another process
committed shows up without a key, a database nobody wrote to is not read again (`PollingScreen`,
`Reader.data_version`), and only a run whose judgements changed is tallied again
(`Reader.judgement_marks`). A read still going when its screen closes (the app quits, the screen
is popped) ends quietly: what it read is dropped, never drawn into widgets that are gone (a race
CI hit as `NoMatches: No nodes match '#runs'` when a test left the app mid-read)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.spine.events import DimensionScore, Judgement
from arena_tui.store import Store
from tests.pilot import until
from tests.snapshots.fixture_run import copy_db, record_demo_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("recorded") / "arena.db"
    return db, asyncio.run(record_demo_run(db, turns=[0], speed=5.0, run_id="poll-1"))


async def test_the_runs_list_reads_again_only_what_another_connection_committed(recorded, tmp_path) -> None:
    src, run_id = recorded
    db = copy_db(src, tmp_path)
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and run_id in app.screen.rows)
        screen = app.screen
        reads: list[int] = []
        real = screen.read

        async def counted(store):
            reads.append(1)
            return await real(store)

        screen.read = counted
        await app.store.flush()
        screen.load()  # an explicit load always reads, and notes the version it read
        await app.workers.wait_for_complete()
        assert len(reads) == 1
        for _ in range(3):  # the timer's polls: nothing was committed, nothing is read
            screen._tick()
            await app.workers.wait_for_complete()
        assert len(reads) == 1

        tallied: list[str] = []
        real_judgements = app.store.judgements

        async def judgements(run_id, *args):
            tallied.append(run_id)
            return await real_judgements(run_id, *args)

        app.store.judgements = judgements
        before = screen.rows[run_id]["rates"]["kb_grounding"]
        assert before[1] == 1
        other = await Store.open(db)  # another process's connection: a new revision for turn 0
        try:
            other.submit(Judgement(run_id=run_id, t_ms=1e6, turn_index=0, judge="openai:test", revision=9,
                                   scores={"kb_grounding": DimensionScore(verdict="fail")}))
            await other.flush()
        finally:
            await other.close()
        screen._tick()
        await until(pilot, lambda: screen.rows[run_id]["rates"].get("kb_grounding") == (0, 1), 10)
        assert len(reads) == 2 and tallied == [run_id]
        screen.load()  # read again, nothing changed: the run's tally is reused
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(reads) == 3 and tallied == [run_id]

        other = await Store.open(db)  # and deletes the run
        try:
            assert await other.delete_run(run_id)
        finally:
            await other.close()
        screen._tick()
        await until(pilot, lambda: run_id not in screen.rows, 10)
        assert len(reads) == 4


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
async def test_a_read_finishing_after_its_screen_closed_draws_nothing(where, recorded, tmp_path) -> None:
    src, run_id = recorded
    app = ArenaApp(copy_db(src, tmp_path))
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
            hold_until_gone(app, "load_benchmark", app.screen, finished)
            app.screen.load()
        await pilot.pause()
    # Leaving run_test closed the app with the read held: a draw into the gone widgets would have
    # been re-raised here. The read itself did finish (else this test would prove nothing).
    assert finished, "the held read never returned: the race was not exercised"
