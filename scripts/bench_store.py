"""Measure the run store: how many events/s its writer sustains, and database size per minute of audio.

    .venv/bin/python -m scripts.bench_store [--minutes 10] [--keep DIR] [--data DIR] [--turns 0-5] [--speed 20]

A synthetic run with a live run's mix per second of conversation: levels at 20/s for each of
user and bot, transcript deltas, speech boundaries, and per 10 s turn a turn_started, a tool
call and result, a turn_ended and a judgement. Phase 1 publishes it as fast as possible (no
audio) and reports the writer's sustained rate and the headroom over real time. Phase 2 records
the same run with audio at 24 kHz (per-turn user and bot mono PCM16, the stereo conversation
track in per-turn slices; speech-level noise, the hardest case for the compression) and
reports the file size per minute. Phase 3 times reader polls
while the writer is busy. Phase 4 records a real simulator run of conversation_bench (the
benchmark's recorded user audio, the simulator's bot speech) and reports MB per minute of
conversation as stored (FLAC) and as the same rows would take as raw PCM16 (the layout before
schema 3), with the time the writer spent compressing. Numbers only: nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import statistics
import tempfile
import time
from functools import cache
from pathlib import Path

import numpy as np

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import (
    AudioChunk,
    DimensionScore,
    Judgement,
    Latencies,
    Level,
    RunEnded,
    RunStarted,
    SpeechBoundary,
    ToolAnswered,
    ToolCalled,
    ToolCallRecord,
    TranscriptDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from arena_tui.store import Store
from arena_tui.store.codec import decode, encode
from scripts import shared_data

RATE = 24000
TURN_S = 10  # one turn every 10 s: ~4 s user, ~5 s bot
USER_S, BOT_S = 4, 5


@cache
def signal(seconds: float, channels: int = 1) -> bytes:
    """Noise at a speech-like level (not silence, which compresses to nothing): the writer's
    compression does its full work on it."""
    n = int(RATE * seconds) * channels
    return np.random.default_rng(n).normal(0, 1500, n).clip(-32768, 32767).astype("<i2").tobytes()


def second_of_run(run_id: str, sec: int, audio: bool) -> list:
    """All events of one second of a run (plus the turn's events at turn boundaries)."""
    turn, pos = divmod(sec, TURN_S)
    t0 = sec * 1000.0
    evs: list = []
    if pos == 0:
        evs.append(TurnStarted(run_id=run_id, t_ms=t0, turn_index=turn, input_text="I need flour for baking."))
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t0 + 5, turn_index=turn, kind="user_speech_started"))
    for k in range(20):
        t = t0 + 50 * k
        evs.append(Level(run_id=run_id, t_ms=t, turn_index=turn, source="user", rms_dbfs=-24.0, peak_dbfs=-8.0))
        evs.append(Level(run_id=run_id, t_ms=t, turn_index=turn, source="bot", rms_dbfs=-60.0, peak_dbfs=-50.0))
    if USER_S <= pos < USER_S + BOT_S:
        for k in range(8):  # ~8 transcript deltas per second of bot speech
            evs.append(TranscriptDelta(run_id=run_id, t_ms=t0 + 125 * k, turn_index=turn, role="assistant", text="word "))
    if pos == USER_S:
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t0, turn_index=turn, kind="user_speech_stopped", origin="vad"))
        args = {"query": "flour"}
        evs.append(ToolCalled(run_id=run_id, t_ms=t0 + 300, turn_index=turn, call_id=f"c{turn}", name="lookup_item", args=args))
        evs.append(
            ToolAnswered(run_id=run_id, t_ms=t0 + 310, turn_index=turn, call_id=f"c{turn}", name="lookup_item",
                         status="matched", response={"status": "success", "results": [{"item_id": "1010"}]})
        )  # fmt: skip
        evs.append(SpeechBoundary(run_id=run_id, t_ms=t0 + 900, turn_index=turn, kind="bot_speech_started"))
    if pos == TURN_S - 1:
        end = t0 + 1000
        if audio:
            evs.append(AudioChunk(run_id=run_id, t_ms=end, turn_index=turn, track="user", sample_rate=RATE,
                                  pcm=signal(USER_S)))  # fmt: skip
            evs.append(AudioChunk(run_id=run_id, t_ms=end, turn_index=turn, track="bot", sample_rate=RATE,
                                  pcm=signal(BOT_S)))  # fmt: skip
            evs.append(AudioChunk(run_id=run_id, t_ms=end, turn_index=turn, track="conversation", sample_rate=RATE,
                                  channels=2, start_ms=end - TURN_S * 1000, pcm=signal(TURN_S, 2)))  # fmt: skip
        result = TurnResult(
            turn_index=turn, status="ok", user_text="I need flour for baking.",
            assistant_text="All-Purpose Flour, five-pound bag for six ninety-nine. Added to your order.",
            tool_calls=[ToolCallRecord(call_id=f"c{turn}", name="lookup_item", args={"query": "flour"}, status="matched")],
            latencies=Latencies(voice_to_voice_ms=900.0, pipeline_ttfb_ms=800.0), session=1,
        )  # fmt: skip
        evs.append(TurnEnded(run_id=run_id, t_ms=end, turn_index=turn, result=result))
        evs.append(
            Judgement(run_id=run_id, t_ms=end + 1, turn_index=turn, judge="heuristic", heuristic=True,
                      scores={d: DimensionScore(verdict="pass") for d in ("kb_grounding", "instruction_following")})
        )  # fmt: skip
    return evs


