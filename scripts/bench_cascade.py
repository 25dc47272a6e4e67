#!/usr/bin/env python
"""What a cascade's stages cost on this machine, against its local fakes: not a test, prints numbers.

Runs `cascade:<stt>+<llm>+<tts> --fake` on demo_bench through the real engine (paced WAV in,
Pipecat's STT, Silero VAD, speech-timeout turn end, the text model's service, TTS, paced out)
and prints, per stage, the p50 and max over the turns (our clock, ms; the fakes answer at once,
so what remains is Pipecat's own work and the turn strategy's wait), the voice-to-voice p50,
and the process's CPU seconds per second of audio (Silero scores every 32 ms).

    .venv/bin/python -m scripts.bench_cascade [--model cascade:deepgram+claude-haiku-4-5+cartesia] [--speed 1] [--turns 0-4]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from loguru import logger


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="cascade:openai-stt+gpt-4.1-mini+openai-tts")
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--turns", default="0-4")
    args = ap.parse_args()
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    from arena_tui.spine.bus import EventBus
    from arena_tui.stats import median
    from benchmarks.registry import load_benchmark
    from arena_tui.spine.settings import RunSettings, parse_turns
    from runners.engine import run_benchmark

    bench = load_benchmark("demo_bench")
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model=args.model, fake=True, speed=args.speed, turns=parse_turns(args.turns), greeting={"enabled": False})
    wall0, cpu0 = time.monotonic(), time.process_time()
    await run_benchmark(bench, config, bus)
    wall, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    events = sub.drain()
    results = [e.result for e in events if e.kind == "turn_ended" and e.turn_index >= 0]
    audio_s = sum(e.user_audio_ms for e in events if e.kind == "turn_started") / 1000.0
    print(f"{args.model} at {args.speed:g}x, {len(results)} turns, {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"({cpu / max(audio_s / args.speed, 1e-9):.2f} CPU s per second of user audio played)")
    for stage in ("stt", "turn", "llm", "tts"):
        values = [s[stage] for r in results if (s := r.latencies.stages()) is not None]
        if values:
            print(f"  {stage:5} p50 {median(values):7.0f} ms   max {max(values):7.0f} ms   (n={len(values)})")
    v2v = [r.latencies.voice_to_voice_ms for r in results if r.latencies.voice_to_voice_ms is not None]
    if v2v:
        print(f"  v2v   p50 {median(v2v):7.0f} ms   ok turns {sum(r.status == 'ok' for r in results)}/{len(results)}")


if __name__ == "__main__":
    asyncio.run(main())
