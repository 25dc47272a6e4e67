"""Numbers that mean what they say: wall-clock starts, ends and durations; the run's speed as a
field of its own, with latency from a sped-up run labelled not comparable; a negative
voice-to-voice shown as a barge-in and never counted as a latency."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena_tui.orchestration.headless import Progress
from arena_tui.compare.leaderboard import run_figures
from arena_tui.compare.stored import StoredRun
from arena_tui.interop import export_run, import_run
from arena_tui.run_view import RunState
from arena_tui import stats
from arena_tui.spine.events import Latencies, RunEnded, RunStarted, TurnEnded, TurnResult
from arena_tui.store import Store
from arena_tui.store.schema import SCHEMA_VERSION, migrate
from arena_tui.widgets.run_header import describe
from arena_tui.widgets.turn_table import columns, row_cells

T0 = datetime(2026, 5, 5, 9, 0, tzinfo=UTC)
AUDIO_MS = 522_000.0  # 8:42 of audio timeline
WALL_S = 28.0  # what it took at speed 20 (the run)


def _result(turn: int, v2v: float | None) -> TurnResult:
    return TurnResult(turn_index=turn, status="ok", user_text="hi", assistant_text="hello",
                      latencies=Latencies(voice_to_voice_ms=v2v, pipeline_ttfb_ms=v2v))


def _stream(run_id: str, *, speed: float | None = 20.0, walls: bool = True, v2vs=(1948.0, -3003.0)) -> list:
    # fields left out, not None, when not given: the shape of a stream recorded before they existed
    extra = ({"speed": speed} if speed is not None else {}) | ({"wall_time": T0} if walls else {})
    start = RunStarted(run_id=run_id, t_ms=0, benchmark="demo_bench", model="sim", provider="sim",
                       turn_indices=list(range(len(v2vs))), config={"speed": speed or 20.0}, **extra)  # fmt: skip
    turns = [TurnEnded(run_id=run_id, t_ms=1000.0 * (i + 1), turn_index=i, result=_result(i, v))
             for i, v in enumerate(v2vs)]
    end = RunEnded(run_id=run_id, t_ms=AUDIO_MS, status="completed",
                   **({"wall_time": T0 + timedelta(seconds=WALL_S)} if walls else {}))
    return [start, *turns, end]


async def _record(db: Path, events: list) -> None:
    async with await Store.open(db) as store:
        for ev in events:
            store.submit(ev)
        await store.flush()


async def test_ended_at_and_duration_are_wall_clock_and_a_replay_keeps_them(tmp_path: Path) -> None:
    events = _stream("r")
    await _record(tmp_path / "a.db", events)
    await _record(tmp_path / "b.db", events)  # the same recorded stream written again, later
    for name in ("a.db", "b.db"):
        async with await Store.open(tmp_path / name) as store:
            run = await store.get_run("r")
        assert run is not None and run.speed == 20.0
        assert run.started_at == T0 and run.ended_at == T0 + timedelta(seconds=WALL_S), name
        assert run.active_s() == WALL_S  # not 522 s of audio


async def test_a_stream_without_wall_times_ends_at_its_audio_time_over_speed(tmp_path: Path) -> None:
    """Streams recorded before the wall stamps (and the fixture's): the run clock is wall x speed."""
    await _record(tmp_path / "old.db", _stream("r", speed=None, walls=False))
    async with await Store.open(tmp_path / "old.db") as store:
        run = await store.get_run("r")
    assert run is not None and run.speed == 20.0  # from the config of the older stream
    assert abs(run.active_s() - AUDIO_MS / 1000 / 20) < 0.01


async def test_an_older_database_opens_with_speed_and_true_ends(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), target=2)
    rows = [  # run_id, config, started, ended (as schema 2 wrote it: started + audio t_ms), reason
        ("fast", '{"speed": 20.0}', "2026-01-01T10:00:00.000+00:00", "2026-01-01T10:08:42.000+00:00", ""),
        ("real", '{"speed": 1}', "2026-01-01T11:00:00.000+00:00", "2026-01-01T11:05:00.000+00:00", ""),
        ("ref", '{}', "2026-01-01T12:00:00.000+00:00", "2026-01-01T12:01:00.000+00:00", ""),
        ("dead", '{"speed": 20.0}', "2026-01-01T13:00:00.000+00:00", "2026-01-01T13:00:30.000+00:00",
         "the recording process ended without finishing the run"),  # ended at its last heartbeat: wall already
    ]
    for run_id, config, started, ended, reason in rows:
        conn.execute("INSERT INTO runs(run_id, config, status, started_at, ended_at, reason) VALUES (?,?,?,?,?,?)",
                     (run_id, config, "completed", started, ended, reason))
    conn.close()
    async with await Store.open(path) as store:
        runs = {r.run_id: r for r in await store.list_runs()}
        assert (await store.info()).schema_version == SCHEMA_VERSION
    assert {k: r.speed for k, r in runs.items()} == {"fast": 20.0, "real": 1.0, "ref": None, "dead": 20.0}
    assert round(runs["fast"].active_s(), 3) == 26.1  # 522 s of audio at 20x
    assert runs["real"].active_s() == 300 and runs["ref"].active_s() == 60 and runs["dead"].active_s() == 30