def run_of(run_id: str, minutes: float, audio: bool) -> list[list]:
    seconds = int(minutes * 60)
    start = RunStarted(run_id=run_id, t_ms=0, benchmark="grocery_bench", model="bench", provider="bench",
                       turn_indices=list(range(seconds // TURN_S)))  # fmt: skip
    per_second = [second_of_run(run_id, s, audio) for s in range(seconds)]
    per_second[0].insert(0, start)
    per_second[-1].append(RunEnded(run_id=run_id, t_ms=seconds * 1000.0, status="completed"))
    return per_second


async def throughput(path: Path, minutes: float) -> None:
    seconds = run_of("fast", minutes, audio=False)
    n = sum(len(s) for s in seconds)
    bus = EventBus()
    async with await Store.open(path) as store:
        recording = store.start_recording(bus)
        t0 = time.perf_counter()
        for sec in seconds:  # publish one second of run at a time, yielding so the writer interleaves
            for e in sec:
                bus.publish(e)
            await asyncio.sleep(0)
        await store.flush()
        dt = time.perf_counter() - t0
        bus.close()
        await recording
        batches = store.batches_written
    realtime = n / (minutes * 60)
    print(f"writer, no audio: {n} events in {dt:.2f} s = {n / dt:,.0f} events/s "
          f"in {batches} transactions ({n / batches:.0f} events/batch)")  # fmt: skip
    print(f"  live mix is {realtime:.1f} events/s -> headroom x{n / dt / realtime:,.0f} over real time")


async def audio_size(path: Path, minutes: float) -> None:
    seconds = run_of("audio", minutes, audio=True)
    n = sum(len(s) for s in seconds)
    before = path.stat().st_size if path.exists() else 0
    bus = EventBus()
    async with await Store.open(path) as store:
        recording = store.start_recording(bus)
        t0 = time.perf_counter()
        for sec in seconds:
            for e in sec:
                bus.publish(e)
            await asyncio.sleep(0)
        await store.flush()
        dt = time.perf_counter() - t0
        bus.close()
        await recording
        await store.vacuum()  # checkpoint the WAL into the file so its size is the data's
    grown = path.stat().st_size - before
    stereo_per_min = 60 * RATE * 4
    mono_per_min = 60 * RATE * 2 * (USER_S + BOT_S) / TURN_S
    print(f"writer, with audio: {n} events ({minutes:g} min) in {dt:.2f} s = {n / dt:,.0f} events/s, "
          f"{grown / 1e6 / dt:.1f} MB/s")  # fmt: skip
    print(f"  database growth {grown / 1e6 / minutes:.2f} MB per minute of conversation "
          f"(PCM alone {(stereo_per_min + mono_per_min) / 1e6:.2f} MB/min: stereo track {stereo_per_min / 1e6:.2f}"
          f" + per-turn mono {mono_per_min / 1e6:.2f}) -> {grown / 1e6 / minutes * 60:.0f} MB per hour")  # fmt: skip


async def loop_stall(path: Path, minutes: float) -> None:
    """The writer shares the event loop with the engine's 20 ms pacing: how long can it hold it?"""
    seconds = run_of("paced", minutes, audio=True)
    bus = EventBus()
    gaps: list[float] = []
    async with await Store.open(path) as store:
        recording = store.start_recording(bus)
        done = False

        async def ticker() -> None:
            last = time.perf_counter()
            while not done:
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append((now - last) * 1000 - 5)
                last = now

        task = asyncio.create_task(ticker())
        for sec in seconds:  # 1 s of run every 50 ms: 20x real time
            for e in sec:
                bus.publish(e)
            await asyncio.sleep(0.05)
        await store.flush()
        done = True
        await task
        bus.close()
        await recording
    print(f"event-loop lateness of a 5 ms ticker while recording at 20x real time with audio: "
          f"median {statistics.median(gaps):.2f} ms, p99 {statistics.quantiles(gaps, n=100)[98]:.2f} ms, "
          f"max {max(gaps):.1f} ms")  # fmt: skip


async def reader_latency(path: Path, minutes: float) -> None:
    seconds = run_of("mixed", minutes, audio=True)
    bus = EventBus()
    polls: list[float] = []
    async with await Store.open(path) as store:
        recording = store.start_recording(bus)
        done = False

        async def reader() -> None:
            after = 0
            while not done:
                t = time.perf_counter()
                await store.list_runs()
                rows = await store.events("mixed", after_seq=after)
                if rows:
                    after = rows[-1][0]
                polls.append((time.perf_counter() - t) * 1000)
                await asyncio.sleep(1 / 30)  # a UI refreshing at 30 Hz

        task = asyncio.create_task(reader())
        for sec in seconds:  # the run at 60x real time, so a poll often meets a batch being written
            for e in sec:
                bus.publish(e)
            await asyncio.sleep(1 / 60)
        await store.flush()
        done = True
        await task
        bus.close()
        await recording
    q = statistics.quantiles(polls, n=20)
    print(f"reader poll (list_runs + new events, run written at 60x real time with audio): {len(polls)} polls, "
          f"median {statistics.median(polls):.1f} ms, p95 {q[18]:.1f} ms, max {max(polls):.1f} ms, no lock errors")  # fmt: skip


async def sim_run_size(path: Path, data: Path, turns: str, speed: float) -> None:
    """A simulator run of conversation_bench: database MB per minute of conversation, as stored
    and with the same audio rows as raw PCM16."""
    from loguru import logger

    from benchmarks.registry import load_benchmark
    from arena_tui.spine.settings import RunSettings, parse_turns
    from runners.engine import run_benchmark

    logger.remove()  # Pipecat's debug log
    bench = load_benchmark("conversation_bench", data)
    bus = EventBus()
    t0 = time.perf_counter()
    async with await Store.open(path) as store:
        recording = store.start_recording(bus)
        run_id = await run_benchmark(bench, RunSettings(model="sim", speed=speed, turns=parse_turns(turns)), bus)
        await store.flush()
        bus.close()
        await recording
        wall = time.perf_counter() - t0
        conv = await store.conversation_audio(run_id)
        [run] = await store.list_runs()
        await store.vacuum()
    minutes = conv.duration_ms / 60000 if conv else 0.0
    if not minutes:
        print(f"simulator run {run_id}: no conversation audio recorded ({run.status})")
        return
    stored = path.stat().st_size
    raw_path = path.with_name(path.stem + "-raw.db")
    shutil.copy(path, raw_path)
    encode_s, pcm_total, flac_total = _as_raw_pcm(raw_path)
    raw = raw_path.stat().st_size
    print(f"simulator run of conversation_bench, turns {turns} at speed {speed:g} ({run.status}, "
          f"{run.turns_done} turns, {minutes * 60:.1f} s of conversation audio, {wall:.1f} s wall clock):")  # fmt: skip
    print(f"  raw PCM16 rows (before): {raw / 1e6:.2f} MB = {raw / 1e6 / minutes:.2f} MB per conversation minute")
    print(f"  as stored (after):       {stored / 1e6:.2f} MB = {stored / 1e6 / minutes:.2f} MB per conversation minute "
          f"(audio {flac_total / 1e6:.2f} MB stored for {pcm_total / 1e6:.2f} MB PCM, "
          f"x{pcm_total / max(flac_total, 1):.1f})")  # fmt: skip
    print(f"  compressing it took {encode_s * 1000:.0f} ms of CPU "
          f"({encode_s * 1000 / minutes:.0f} ms per conversation minute), in the writer's worker thread")  # fmt: skip


def _as_raw_pcm(path: Path) -> tuple[float, int, int]:
    """Rewrite every audio row of `path` as raw PCM16 (as stored before schema 3) and vacuum;
    returns (seconds spent re-encoding the rows, PCM bytes, stored bytes before)."""
    conn = sqlite3.connect(path, isolation_level=None)
    rows = conn.execute("SELECT run_id, seq, codec, data, sample_rate, channels FROM audio").fetchall()
    spent = 0.0
    pcm_total = stored_total = 0
    conn.execute("BEGIN")
    for run_id, seq, codec, data, rate, channels in rows:
        pcm = decode(codec, data, channels)
        t = time.perf_counter()
        encode(pcm, rate, channels)  # what the writer spent on this row
        spent += time.perf_counter() - t
        pcm_total += len(pcm)
        stored_total += len(data)
        conn.execute("UPDATE audio SET codec='pcm16', data=? WHERE run_id=? AND seq=?", (pcm, run_id, seq))
    conn.execute("COMMIT")
    conn.execute("VACUUM")
    conn.close()
    return spent, pcm_total, stored_total


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="length of the synthetic run")
    ap.add_argument("--keep", help="folder to keep the databases in (default: a temp folder, removed)")
    ap.add_argument("--data", default=str(shared_data()),
                    help="folder holding conversation_bench (default: ../shared/audio-arena)")
    ap.add_argument("--turns", default="0-5", help="turns of the simulator run (default: %(default)s)")
    ap.add_argument("--speed", type=float, default=20.0, help="speed of the simulator run (default: %(default)s)")
    ap.add_argument("--only-sim", action="store_true", help="only the simulator run (phase 4)")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_store_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if not args.only_sim:
            await throughput(folder / "throughput.db", args.minutes)
            await audio_size(folder / "audio.db", args.minutes)
            await reader_latency(folder / "reader.db", min(args.minutes, 3))
            await loop_stall(folder / "stall.db", min(args.minutes, 2))
        await sim_run_size(folder / "sim.db", Path(args.data), args.turns, args.speed)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
