"""A recorded demo run for the UI tests and screenshots: recorded for real, replayed for determinism.

`record_demo_run` drives the real engine, simulator, heuristic judge and store headless
(used by the flow tests, so they always exercise today's engine). `demo_run.jsonl` is one
such recording frozen to a file (audio dropped); `load_fixture_db` writes it into a fresh
database through the real store and pins the wall-clock columns, so snapshots never drift.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "demo_run.jsonl"
FIXED_STARTED = "2026-05-05T09:00:00.000Z"
FIXED_ENDED = "2026-05-05T09:03:12.000Z"
FAULTS = "0:barge_in=500,1:no_response,3:disconnect,4:truncated"
# The layout fixture: a second real recording (turn 1 answered empty on all four attempts:
# `empty_response (3 retries)`), listed under the longest model id the catalog has and a run id of
# the one form runs get, so every screen is seen with a long status, model and id.
LONG_FIXTURE = HERE / "long_run.jsonl"
LONG_FAULTS = "0:barge_in=500,1:empty_response*,4:truncated"
LONG_MODEL = "gemini-2.5-flash-native-audio-preview-12-2025"
LONG_RUN_ID = "7d3f0c2a9b1e4f6a8c5d2e1f0a9b8c7d"
LONG_STARTED = "2026-05-05T10:00:00.000Z"
LONG_ENDED = "2026-05-05T10:02:05.000Z"


def copy_db(src: Path, dst_dir: Path) -> Path:
    """A copy of the database `src` as `dst_dir/arena.db` (SQLite's backup: WAL content included)."""
    dst = dst_dir / "arena.db"
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)
    return dst


async def record_demo_run(db: Path, *, turns: list[int], faults: str | None = FAULTS, speed: float = 15.0,
                          run_id: str | None = None) -> str:
    """Run demo_bench against the simulator with the heuristic judge, recorded into `db`."""
    from arena_tui.spine.bus import EventBus
    from arena_tui.judge import JudgeWorker, make_backend
    from arena_tui.store import Store
    from benchmarks.registry import load_benchmark
    from arena_tui.spine.settings import RunSettings
    from runners.engine import run_benchmark

    bench = load_benchmark("demo_bench")
    store = await Store.open(db)
    bus = EventBus()
    recorder = store.start_recording(bus)
    run_id = run_id or "demo-recorded"
    judge = JudgeWorker(bench, make_backend("heuristic"), bus, run_id)
    task = judge.start()
    try:
        await run_benchmark(bench, RunSettings(model="sim", speed=speed, turns=turns, faults=faults), bus, run_id=run_id)
        await asyncio.wait_for(task, 60)
    finally:
        await store.flush()
        await store.close()
    del recorder
    return run_id


async def dump_events(db: Path, run_id: str, out: Path = FIXTURE) -> int:
    from arena_tui.store import Store

    store = await Store.open(db)
    try:
        rows = await store.events(run_id)
    finally:
        await store.close()
    with out.open("w") as f:
        for _, ev in rows:
            f.write(ev.model_dump_json() + "\n")
    return len(rows)


def fixture_events(path: Path = FIXTURE) -> list:
    from arena_tui.spine.events import parse_event

    return [parse_event(line) for line in path.read_text().splitlines() if line.strip()]


async def load_fixture_db(db: Path, path: Path = FIXTURE) -> str:
    """The frozen run in a fresh database, written by the real store; returns its run id."""
    from arena_tui.store import Store

    events = fixture_events(path)
    store = await Store.open(db)
    try:
        for ev in events:
            store.submit(ev)
        await store.flush()
    finally:
        await store.close()
    run_id = events[0].run_id
    with sqlite3.connect(db) as conn:  # wall-clock columns are the recorder's; pin them
        conn.execute("UPDATE runs SET started_at=?, ended_at=? WHERE run_id=?", (FIXED_STARTED, FIXED_ENDED, run_id))
    return run_id


def long_events() -> list:
    """The layout recording as the long-named run: its run id and model relabelled (the audio, turns,
    statuses and judgements are the recording's)."""
    events = [ev.model_copy(update={"run_id": LONG_RUN_ID}) for ev in fixture_events(LONG_FIXTURE)]
    first = events[0]
    events[0] = first.model_copy(update={"model": LONG_MODEL, "provider": "gemini"})
    return events


async def load_layout_db(db: Path) -> str:
    """The demo recording and the long-named run (`long_events`) in a fresh database; returns the
    long run's id."""
    from arena_tui.store import Store

    await load_fixture_db(db)
    store = await Store.open(db)
    try:
        for ev in long_events():
            store.submit(ev)
        await store.flush()
    finally:
        await store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET started_at=?, ended_at=? WHERE run_id=?", (LONG_STARTED, LONG_ENDED, LONG_RUN_ID))
    return LONG_RUN_ID


def cut_mid_turn(events: list, turn: int) -> list:
    """The events up to the middle of `turn` (just after its overlap when it has one) for a 'live' view."""
    idx = [i for i, ev in enumerate(events) if ev.turn_index == turn and ev.kind != "judgement"]
    if not idx:
        return list(events)
    ov = [i for i in idx if events[i].kind == "overlap"]
    levels = [i for i in idx if events[i].kind == "level"]
    cut = ov[0] if ov else (levels[len(levels) // 2] if levels else idx[len(idx) // 2])
    head = [ev for ev in events[: cut + 1] if ev.kind != "turn_ended" or ev.turn_index != turn]
    return head


if __name__ == "__main__":  # regenerate demo_run.jsonl and long_run.jsonl from fresh real recordings
    import tempfile

    async def main() -> None:
        for name, faults, out in (("demo-fixture", FAULTS, FIXTURE), ("layout-fixture", LONG_FAULTS, LONG_FIXTURE)):
            db = Path(tempfile.mkdtemp()) / "rec.db"
            run_id = await record_demo_run(db, turns=[0, 1, 2, 3, 4, 5], faults=faults, run_id=name)
            print(json.dumps({"run_id": run_id, "events": await dump_events(db, run_id, out)}))

    asyncio.run(main())