def test_header_elapsed_is_wall_clock_with_the_audio_time_labelled() -> None:
    state = RunState("r")
    state.apply_all(_stream("r"))
    line = describe(state).plain
    # an ended run's wall clock is what its start and end carry, as the runs list says
    assert f"elapsed 00:{WALL_S:02.0f}" in line and "(audio 08:42)" in line, line
    older = RunState("o")  # recorded before events carried the wall clock: its audio time / speed
    older.apply_all(_stream("o", walls=False))
    assert "elapsed 00:26" in describe(older).plain  # 522 s / 20
    real = RunState("s")
    real.apply_all(_stream("s", speed=1.0, walls=False))
    assert "elapsed 08:42" in describe(real).plain and "audio" not in describe(real).plain


def test_table_and_log_label_sped_up_latency_and_show_a_barge_in() -> None:
    state = RunState("r")
    state.apply_all(_stream("r"))
    dims: list[str] = []
    labels = dict(columns(dims, state.speed))
    assert labels["v2v"] == "v2v ms*" and state.latency_note == "20× — not comparable"
    v2v_at = [k for k, _ in columns(dims, state.speed)].index("v2v")
    assert row_cells(state.turns[0], dims, state.speed)[v2v_at].plain == "1948*"
    assert row_cells(state.turns[1], dims, state.speed)[v2v_at].plain == "barge 3.0s"
    log = [ln.text for ln in state.log]
    assert "turn 0 ended: ok, v2v 1,948 ms (20× — not comparable)" in log
    assert "turn 1 ended: ok, v2v barge-in, 3.0 s overlap" in log
    assert not any("-3003" in t for t in log)


async def test_headless_summary_labels_speed_and_keeps_barge_ins_out_of_the_median() -> None:
    from arena_tui.spine.bus import EventBus

    bus = EventBus()
    out = io.StringIO()
    progress = Progress(3, out)
    sub = bus.subscribe()
    for ev in _stream("r", v2vs=(1948.0, -3003.0, 2100.0)):
        bus.publish(ev)
    bus.close()
    await progress.follow(sub)
    progress.summary(out, source="simulator")
    text = out.getvalue()
    assert "(latency at 20× — not comparable)" in text
    assert "barge-in, 3.0 s overlap" in text and "-3003" not in text
    assert "median v2v 2,024 ms (20× — not comparable)" in text  # of 1948 and 2100, not of -3003


