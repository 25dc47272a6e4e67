"""The monitor's runs in worker processes (`RunPool`, what `arena-tui` gives the app): the same run,
judged and recorded by the monitor, its sessions in another process; stopping one run leaves the
workers serving; a killed worker fails its run with the reason; closing the monitor ends the
workers."""

from __future__ import annotations

import gc
import os
import signal
from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.orchestration.run_pool import RunPool
from arena_tui.run_view import RunState
from arena_tui.spine.heap import settle_heaps_here
from arena_tui.store import Store
from arena_tui.spine.settings import RunSettings
from tests.pilot import until

SIZE = (150, 45)
SPEED = 5.0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie (exited, not yet reaped) is not alive
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


async def speaking_run(app: ArenaApp, pilot, pool: RunPool) -> tuple[str, RunState, int]:
    """A 1x three-turn run started in the pool, once its first user turn is being spoken: its id,
    its state, and the pid of the worker running it."""
    run_id = app.start_run("demo_bench", RunSettings(model="sim", speed=1, turns=[0, 1, 2]), judge="none")
    state = app.live[run_id]
    await until(pilot, lambda: state.current_turn == 0 and state.meters["user"].rms_dbfs > -60, 180)
    return run_id, state, pool.executor.pids[0]


async def test_a_pooled_run_streams_into_the_monitor_and_is_judged_and_recorded(tmp_path: Path) -> None:
    settle_heaps_here()  # as `arena-tui` sets up the monitor's process; undone below
    thresholds = gc.get_threshold()
    try:
        await pooled_run_streams(tmp_path)
    finally:
        settle_heaps_here(False)
        gc.unfreeze()
        gc.set_threshold(*thresholds)


async def pooled_run_streams(tmp_path: Path) -> None:
    pool = RunPool(workers=1)
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher(pool))
    async with app.run_test(size=SIZE) as pilot:
        run_id = app.start_run("demo_bench", RunSettings(model="sim", speed=SPEED, turns=[0, 1],
                                              faults="0:barge_in=500"), judge="heuristic")
        app.open_run(run_id)
        state = app.live[run_id]
        await until(pilot, lambda: not app.running(run_id), 180)
        await until(pilot, lambda: all(state.turns[i].latest is not None for i in (0, 1)), 30)
        assert state.status == "completed", state.log
        assert [state.turns[i].status for i in (0, 1)] == ["ok", "ok"]
        workers = pool.executor.pids
        assert workers and os.getpid() not in workers  # the sessions ran elsewhere
        assert gc.get_freeze_count() > 0  # the imported modules sit out the collector's full passes (spine.heap)
        await app.shutdown()
    assert not any(alive(pid) for pid in workers), "a worker outlived the monitor"
    async with await Store.open(tmp_path / "arena.db") as store:
        run = await store.get_run(run_id)
        assert run is not None and run.status == "completed" and run.turns_done == 2
        assert len(await store.latest_judgements(run_id)) == 2
        assert await store.events(run_id, kinds=["overlap"]), "the barge-in fault did not come through"
        assert await store.events(run_id, kinds=["audio"]), "the run's audio did not reach the store"


async def test_stopping_one_pooled_run_leaves_the_worker_serving_the_next(tmp_path: Path) -> None:
    pool = RunPool(workers=1)
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher(pool))
    async with app.run_test(size=SIZE) as pilot:
        first, state, worker = await speaking_run(app, pilot, pool)
        await app.stop_runs([first])
        assert state.status == "interrupted"  # its own ending, published before the stop returned
        second = app.start_run("demo_bench", RunSettings(model="sim", speed=SPEED, turns=[0]), judge="none")
        await until(pilot, lambda: not app.running(second), 120)
        assert app.live[second].status == "completed"
        assert pool.executor.pids == [worker]  # the same worker, still there
        await app.shutdown()
    async with await Store.open(tmp_path / "arena.db") as store:
        assert (await store.get_run(first)).status == "interrupted"
        assert [ev.status for _, ev in await store.events(first, kinds=["run_ended"])] == ["interrupted"]


async def test_a_killed_worker_fails_its_run_with_the_reason_and_a_fresh_one_takes_the_next(tmp_path: Path) -> None:
    pool = RunPool(workers=1)
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher(pool))
    async with app.run_test(size=SIZE) as pilot:
        doomed, state, worker = await speaking_run(app, pilot, pool)
        os.kill(worker, signal.SIGKILL)
        await until(pilot, lambda: not app.running(doomed), 60)
        assert state.status == "failed"
        assert "SIGKILL" in (state.ended.reason if state.ended else ""), state.ended
        await until(pilot, lambda: pool.executor.pids and pool.executor.pids[0] != worker, 60)
        after = app.start_run("demo_bench", RunSettings(model="sim", speed=SPEED, turns=[0]), judge="none")
        await until(pilot, lambda: not app.running(after), 180)
        assert app.live[after].status == "completed"
        await app.shutdown()
    async with await Store.open(tmp_path / "arena.db") as store:
        assert (await store.get_run(doomed)).status == "failed"


async def test_a_run_queued_behind_a_full_worker_can_be_stopped_before_it_starts(tmp_path: Path) -> None:
    pool = RunPool(workers=1, per_worker=1)
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher(pool))
    async with app.run_test(size=SIZE) as pilot:
        busy = app.start_run("demo_bench", RunSettings(model="sim", speed=1, turns=[0, 1]), judge="none")
        await until(pilot, lambda: app.live[busy].started is not None, 180)  # it holds the one slot
        queued = app.start_run("demo_bench", RunSettings(model="sim", speed=1, turns=[0]), judge="none")
        await until(pilot, lambda: any(j.run_id == queued for j in pool.executor.open_jobs), 60)
        await pilot.pause(0.5)
        assert app.live[queued].started is None  # waits for the one slot
        await app.stop_runs([queued])
        assert not app.running(queued) and app.live[queued].started is None  # nothing of it ran or was recorded
        assert app.running(busy)
        await app.shutdown()
    async with await Store.open(tmp_path / "arena.db") as store:
        assert await store.get_run(queued) is None
        assert (await store.get_run(busy)).status == "interrupted"
