"""How far our timeline's latency figures are from what the simulator actually did (1× speed).

The simulator records, in audio time, when it sent each reply's first audio and how much
leading silence it put in; the engine measures the same moments from the audio it played.
Prints the error distribution (ms) per figure. Not a test: numbers depend on machine load.

Clock mapping: the simulator's audio time is the amount of input audio it has RECEIVED. Our
input pushes each 20 ms chunk at its start deadline, so when the simulator's audio clock reads
T, the chunk that ended at T left us at timeline time origin + T − chunk_ms. Comparing without
this shift makes every figure look one chunk (minus transit) early — the −14.35 ms "offset"
measured before. What remains after the mapping is real: local transit plus pipeline time.

    .venv/bin/python -m scripts.bench_latency_error --turns 0-7 [--faults 3:slow_first_audio=1500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import SessionOpened, TurnEnded
from benchmarks.registry import load_benchmark
from arena_tui.spine.settings import RunSettings, parse_turns
from runners.engine import run_benchmark
from runners.simulator import SimulatorServer
from scripts import shared_data



def describe(name: str, errors: list[float]) -> str:
    if not errors:
        return f"{name:28} no samples"
    a = sorted(abs(e) for e in errors)
    p95 = a[min(len(a) - 1, round(0.95 * (len(a) - 1)))]
    return (f"{name:28} n={len(a):3}  mean {statistics.fmean(errors):+7.2f}  |err| p50 {statistics.median(a):6.2f}"
            f"  p95 {p95:6.2f}  max {a[-1]:6.2f} ms")


def latency_errors(events: list, truth_log: list, chunk_ms: float, t0_mono: float | None = None,
                   speed: float = 1.0) -> dict[str, list[float]]:
    """Measured − simulator truth (ms) per figure, over the answered turns of one run. With the run
    clock's `t0_mono` (a simulator on this machine), also the onset against when the audio actually
    left the simulator: its audio clock lags when it is itself short of CPU, the send time does not."""
    origins = {e.session: e.t_ms for e in events if isinstance(e, SessionOpened)}
    first_frame, onset, leading, after_stop, onset_sent = [], [], [], [], []
    for e in events:
        if not isinstance(e, TurnEnded) or e.result.status != "ok" or not e.result.user_speech:
            continue
        r = e.result
        truth = next((t for t in reversed(truth_log) if t.turn_index == r.turn_index and t.status == "answered"), None)
        if truth is None or r.latencies.pipeline_ttfb_ms is None or not r.bot_speech:
            continue
        origin = origins[r.session] - chunk_ms  # sim audio time T ↔ timeline origin + T − chunk
        ours_first = r.user_speech[-1].end_ms + r.latencies.pipeline_ttfb_ms
        first_frame.append(ours_first - (origin + truth.first_audio_ms))
        onset.append(r.bot_speech[0].start_ms - (origin + truth.first_audio_ms + truth.leading_silence_ms))
        leading.append(r.latencies.leading_silence_ms - truth.leading_silence_ms)
        after_stop.append((ours_first - (origin + truth.speech_stopped_ms)) - truth.first_audio_after_stop_ms)
        if t0_mono is not None and truth.first_audio_sent_mono is not None:
            sent_ms = (truth.first_audio_sent_mono - t0_mono) * 1000.0 * speed  # on the run's timeline
            onset_sent.append(r.bot_speech[0].start_ms - (sent_ms + truth.leading_silence_ms))
    out = {"first bot frame played": first_frame, "audible bot speech onset": onset,
           "leading silence": leading, "reply delay after VAD stop": after_stop}
    if t0_mono is not None:
        out[ONSET_VS_SENT] = onset_sent
    return out


#: the onset against when the simulator's first audio actually left it (`latency_errors` with t0_mono)
ONSET_VS_SENT = "audible bot speech onset, vs when sent"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=str(shared_data() / "conversation_bench"))
    ap.add_argument("--turns", default="0-7")
    ap.add_argument("--faults", default=None)
    args = ap.parse_args()
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    bench = load_benchmark(args.bench)
    async with SimulatorServer(bench, faults=args.faults) as sim:
        bus = EventBus()
        sub = bus.subscribe()
        config = RunSettings(model="sim", base_url=sim.base_url, speed=1.0, turns=parse_turns(args.turns))
        await run_benchmark(bench, config, bus)
        events = sub.drain()
        truth_log = list(sim.truth_log)
    errors = latency_errors(events, truth_log, config.chunk_ms)
    print(f"{bench.name}, turns {args.turns}, 1x, faults {args.faults or 'none'}: measured − simulator truth")
    for name, errs in errors.items():
        print(describe(name, errs))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