async def test_headless_summary_median_is_the_leaderboards() -> None:
    """The summary took the upper middle value (300 of 100..400) where the leaderboard says 250."""
    from arena_tui.spine.bus import EventBus

    bus = EventBus()
    out = io.StringIO()
    progress = Progress(4, out)
    sub = bus.subscribe()
    for ev in _stream("r", speed=1.0, v2vs=(100.0, 200.0, 300.0, 400.0)):
        bus.publish(ev)
    bus.close()
    await progress.follow(sub)
    progress.summary(out, source="simulator")
    assert "median v2v 250 ms" in out.getvalue()
    values = [100.0, 200.0, 300.0, 400.0]
    assert stats.median(values) == stats.describe(values).p50 == 250.0  # the leaderboard's p50


async def test_export_labels_latency_and_a_barge_in_and_import_keeps_the_times(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    await _record(db, _stream("r"))
    async with await Store.open(db) as store:
        out = await export_run(store, "r", tmp_path / "exp")
    rows = {json.loads(line)["turn"]: json.loads(line) for line in (out / "transcript.jsonl").read_text().splitlines()}
    assert rows[0]["v2v_ms"] == 1948 and rows[0]["latency_note"] == "20× — not comparable"
    assert rows[1]["v2v_ms"] is None and rows[1]["pipeline_ttfb_ms"] is None and rows[1]["barge_in_ms"] == 3003
    runtime = json.loads((out / "runtime.json").read_text())["arena_tui"]
    assert runtime["speed"] == 20.0 and runtime["ended_at"].startswith("2026-05-05T09:00:28")
    async with await Store.open(tmp_path / "y.db") as store:
        rid = await import_run(store, out, run_id="again")
        run = await store.get_run(rid)
    assert run is not None and run.speed == 20.0
    assert run.started_at == T0 and run.active_s() == WALL_S  # the run's own times, not the import's


def test_barge_ins_stay_out_of_latency_figures() -> None:
    from arena_tui.store import RunRow

    row = RunRow(run_id="r", benchmark="b", model="m", provider="p", simulator=False, status="completed",
                 started_at=T0, turns_total=3, turns_done=3, config={}, versions={}, turn_indices=[0, 1, 2],
                 speed=1.0)  # fmt: skip
    results = {i: _result(i, v) for i, v in enumerate((900.0, -3003.0, 1100.0))}
    figures = run_figures(StoredRun(row, results, []))
    assert figures.v2v == [900.0, 1100.0] and figures.pipeline_ttfb == [900.0, 1100.0]


def test_the_cli_and_the_runs_list_show_one_start_time(tmp_path: Path, capsys) -> None:
    """`arena-tui runs` printed local time, the runs list unlabelled UTC: two start times for one
    run. Both show `spine.times.when_text`, labelled, whatever the machine's zone."""
    import asyncio
    import os
    import time

    from arena_tui.app import ArenaApp
    from arena_tui.cli import main
    from arena_tui.screens.runs import RunsScreen
    from arena_tui.spine.times import when_text
    from tests.pilot import until

    db = tmp_path / "x.db"
    asyncio.run(_record(db, _stream("r1")))
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"  # a zone where local and UTC differ (09:00 UTC is 05:00)
    time.tzset()
    try:
        assert main(["--db", str(db), "runs"]) == 0
        printed = capsys.readouterr().out

        async def listed() -> str:
            app = ArenaApp(db)
            async with app.run_test(size=(160, 48)) as pilot:
                await until(pilot, lambda: isinstance(app.screen, RunsScreen) and "r1" in app.screen.rows
                            and app.screen.query_one("#runs").row_count, 30)  # fmt: skip
                return str(app.screen.query_one("#runs").get_cell("r1", "started"))

        shown = asyncio.run(listed())
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        time.tzset()
    assert shown == when_text(T0) == "2026-05-05 09:00 UTC"
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("r1 ")]
    assert f"  {shown}  " in line and "00:28" in line  # the same start, and the wall-clock duration
