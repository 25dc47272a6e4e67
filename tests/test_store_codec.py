"""Audio kept as FLAC: read back as the exact PCM16 recorded, per track, from new and old files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from arena_tui.spine.events import AudioChunk, RunEnded, RunStarted, TurnStarted
from arena_tui.store import Store, StoreError
from arena_tui.store.codec import decode, encode
from arena_tui.store.schema import SCHEMA_VERSION, migrate

RATE = 24000


def speech(frames: int, channels: int = 1, seed: int = 0) -> bytes:
    """A voice-like signal: a few harmonics with a slow envelope, plus a little noise."""
    t = np.arange(frames) / RATE
    env = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)
    x = env * sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((180, 360, 720, 1440), 1)) * 6000
    rng = np.random.default_rng(seed)
    chans = [x + rng.normal(0, 200, frames) * (c + 1) for c in range(channels)]
    return np.stack(chans, axis=1).round().clip(-32768, 32767).astype("<i2").tobytes()


def silence(frames: int, channels: int = 1) -> bytes:
    return bytes(2 * channels * frames)


# (turn, track, pcm): what a run records, with every awkward length
PER_TURN = [
    (0, "user", speech(24_001)),  # an odd number of samples
    (0, "bot", speech(48_000, seed=1)),
    (1, "user", silence(36_000)),  # a turn of silence
    (1, "bot", speech(1001, seed=2) + b"\x01"),  # an odd number of bytes: no whole last sample
    (2, "user", speech(7)),  # shorter than FLAC's header
    (2, "bot", b""),  # nothing heard
]
CONVERSATION = [
    speech(24_000, 2, seed=3),
    silence(12_001, 2),  # odd frame count, stereo
    speech(48_001, 2, seed=4),
    speech(100, 2, seed=5) + b"\x02\x00",  # half a stereo frame at the very end of the run
]


def recorded_run(run_id: str) -> list:
    evs: list = [RunStarted(run_id=run_id, t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0, 1, 2])]
    for turn, track, pcm in PER_TURN:
        if track == "user":
            evs.append(TurnStarted(run_id=run_id, t_ms=turn * 1000.0, turn_index=turn))
        evs.append(AudioChunk(run_id=run_id, t_ms=turn * 1000.0 + 500, turn_index=turn, track=track,
                              sample_rate=RATE, pcm=pcm))  # fmt: skip
    frames = 0
    for pcm in CONVERSATION:  # contiguous slices: each starts where the last ended
        evs.append(AudioChunk(run_id=run_id, t_ms=3000, track="conversation", sample_rate=RATE, channels=2,
                              start_ms=frames * 1000 / RATE, pcm=pcm))  # fmt: skip
        frames += len(pcm) // 4
    evs.append(RunEnded(run_id=run_id, t_ms=4000, status="completed"))
    return evs


@pytest.mark.parametrize("channels", [1, 2])
def test_codec_round_trip_is_byte_exact(channels: int) -> None:
    for pcm in (speech(24_001, channels), silence(5000, channels), speech(3, channels)):
        kind, data = encode(pcm, RATE, channels)
        assert decode(kind, data, channels) == pcm
    kind, data = encode(speech(24_000, channels), RATE, channels)
    assert kind == "flac" and len(data) < len(speech(24_000, channels)) * 0.7
    odd = speech(100, channels) + b"\x05"
    assert encode(odd, RATE, channels) == ("pcm16", odd)  # FLAC cannot hold a stray byte: kept raw


async def test_every_track_reads_back_the_exact_pcm(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    async with await Store.open(path) as store:
        for ev in recorded_run("r"):
            store.submit(ev)
        await store.flush()
        for turn, track, pcm in PER_TURN:
            clip = await store.audio("r", turn, track)
            assert clip is not None and clip.pcm == pcm, (turn, track)
            assert (clip.sample_rate, clip.channels) == (RATE, 1)
        conv = await store.conversation_audio("r")
        assert conv is not None and conv.channels == 2 and conv.pcm == b"".join(CONVERSATION)
        # the event stream (what replay and the exports read) carries the same bytes
        stored = [ev.pcm for _, ev in await store.events("r", kinds=["audio"])]
        assert stored == [pcm for _, _, pcm in PER_TURN] + CONVERSATION
        replayed = [ev.pcm async for ev in store.replay("r", with_audio=True) if ev.kind == "audio"]
        assert replayed == stored
        info = await store.info()
    total = sum(len(p) for _, _, p in PER_TURN) + sum(len(p) for p in CONVERSATION)
    assert info.audio_bytes == total and info.audio_stored_bytes < total * 0.6

    db = sqlite3.connect(path)
    rows = db.execute("SELECT track, turn_index, codec, LENGTH(data), pcm_bytes FROM audio ORDER BY seq").fetchall()
    codecs = [r[2] for r in rows]
    assert codecs == ["flac", "flac", "flac", "pcm16", "pcm16", "pcm16", "flac", "flac", "flac", "pcm16"]
    silent = rows[2]
    assert silent[4] == len(PER_TURN[2][2]) and silent[3] < silent[4] / 50  # silence costs almost nothing


def _v2_database(path: Path, pcm: bytes, conv: bytes) -> None:
    """A database as schema version 2 left it: audio rows hold raw PCM16 in `pcm`."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, str(path), target=2)
    started = RunStarted(run_id="old", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0])
    conn.execute(
        "INSERT INTO runs(run_id, benchmark, model, provider, turn_indices, turns_total, status, started_at)"
        " VALUES ('old', 'b', 'm', 'p', '[0]', 1, 'running', '2026-01-01T10:00:00+00:00')"
    )
    conn.execute("INSERT INTO events VALUES ('old', 1, 'run_started', 0, NULL, ?)", (started.model_dump_json(),))
    for seq, (track, turn, channels, data) in enumerate([("user", 0, 1, pcm), ("conversation", None, 2, conv)], 2):
        ev = AudioChunk(run_id="old", t_ms=10, turn_index=turn, track=track, sample_rate=RATE, channels=channels, pcm=b"")
        conn.execute("INSERT INTO events VALUES ('old', ?, 'audio', 10, ?, ?)",
                     (seq, turn, ev.model_dump_json(exclude={"pcm"})))  # fmt: skip
        conn.execute(
            "INSERT INTO audio(run_id, seq, turn_index, take, track, start_ms, sample_rate, channels, pcm)"
            " VALUES ('old', ?, ?, 0, ?, 0, ?, ?, ?)",
            (seq, turn, track, RATE, channels, data),
        )
    conn.close()


