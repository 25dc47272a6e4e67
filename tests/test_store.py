"""The SQLite store: every table round-trips, crashes lose nothing committed, readers never lock."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from arena_tui import cli
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import (
    AudioChunk,
    DimensionScore,
    ErrorEvent,
    Interruption,
    Judgement,
    Latencies,
    Level,
    Overlap,
    Interval,
    Reconnected,
    ReplaySummary,
    Retry,
    RunEnded,
    RunStarted,
    SessionOpened,
    SessionRotated,
    SpeechBoundary,
    TokenUsage,
    ToolAnswered,
    ToolCalled,
    ToolCallRecord,
    TranscriptDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from arena_tui.store import REDACTED, Store, StoreError
from arena_tui.store.schema import SCHEMA_VERSION, migrate
from arena_tui.spine.benchmark import Turn

CHILD = Path(__file__).with_name("store_child.py")
RATE = 24000


@pytest.fixture
def grocery_turns(shared_data: Path) -> list[Turn]:
    """Real turns (texts, expected calls, scripted responses) to build realistic events from."""
    lines = (shared_data / "grocery_bench" / "turns.jsonl").read_text().splitlines()
    return [Turn.model_validate_json(line) for line in lines if line.strip()]


def tone(ms: float, freq: float, channels: int = 1) -> bytes:
    t = np.arange(int(RATE * ms / 1000)) / RATE
    mono = (np.sin(2 * np.pi * freq * t) * 8000).astype("<i2")
    return (np.repeat(mono, channels) if channels > 1 else mono).tobytes()


def noise(ms: float, channels: int = 1, seed: int = 0) -> bytes:
    """Full-scale white noise: audio no lossless codec can shrink."""
    n = int(RATE * ms / 1000) * channels
    return np.random.default_rng(seed).integers(-32768, 32768, n, dtype=np.int64).astype("<i2").tobytes()


def run_events(run_id: str, turns: list[Turn]) -> list:
    """A realistic recorded run: every event kind, per-turn audio and two judgement revisions."""
    evs: list = [
        RunStarted(
            run_id=run_id, t_ms=0, benchmark="grocery_bench", model="gpt-realtime", provider="openai",
            simulator=True, turn_indices=[t.turn_index for t in turns],
            config={"speed": 1.0, "vad": {"threshold": 0.7}, "max_tokens": 4096},
        ),
        SessionOpened(run_id=run_id, t_ms=5, session=1, detail="ws://127.0.0.1"),
    ]  # fmt: skip
    t = 100.0
    conv_start = 0.0
    for turn in turns:
        i = turn.turn_index
        evs.append(TurnStarted(run_id=run_id, t_ms=t, turn_index=i, input_text=turn.input, user_audio_ms=400))
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t + 10, turn_index=i, kind="user_speech_started"))
        for k in range(4):
            evs.append(Level(run_id=run_id, t_ms=t + 50 * k, turn_index=i, source="user", rms_dbfs=-20 - k, peak_dbfs=-6))
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t + 400, turn_index=i, kind="user_speech_stopped", origin="vad"))
        records = []
        for n, call in enumerate(turn.expected_calls):
            cid = f"call_{i}_{n}"
            evs.append(ToolCalled(run_id=run_id, t_ms=t + 600, turn_index=i, call_id=cid, name=call.name, args=call.args))
            evs.append(
                ToolAnswered(run_id=run_id, t_ms=t + 610, turn_index=i, call_id=cid, name=call.name, status="matched",
                             response=turn.expected_responses[n])
            )  # fmt: skip
            records.append(
                ToolCallRecord(call_id=cid, name=call.name, args=call.args, status="matched",
                               response=turn.expected_responses[n], expected_index=n, t_ms=t + 600)
            )  # fmt: skip
        for word in turn.golden_text.split()[:5]:
            evs.append(TranscriptDelta(run_id=run_id, t_ms=t + 900, turn_index=i, role="assistant", text=word + " "))
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t + 900, turn_index=i, kind="bot_speech_started"))
        evs.append(Overlap(run_id=run_id, t_ms=t + 950, turn_index=i, start_ms=t + 390, end_ms=t + 400))
        user_pcm, bot_pcm = tone(400, 220 + i), tone(300, 440 + i)
        evs.append(AudioChunk(run_id=run_id, t_ms=t + 1300, turn_index=i, track="user", sample_rate=RATE, pcm=user_pcm))
        evs.append(AudioChunk(run_id=run_id, t_ms=t + 1300, turn_index=i, track="bot", sample_rate=RATE, pcm=bot_pcm))
        evs.append(
            AudioChunk(run_id=run_id, t_ms=t + 1300, turn_index=i, track="conversation", sample_rate=RATE,
                       channels=2, start_ms=conv_start, pcm=tone(t + 1300 - conv_start, 300, channels=2))
        )  # fmt: skip
        conv_start = t + 1300
        result = TurnResult(
            turn_index=i, status="ok", user_text=turn.input, user_transcript=turn.input.lower(),
            assistant_text=turn.golden_text, tool_calls=records,
            latencies=Latencies(voice_to_voice_ms=812.5, pipeline_ttfb_ms=700.0, provider_ttfb_ms=650.0,
                                leading_silence_ms=150.0),
            user_audio=Interval(start_ms=t, end_ms=t + 400), user_speech=[Interval(start_ms=t + 10, end_ms=t + 400)],
            bot_speech=[Interval(start_ms=t + 900, end_ms=t + 1200)], overlap_ms=10.0, session=1,
            tokens={"input": 100 + i, "output": 20},
        )  # fmt: skip
        evs.append(TurnEnded(run_id=run_id, t_ms=t + 1400, turn_index=i, result=result))
        evs.append(
            Judgement(run_id=run_id, t_ms=t + 1500, turn_index=i, judge="openai:gpt-5-mini",
                      scores={d: DimensionScore(verdict="pass", reasoning="fine") for d in turn.dimensions},
                      usage=TokenUsage(input_tokens=1000, cached_input_tokens=800, output_tokens=50))
        )  # fmt: skip
        t += 2000
    first = turns[0].turn_index
    evs += [
        Interruption(run_id=run_id, t_ms=t, turn_index=first, cause="user_barge_in"),
        Retry(run_id=run_id, t_ms=t + 1, turn_index=first, attempt=1, reason="watchdog"),
        Reconnected(run_id=run_id, t_ms=t + 2, session=1, reason="disconnect"),
        SessionRotated(run_id=run_id, t_ms=t + 3, reason="age", from_session=1, to_session=2,
                       replayed=ReplaySummary(strategy="full_history", messages=6, chars=900)),
        ErrorEvent(run_id=run_id, t_ms=t + 4, where="provider", message="transient 503"),
        Judgement(run_id=run_id, t_ms=t + 5, turn_index=first, judge="openai:gpt-5-mini", revision=2, phase=2,
                  rule="early_call_realignment", root_cause="tool call made one turn early",
                  scores={"tool_use_correct": DimensionScore(verdict="fail", reasoning="late")}),
        RunEnded(run_id=run_id, t_ms=t + 6, status="completed"),
    ]  # fmt: skip
    return evs


def without_audio(evs: list) -> list:
    return [e for e in evs if e.kind != "audio"]


async def record(path: Path, evs: list) -> None:
    bus = EventBus()
    async with await Store.open(path) as store:
        task = store.start_recording(bus)
        for e in evs:
            bus.publish(e)
        bus.close()
        await task
        assert store.errors == []


async def test_every_table_round_trips(tmp_path: Path, grocery_turns: list[Turn]) -> None:
    turns = grocery_turns[:4]  # turn 2 expects a tool call
    evs = run_events("r1", turns)
    bus = EventBus()
    async with await Store.open(tmp_path / "arena.db") as store:
        recording = store.start_recording(bus)
        for e in evs:
            bus.publish(e)
        await store.flush()

        [run] = await store.list_runs()
        assert (run.run_id, run.benchmark, run.model, run.provider) == ("r1", "grocery_bench", "gpt-realtime", "openai")
        assert run.simulator and run.status == "completed" and run.ended_at is not None
        # the end is placed on the run's own timeline, not at the moment it was written
        assert run.active_s() == pytest.approx(evs[-1].t_ms / 1000, abs=0.002)
        assert (run.turns_total, run.turns_done) == (4, 4)
        assert run.config == {"speed": 1.0, "vad": {"threshold": 0.7}, "max_tokens": 4096}
        assert run.versions["arena-tui"] and run.versions["pipecat-ai"].startswith("1.14")
        assert await store.get_run("r1") == run
        assert await store.get_run("nope") is None

        assert await store.turn_results("r1") == [e.result for e in evs if e.kind == "turn_ended"]
        got = await store.events("r1")
        assert [e for _, e in got] == without_audio(evs)
        assert [s for s, _ in got] == sorted(s for s, _ in got)
        assert [e async for e in store.replay("r1")] == without_audio(evs)
        assert [e async for e in store.replay("r1", with_audio=True, page=7)] == evs

        tools = await store.events("r1", kinds=["tool_call", "tool_result"])
        assert [e for _, e in tools] == [e for e in evs if e.kind in ("tool_call", "tool_result")]
        assert {e.turn_index for _, e in tools} == {t.turn_index for t in turns if t.expected_calls} == {2}
        turn2 = await store.events("r1", turn_index=2)
        assert [e for _, e in turn2] == [e for e in without_audio(evs) if e.turn_index == 2]
        after = await store.events("r1", after_seq=got[-3][0])
        assert [e for _, e in after] == [e for _, e in got[-2:]]

        audio = {(e.turn_index, e.track): e for e in evs if e.kind == "audio"}
        for i in (0, 3):
            for track in ("user", "bot"):
                clip = await store.audio("r1", i, track)
                assert clip is not None and clip.pcm == audio[(i, track)].pcm
                assert (clip.sample_rate, clip.channels) == (RATE, 1)
        conv = await store.conversation_audio("r1")
        slices = [e for e in evs if e.kind == "audio" and e.track == "conversation"]
        assert conv is not None and conv.channels == 2
        assert conv.pcm == b"".join(e.pcm for e in slices)
        assert await store.audio("r1", 9, "user") is None

        judgements = await store.judgements("r1")
        assert len(judgements) == 5
        assert [j.revision for j in await store.judgements("r1", turn_index=0)] == [1, 2]
        latest = await store.latest_judgements("r1")
        assert latest[0].revision == 2 and latest[0].scores["tool_use_correct"].verdict == "fail"
        assert latest[1].revision == 1
        bus.close()
        await recording

    db = sqlite3.connect(tmp_path / "arena.db")
    # Audio PCM lives only in the audio table; its events row is small.
    sizes = db.execute("SELECT MAX(LENGTH(payload)) FROM events WHERE kind='audio'").fetchone()[0]
    assert sizes < 400
    assert db.execute("SELECT COUNT(*) FROM audio").fetchone()[0] == 12
    row = db.execute("SELECT tool_calls, tool_results, voice_to_voice_ms, attempt FROM turns WHERE turn_index=2").fetchone()
    assert json.loads(row[0])[0]["name"] == "lookup_item" and json.loads(row[1])[0]["response"]["status"] == "success"
    assert row[2:] == (812.5, 0)
    scores = db.execute("SELECT dimension, verdict FROM judgement_scores ORDER BY seq DESC LIMIT 1").fetchall()
    assert scores == [("tool_use_correct", "fail")]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    for sql in ("UPDATE judgements SET revision=9", "UPDATE events SET payload='{}' WHERE seq=1"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute(sql)


async def test_retried_turn_latest_result_and_last_take(tmp_path: Path) -> None:
    def turn(attempt: int, text: str) -> list:
        return [
            TurnStarted(run_id="r", t_ms=attempt * 100, turn_index=0, attempt=attempt),
            AudioChunk(run_id="r", t_ms=attempt * 100 + 1, turn_index=0, track="bot", sample_rate=RATE, pcm=tone(50, 300 + attempt)),
            TurnEnded(run_id="r", t_ms=attempt * 100 + 2, turn_index=0,
                      result=TurnResult(turn_index=0, status="ok", user_text="hi", assistant_text=text)),
        ]  # fmt: skip

    start = RunStarted(run_id="r", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0, 1])
    async with await Store.open(tmp_path / "a.db") as store:
        store.submit(start)
        for e in turn(0, "first"):
            store.submit(e)
        await store.flush()
        for e in turn(1, "second"):  # a later batch: attempts continue from the database
            store.submit(e)
        await store.flush()
        [result] = await store.turn_results("r")
        assert result.assistant_text == "second"
        clip = await store.audio("r", 0, "bot")
        assert clip is not None and clip.pcm == tone(50, 301)
        run = await store.get_run("r")
        assert run is not None and (run.turns_done, run.turns_total, run.status) == (1, 2, "running")
    db = sqlite3.connect(tmp_path / "a.db")
    assert db.execute("SELECT attempt, assistant_text FROM turns ORDER BY attempt").fetchall() == [(0, "first"), (1, "second")]


async def test_conversation_gaps_become_silence(tmp_path: Path) -> None:
    a, b = tone(100, 200, 2), tone(100, 300, 2)
    async with await Store.open(tmp_path / "a.db") as store:
        store.submit(AudioChunk(run_id="r", t_ms=100, track="conversation", sample_rate=RATE, channels=2, start_ms=0, pcm=a))
        store.submit(AudioChunk(run_id="r", t_ms=300, track="conversation", sample_rate=RATE, channels=2, start_ms=150, pcm=b))
        await store.flush()
        conv = await store.conversation_audio("r")
    assert conv is not None
    assert conv.pcm == a + b"\x00" * (RATE * 50 // 1000 * 4) + b
    assert conv.duration_ms == pytest.approx(250)


async def test_orphan_events_and_unserialisable_event_lose_nothing_else(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "a.db") as store:
        good1 = TranscriptDelta(run_id="late", t_ms=1, turn_index=3, role="user", text="a")
        bad = ToolCalled(run_id="late", t_ms=2, turn_index=3, call_id="c", name="f", args={"x": object()})
        good2 = TranscriptDelta(run_id="late", t_ms=3, turn_index=3, role="user", text="b")
        for e in (good1, bad, good2):
            store.submit(e)
        await store.flush()
        assert [e for _, e in await store.events("late")] == [good1, good2]
        assert len(store.errors) == 1
        assert "run late" in store.errors[0] and "tool_call" in store.errors[0] and "turn 3" in store.errors[0]
        run = await store.get_run("late")  # a run row exists for events whose run_started never came
        assert run is not None and run.status == "running"


async def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    secret = "sk-proj-" + "A1b2C3d4" * 6
    aws = "AKIA" + "Q" * 16
    evs = [
        RunStarted(
            run_id="s", t_ms=0, benchmark="b", model="m", provider="openai", turn_indices=[0],
            config={"api_key": "hunter2-plain", "openai": {"Access_Token": "tok-123456", "base_url": "http://127.0.0.1"},
                    "headers": {"Authorization": f"Bearer {secret}"}, "note": f"key is {secret}",
                    "aws": {"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG", "id": aws}, "max_tokens": 4096,
                    "db_password": "pw-xyz"},
        ),
        ErrorEvent(run_id="s", t_ms=1, where="provider", message=f"Incorrect API key provided: {secret}"),
        RunEnded(run_id="s", t_ms=2, status="failed", reason=f"auth failed for {aws}"),
    ]  # fmt: skip
    await record(tmp_path / "a.db", evs)
    async with await Store.open(tmp_path / "a.db") as store:
        run = await store.get_run("s")
        assert run is not None
        cfg = run.config
        assert cfg["api_key"] == REDACTED and cfg["openai"]["Access_Token"] == REDACTED
        assert cfg["openai"]["base_url"] == "http://127.0.0.1" and cfg["max_tokens"] == 4096
        assert cfg["aws"]["aws_secret_access_key"] == REDACTED and cfg["aws"]["id"] == REDACTED
        assert cfg["note"] == f"key is {REDACTED}" and cfg["db_password"] == REDACTED
        [(_, err)] = await store.events("s", kinds=["error"])
        assert err.message == f"Incorrect API key provided: {REDACTED}"
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for s in (secret, aws, "hunter2-plain", "tok-123456", "wJalrXUtnFEMI", "pw-xyz"):
        assert s.encode() not in raw, s


async def test_delete_run_cascades(tmp_path: Path, grocery_turns: list[Turn]) -> None:
    await record(tmp_path / "a.db", run_events("gone", grocery_turns[:3]) + run_events("kept", grocery_turns[:2]))
    async with await Store.open(tmp_path / "a.db") as store:
        assert await store.delete_run("gone") is True
        assert await store.delete_run("gone") is False
        assert [r.run_id for r in await store.list_runs()] == ["kept"]
        assert await store.events("gone") == [] and await store.conversation_audio("gone") is None
        assert len(await store.turn_results("kept")) == 2
    db = sqlite3.connect(tmp_path / "a.db")
    for table in ("events", "turns", "judgements", "judgement_scores", "audio"):
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id='gone'").fetchone()[0] == 0, table
        assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id='kept'").fetchone()[0] > 0, table
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def _v1_database(path: Path) -> None:
    """A database as the first schema version left it, holding a finished run."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), target=1)
    conn.execute(
        "INSERT INTO runs(run_id, benchmark, model, provider, turn_indices, turns_total, status, started_at, ended_at)"
        " VALUES ('old', 'grocery_bench', 'm', 'p', '[0]', 1, 'completed', '2026-01-01T10:00:00+00:00',"
        " '2026-01-01T10:05:00+00:00')"
    )
    ended = TurnEnded(run_id="old", t_ms=10, turn_index=0, result=TurnResult(turn_index=0, status="ok", user_text="hi"))
    conn.execute(
        "INSERT INTO events VALUES ('old', 1, 'turn_ended', 10, 0, ?)", (ended.model_dump_json(),)
    )
    conn.execute(
        "INSERT INTO turns(run_id, turn_index, attempt, seq, status, session, user_text, assistant_text, tool_calls,"
        " tool_results, overlap_ms, interrupted, retries, reconnects) VALUES ('old', 0, 0, 1, 'ok', 1, 'hi', '', '[]',"
        " '[]', 0, 0, 0, 0)"
    )
    conn.close()


