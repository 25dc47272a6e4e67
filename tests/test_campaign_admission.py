"""Admission control: a worker whose loop runs late is given fewer sessions, then slower new runs.

The rules (`Admission`) on windows of measured lag, then the real thing: a local pool whose
worker process measures its own loop while runs hold it late (tests/campaign_runners.py
`loop_holder`), and admits fewer runs next to them, then gives fresh runs a lower speed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from arena_tui.orchestration.admission import (
    BUSY_WINDOWS, BUSY_WORST_MS, CALM_WINDOWS, COOLDOWN_WINDOWS, SLOW_WINDOWS, Admission, Load, pace_text,
)
from arena_tui.orchestration.executor import Job
from arena_tui.orchestration.local import LocalExecutor
from arena_tui.campaign.snapshot import snapshot
from arena_tui.compare.selection import ALL, select_runs
from arena_tui.run_view import RunState
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from benchmarks.registry import open_benchmark

BUSY, CALM, MIDDLING = Load(BUSY_WORST_MS + 40, 20.0), Load(2.0, 0.5), Load(40.0, 4.0)


def test_busy_windows_cut_one_session_at_a_time_never_below_one() -> None:
    a = Admission(most=4, speed=1.0)
    for _ in range(BUSY_WINDOWS - 1):  # one stall (a run importing its provider) is no busy machine
        assert not a.observe(BUSY, sessions=4) and not a.busy
    a.observe(CALM, sessions=4)
    for _ in range(BUSY_WINDOWS - 1):
        assert not a.observe(BUSY, sessions=4)
    assert a.observe(BUSY, sessions=4) and a.limit == 3 and a.busy
    for _ in range(COOLDOWN_WINDOWS - 1):  # no second cut before the first had time to tell
        assert not a.observe(BUSY, sessions=4) and a.limit == 3
    assert a.observe(BUSY, sessions=4) and a.limit == 2
    for _ in range(10 * COOLDOWN_WINDOWS):
        a.observe(BUSY, sessions=2)
    assert a.limit == 1 and a.speed_cap == 1.0  # at 1x the speed is never lowered
    assert pace_text([a]) == "pace: 1 session/worker, machine busy"


def test_a_worker_still_busy_with_one_session_halves_the_speed_of_its_next_runs() -> None:
    a = Admission(most=1, speed=20.0)
    for _ in range(SLOW_WINDOWS * 3):  # busy, but because of others' sessions it still holds: no speed cut
        a.observe(BUSY, sessions=3)
    assert a.speed_cap == 20.0
    for _ in range(SLOW_WINDOWS + BUSY_WINDOWS - 1):
        a.observe(BUSY, sessions=1)
    assert a.speed_cap == 10.0
    assert a.speed_for(20.0, resumed=False) == 10.0 and a.speed_for(20.0, resumed=True) == 20.0  # one speed per run
    assert a.speed_for(4.0, resumed=False) == 4.0
    assert pace_text([a, Admission(most=1, speed=20.0)]) == (
        "pace: 1 session/worker, new runs at speed 10 (asked 20), machine busy")


def test_calm_windows_give_back_the_speed_first_then_sessions_up_to_the_asked() -> None:
    a = Admission(most=3, speed=8.0)
    a.limit, a.speed_cap = 1, 2.0
    for _ in range(CALM_WINDOWS - 1):
        a.observe(CALM, sessions=1)
    a.observe(MIDDLING, sessions=1)  # a middling window breaks the streak
    for _ in range(CALM_WINDOWS - 1):
        assert not a.observe(CALM, sessions=1)
    assert a.observe(CALM, sessions=1) and (a.limit, a.speed_cap) == (1, 4.0)
    for _ in range(CALM_WINDOWS):
        a.observe(CALM, sessions=1)
    assert (a.limit, a.speed_cap) == (1, 8.0)
    for _ in range(3 * CALM_WINDOWS):  # not holding all it may: calm says nothing about more
        a.observe(CALM, sessions=0)
    assert a.limit == 1
    for _ in range(10 * CALM_WINDOWS):
        a.observe(CALM, sessions=a.limit)
    assert a.limit == 3 and not a.busy and pace_text([a]) == "pace: 3 sessions/worker"


async def test_a_worker_held_late_is_given_fewer_runs_then_slower_ones(tmp_path: Path) -> None:
    """Three runs start together on a worker allowed three; their lag makes it admit fewer, so
    the later ones start alone, and those started alone and still late get half the speed."""
    snap = snapshot(open_benchmark("demo_bench"))
    done: dict[str, dict] = {}
    paces: list[str] = []
    pool = LocalExecutor(EventBus(), on_lost=lambda j, r: pytest.fail(f"lost {r}"),
                         on_done=lambda j, o: done.__setitem__(j.run_id, o.result | {"status": o.status}),
                         workers=1, per_worker=3, speed=8.0, runner="tests.campaign_runners:loop_holder")
    pool.on_pace = paces.append
    await pool.start()
    try:
        for i in range(7):
            pool.submit(Job(f"r{i}", snap, RunSettings(model="sim", speed=8.0),
                            resume={"from_turn": 0, "start_ms": 0.0, "done": []} if i == 6 else None))
        await pool.join()
    finally:
        await pool.close()
    assert all(d["status"] == "finished" for d in done.values()), done
    first, later = [done[f"r{i}"] for i in range(3)], [done[f"r{i}"] for i in range(3, 7)]
    assert [d["active"] for d in first] == [1, 2, 3]  # admitted before any window was measured
    assert all(d["active"] == 1 for d in later), done  # the busy worker took one at a time
    assert any(d["speed"] < 8.0 for d in later[:-1]), done  # fresh runs started alone on a late loop: slower
    assert later[-1]["speed"] == 8.0  # a resumed run keeps its run's speed
    assert any("machine busy" in p for p in paces) and any(p.startswith("pace: 1 session/worker") for p in paces), paces


def test_campaign_show_and_list_say_the_live_pace_and_nothing_once_its_coordinator_is_gone(tmp_path: Path, capsys) -> None:
    import asyncio

    from arena_tui.campaign import records
    from arena_tui.campaign.spec import build_spec
    from arena_tui.cli import main
    from arena_tui.store import Store

    db = tmp_path / "arena.db"
    said = "pace: 1 session/worker, new runs at speed 10 (asked 20), machine busy"

    async def coordinate(release: bool) -> None:
        async with await Store.open(db) as store:
            if release:
                await records.release(store, "camp01")
                return
            await records.create(store, "camp01", build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "speed": 20.0}))
            await records.claim(store, "camp01")  # this (live) process coordinates it
            await records.set_pace(store, "camp01", said)

    asyncio.run(coordinate(release=False))
    assert main(["--db", str(db), "campaign", "show", "camp01"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(f"0/1 complete; {said}")
    assert main(["--db", str(db), "campaign", "list"]) == 0
    assert said in capsys.readouterr().out
    asyncio.run(coordinate(release=True))
    assert main(["--db", str(db), "campaign", "show", "camp01"]) == 0
    assert "pace:" not in capsys.readouterr().out


@contextlib.asynccontextmanager
async def _campaign_at_8(tmp_path: Path, executor: type[LocalExecutor], workers: int):
    """A one-cell campaign at 8x whose runs lose pace at 8x (tests/campaign_runners.py
    `stalls_at_speed_8`) on `executor`: (store, result, notices), the store closed after."""
    from arena_tui.orchestration.orchestrator import run_campaign
    from arena_tui.campaign.spec import build_spec
    from arena_tui.store import Store

    def factory(spec, bus, on_lost, on_done):
        return executor(bus, on_lost=on_lost, on_done=on_done, workers=workers, per_worker=1, speed=spec.speed,
                        runner="tests.campaign_runners:stalls_at_speed_8")

    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "speed": 8.0, "turns": "0-1",
                           "greeting": False, "judge": "none"})
    store = await Store.open(tmp_path / "arena.db")
    try:
        bus = EventBus()
        recording = store.start_recording(bus)
        lines: list[str] = []
        try:
            result = await run_campaign(store, bus, spec, notice=lines.append, executor_factory=factory)
        finally:
            bus.close()
            await recording
        yield store, result, lines
    finally:
        await store.close()


async def test_a_run_that_lost_pace_on_a_worker_too_busy_for_its_speed_is_rerun_afresh_slower(tmp_path: Path) -> None:
    """A re-run resumed in place keeps its run's speed (one speed per run), and would lose pace at
    it again: when admission control gives new runs less by then, the re-run starts afresh at that."""
    from arena_tui.campaign import records

    class SlowedAfterOne(LocalExecutor):
        """Its worker's admission control halves the speed once the first run is done (as it
        does on a busy machine: the input here, not what is tested)."""

        def _on_message(self, w, msg):
            if msg[0] == "done":
                w.admission.speed_cap = 4.0
            super()._on_message(w, msg)

    async with _campaign_at_8(tmp_path, SlowedAfterOne, workers=1) as (store, result, lines):
        runs = {r.run_id: r for r in await store.list_runs()}
        (row,) = await records.cells(store, result.campaign_id)
        assert row.status == "done" and runs[row.run_id].speed == 4.0, (row, lines)
        assert await records.cell_state(store, row.run_id) == ("complete", 2, 2)
        (old,) = [r for r in runs if r != row.run_id]
        assert runs[old].speed == 8.0 and await records.lost_pace_turns(store, old) == [0]  # kept, counted nowhere
        assert any("from scratch at speed 4 (admission control: machine too busy for 8)" in line for line in lines), lines
        # ... and superseded: `report all` and the leaderboard count the cell once, as `report CAMPAIGN` does
        assert runs[old].superseded_by == row.run_id and runs[row.run_id].superseded_by is None
        everything = await select_runs(store, [ALL])
        assert everything.run_ids == [row.run_id] and "superseded by run" in everything.skipped[old]
        assert (await select_runs(store, ["demo_bench"])).run_ids == [row.run_id]
        assert (await select_runs(store, [old])).run_ids == [old]  # asked for by its own id: shown
        replayed = RunState(old)
        replayed.apply_all([ev for _, ev in await store.events(old)])
        assert any(f"superseded by run {row.run_id}" in ln.text for ln in replayed.log)


async def test_a_rerun_from_scratch_runs_at_the_speed_its_notice_says(tmp_path: Path) -> None:
    """The notice said "from scratch at speed 4" (the busiest worker's cap) while the run went to a
    calm worker and ran at 8: each re-run runs at the speed announced, wherever it runs."""
    from arena_tui.campaign import records

    class BusyAfterOne(LocalExecutor):
        """The worker that ran the first run is busy and slowed to 4 after it; the other stays calm at 8."""

        def _on_message(self, w, msg):
            if msg[0] == "done" and not any(x.admission.busy for x in self._workers):
                w.admission.speed_cap, w.admission.busy = 4.0, True
            super()._on_message(w, msg)

    async with _campaign_at_8(tmp_path, BusyAfterOne, workers=2) as (store, result, lines):
        announced = {line.split(" run ", 1)[1].split()[0]: float(line.split("from scratch at speed ")[1].split()[0])
                     for line in lines if "from scratch at speed" in line}
        assert announced, lines
        runs = {r.run_id: r for r in await store.list_runs()}
        assert {run_id: runs[run_id].speed for run_id in announced} == announced, lines
        (row,) = await records.cells(store, result.campaign_id)
        assert row.status == "done", lines