async def test_raw_pcm_rows_of_an_older_file_still_read(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    pcm, conv, more = speech(24_001), speech(12_000, 2), speech(6000, 2, seed=9)
    _v2_database(path, pcm, conv)
    async with await Store.open(path) as store:
        assert (await store.info()).schema_version == SCHEMA_VERSION
        assert (await store.audio("old", 0, "user")).pcm == pcm
        assert (await store.conversation_audio("old")).pcm == conv
        # the run goes on in the migrated file: new slices are FLAC, the track still joins exactly
        store.submit(AudioChunk(run_id="old", t_ms=600, track="conversation", sample_rate=RATE, channels=2,
                                start_ms=500, pcm=more))  # fmt: skip
        await store.flush()
        assert (await store.conversation_audio("old")).pcm == conv + more
        info = await store.info()
        assert info.audio_bytes == len(pcm) + len(conv) + len(more)
        assert await store.stored_benchmark("old") is None  # recorded before snapshots
    db = sqlite3.connect(path)
    assert db.execute("SELECT seq, codec, pcm_bytes FROM audio ORDER BY seq").fetchall() == [
        (2, "pcm16", None), (3, "pcm16", None), (4, "flac", len(more)),
    ]  # fmt: skip
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_a_damaged_flac_row_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    async with await Store.open(path) as store:
        for ev in recorded_run("r"):
            store.submit(ev)
        await store.flush()
    db = sqlite3.connect(path)
    (seq, data) = db.execute("SELECT seq, data FROM audio WHERE track='bot' AND turn_index=0").fetchone()
    db.execute("UPDATE audio SET data=? WHERE seq=?", (b"fLaC" + bytes(40), seq))
    (seq2, data2) = db.execute("SELECT seq, data FROM audio WHERE track='user' AND turn_index=0").fetchone()
    db.execute("UPDATE audio SET data=? WHERE seq=?", (data2[: len(data2) // 2], seq2))  # cut short
    db.commit()
    db.close()
    async with await Store.open(path) as store:
        with pytest.raises(StoreError, match=rf"runs\.db: run r audio event {seq} cannot be read"):
            await store.audio("r", 0, "bot")
        with pytest.raises(StoreError, match=rf"run r audio event {seq2} cannot be read"):
            await store.audio("r", 0, "user")
        assert (await store.audio("r", 1, "user")).pcm == PER_TURN[2][2]  # the rest still reads