async def test_migrations_keep_data(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    sqlite3.connect(fresh).close()  # an empty file: version 0
    async with await Store.open(fresh) as store:
        assert (await store.info()).schema_version == SCHEMA_VERSION

    path = tmp_path / "old.db"
    _v1_database(path)
    async with await Store.open(path) as store:
        [run] = await store.list_runs()
        assert (run.run_id, run.status, run.turns_done, run.pid) == ("old", "completed", 1, None)
        assert [r.user_text for r in await store.turn_results("old")] == ["hi"]
        store.submit(TranscriptDelta(run_id="old", t_ms=20, turn_index=0, role="user", text="again"))
        await store.flush()
        assert [s for s, _ in await store.events("old")] == [1, 2]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_failed_migration_rolls_back_and_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "edited.db"
    _v1_database(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("ALTER TABLE runs ADD COLUMN pid INTEGER")  # hand-edited: migration 2 will collide
    conn.close()
    with pytest.raises(StoreError, match=r"edited\.db: migration to schema version 2 failed.*duplicate column"):
        await Store.open(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT run_id FROM runs").fetchall() == [("old",)]
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name='events_by_kind'").fetchone()[0] == 0
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        await Store.open(path)


async def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("just text, not sqlite\n" * 100)
    with pytest.raises(StoreError, match=r"notes\.db: not an arena-tui database"):
        await Store.open(tmp_path / "notes.db")
    with pytest.raises(StoreError, match="is a directory"):
        await Store.open(tmp_path)


def _committed(proc: subprocess.Popen[str], at_least: int) -> int:
    last = 0
    for _ in range(at_least):
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("committed "), (line, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
        last = int(line.split()[1])
    return last


def test_kill_9_mid_batch_keeps_every_committed_event(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    rng = random.Random(7)
    reported = {}
    for attempt in range(4):
        run_id = f"crash{attempt}"
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(path), run_id, "--batch", "300"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            _committed(proc, 3)
            # keep reading reports while the child writes, then kill it somewhere inside a batch
            reported[run_id] = _committed(proc, rng.randint(1, 4))
            time.sleep(rng.uniform(0, 0.02))  # land anywhere in the ~5 ms write cycle
            proc.kill()  # SIGKILL
        finally:
            proc.kill()
            proc.wait()
        assert proc.returncode == -9
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("committed "):  # printed before the kill landed: committed too
                reported[run_id] = int(line.split()[1])

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    for run_id, n in reported.items():
        levels = {int(t) for (t,) in db.execute("SELECT t_ms FROM events WHERE run_id=? AND kind='level'", (run_id,))}
        assert set(range(n)) <= levels, run_id
        # the child publishes 300 levels + 1 audio chunk per flush, which the writer commits as one
        # transaction: whatever moment the kill came, the file holds whole batches only
        audio_rows = db.execute("SELECT COUNT(*) FROM audio WHERE run_id=?", (run_id,)).fetchone()[0]
        assert len(levels) % 300 == 0 and audio_rows == len(levels) // 300, (run_id, len(levels), audio_rows)
        seqs = [s for (s,) in db.execute("SELECT seq FROM events WHERE run_id=? ORDER BY seq", (run_id,))]
        assert seqs == list(range(1, len(seqs) + 1))  # no hole: batches are all-or-nothing
        orphans = db.execute(
            "SELECT COUNT(*) FROM audio a LEFT JOIN events e ON e.run_id=a.run_id AND e.seq=a.seq"
            " WHERE a.run_id=? AND e.seq IS NULL",
            (run_id,),
        ).fetchone()[0]
        assert orphans == 0
        pcm_missing = db.execute(
            "SELECT COUNT(*) FROM events e LEFT JOIN audio a ON a.run_id=e.run_id AND a.seq=e.seq"
            " WHERE e.run_id=? AND e.kind='audio' AND a.seq IS NULL",
            (run_id,),
        ).fetchone()[0]
        assert pcm_missing == 0  # an audio event and its PCM are committed together or not at all
    db.close()

    async def reopen() -> None:
        async with await Store.open(path) as store:
            assert {r.status for r in await store.list_runs()} == {"running"}
            assert sorted(await store.mark_interrupted_stale()) == sorted(reported)
            assert await store.mark_interrupted_stale() == []
            for run in await store.list_runs():
                assert run.status == "interrupted" and run.ended_at is not None
                events = [e async for e in store.replay(run.run_id)]
                assert events[0].kind == "run_started"
                assert events[-1].kind == "run_ended" and events[-1].status == "interrupted"

    asyncio.run(reopen())


async def test_stale_runs_by_heartbeat_and_live_runs_untouched(tmp_path: Path) -> None:
    def started(rid: str) -> RunStarted:
        return RunStarted(run_id=rid, t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0])

    await record(tmp_path / "a.db", [started("far_dead"), started("far_alive")])
    db = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    # recorded on another machine: only the heartbeat can tell
    db.execute("UPDATE runs SET host='elsewhere', heartbeat_at='2026-01-01T00:00:00+00:00' WHERE run_id='far_dead'")
    db.execute("UPDATE runs SET host='elsewhere' WHERE run_id='far_alive'")
    db.close()
    async with await Store.open(tmp_path / "a.db") as store:
        store.submit(started("live"))
        await store.flush()
        assert await store.mark_interrupted_stale() == ["far_dead"]
        statuses = {r.run_id: r.status for r in await store.list_runs()}
        assert statuses == {"live": "running", "far_dead": "interrupted", "far_alive": "running"}


async def test_reader_polls_while_writer_writes_thousands(tmp_path: Path) -> None:
    total = 6000
    bus = EventBus()
    async with await Store.open(tmp_path / "a.db") as store:
        recording = store.start_recording(bus)
        writing = True
        seen: list[int] = []
        polls = 0

        async def reader() -> None:
            nonlocal polls
            last = 0
            while writing or last < total:
                runs = await store.list_runs()
                new = await store.events("r", kinds=["level"], after_seq=seen[-1] if seen else 0)
                for seq, _ in new:
                    assert not seen or seq > seen[-1]
                    seen.append(seq)
                assert len(seen) >= last  # never goes backwards
                last = len(seen)
                polls += 1
                if runs:
                    assert runs[0].run_id == "r"
                await asyncio.sleep(0)

        reading = asyncio.create_task(reader())
        bus.publish(RunStarted(run_id="r", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0]))
        for i in range(total):
            bus.publish(Level(run_id="r", t_ms=i, turn_index=0, source="user", rms_dbfs=-30, peak_dbfs=-10))
            if i % 100 == 99:
                await asyncio.sleep(0.002)
        bus.close()
        await recording
        writing = False
        await asyncio.wait_for(reading, 60)
        assert len(seen) == total and polls > 1
        assert store.errors == [] and store.batches_written > 1


async def test_reader_in_this_process_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with await Store.open(path) as store:  # schema exists before the child starts
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), str(path), "ext", "--events", "5000", "--batch", "100",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        counts = [0]
        while proc.returncode is None:
            rows = await store.events("ext", kinds=["level"], after_seq=0)
            assert len(rows) >= counts[-1]
            counts.append(len(rows))
            await store.list_runs()
            try:
                await asyncio.wait_for(proc.wait(), 0.02)
            except TimeoutError:
                pass
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        assert len(await store.events("ext", kinds=["level"])) == 5000
        [run] = await store.list_runs()
        assert run.status == "completed"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_runs_and_db_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str], grocery_turns: list[Turn]) -> None:
    db = str(tmp_path / "cli.db")
    big = run_events("big", grocery_turns[:2])
    big.insert(1, AudioChunk(run_id="big", t_ms=1, turn_index=0, track="user", sample_rate=RATE, pcm=noise(20000)))
    asyncio.run(record(Path(db), run_events("r-cli", grocery_turns[:3])[:-1] + big))

    code, out, _ = _cli(capsys, "--db", db, "runs")
    assert code == 0
    lines = out.splitlines()
    # the cost columns: its judge (openai:gpt-5-mini) was sent requests; what they are, under the table
    assert lines[0].split() == ["ID", "BENCHMARK", "MODEL", "STATUS", "PROGRESS", "STRICT", "PASS", "STARTED",
                                "DURATION", "COUNTED", "APART", "COST", "JUDGE", "COST"]
    assert lines[-1].startswith("cost: estimate, prices of ")
    row = next(line for line in lines if line.startswith("r-cli"))
    # no usage of the model's recorded; the judge's 3 requests of 1000 tokens in (800 cached), 50 out, at gpt-5-mini's
    # $0.25 / $0.025 / $2 per million: 3 × $0.00017
    assert row.rstrip().endswith("-     $0.0005 (est.)"), row
    # run_ended never came and this test process is alive, so it is still running
    assert "grocery_bench" in row and "gpt-realtime [simulator]" in row and "running" in row and "3/3" in row

    code, out, _ = _cli(capsys, "--db", db, "runs", "--json", "--status", "completed")
    data = json.loads(out)
    assert [r["run_id"] for r in data] == ["big"] and data[0]["turns_done"] == 2

    code, out, _ = _cli(capsys, "--db", db, "db", "path")
    assert out.strip() == db
    code, out, _ = _cli(capsys, "--db", db, "db", "info", "--json")
    info = json.loads(out)
    assert info["counts"]["runs"] == 2 and info["audio_bytes"] > 960_000

    code, _, err = _cli(capsys, "--db", db, "runs", "--delete", "nope")
    assert code == 2 and "no run nope" in err
    code, _, err = _cli(capsys, "--db", db, "runs", "--delete", "r-cli")
    assert code == 2 and "still recording" in err
    code, out, _ = _cli(capsys, "--db", db, "runs", "--delete", "big")
    assert code == 0 and "deleted 1 run(s): big" in out
    code, out, _ = _cli(capsys, "--db", db, "db", "vacuum")
    before, after = [float(x) for x in out.replace("MB", "").split(":")[-1].split("->")]
    assert code == 0 and after < before - 0.9

    (tmp_path / "junk.db").write_bytes(os.urandom(8192))
    code, out, err = _cli(capsys, "--db", str(tmp_path / "junk.db"), "runs")
    assert code == 2 and "junk.db" in err and "Traceback" not in err


async def test_store_refuses_use_after_close(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "a.db")
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        store.submit(Level(run_id="r", t_ms=0, source="bot", rms_dbfs=-1, peak_dbfs=-1))
    with pytest.raises(StoreError, match="closed"):
        await store.list_runs()


async def test_close_records_what_the_bus_still_holds(tmp_path: Path) -> None:
    bus = EventBus()
    store = await Store.open(tmp_path / "a.db")
    recording = store.start_recording(bus)
    evs = [Level(run_id="r", t_ms=i, source="user", rms_dbfs=-20, peak_dbfs=-3) for i in range(500)]
    for e in evs:
        bus.publish(e)
    await store.close()  # the bus is still open: close() must not drop its queued events
    await recording  # ends normally, not cancelled
    async with await Store.open(tmp_path / "a.db") as again:
        assert [e for _, e in await again.events("r")] == evs


async def test_busy_database_is_waited_out_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    async with await Store.open(path, busy_timeout_ms=50) as store:
        store.submit(RunStarted(run_id="r", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0]))
        await store.flush()
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock (e.g. a vacuum)
        evs = [Level(run_id="r", t_ms=i, source="bot", rms_dbfs=-9, peak_dbfs=-3) for i in range(50)]
        for e in evs:
            store.submit(e)
        flushing = asyncio.create_task(store.flush())
        await asyncio.sleep(0.3)  # the writer has hit busy_timeout at least once by now
        assert not flushing.done()
        assert await store.events("r", kinds=["level"]) == []  # readers are not blocked by the lock
        other.execute("COMMIT")
        other.close()
        await asyncio.wait_for(flushing, 30)
        assert [e for _, e in await store.events("r", kinds=["level"])] == evs
        assert store.errors == []
