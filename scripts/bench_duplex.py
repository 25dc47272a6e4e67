"""Yield latency on our timeline against what the simulator did, on duplex_bench (1× speed).

Runs the duplex benchmark against the simulator once per yield setting (`yield=N`: the
simulator stops its reply N ms of audio after a cue's onset; backchannels and side speech are
stopped for too, so every cue is a sample) and compares, per cue, the yield latency the run
measured (the cue's speech onset -> the bot's audio stopped, from the played audio) with what
the simulator did (where the cue's WAV began in its input, and when it stopped the reply on
this machine's monotonic clock, less any pause the reply was already in). Prints the error
distribution (ms) per setting and over all. Not a test: numbers depend on machine load.

Why 1× speed: the error is the time the simulator's stop takes to reach our speaker (its
websocket message, Pipecat's interruption through the pipeline), a few ms of WALL time, and at
speed S it counts S times over in audio ms. At 1× a figure is what a listener hears.

    .venv/bin/python -m scripts.bench_duplex [--yields 150,400,800] [--turns 0-7] [--speed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import SessionOpened, TurnEnded
from benchmarks.registry import DUPLEX_NAME, load_benchmark
from arena_tui.spine.settings import EndOfTurn, RunSettings, parse_turns
from runners.engine import run_benchmark
from runners.simulator import SimulatorServer
from runners.simulator.duplex import yield_errors
from scripts.bench_latency_error import describe


async def one_run(bench, yield_ms: float, turns: list[int], speed: float) -> list[tuple[object, float, float]]:
    """(truth, measured, simulator) per cue stopped for, in one run with `yield=yield_ms`."""
    faults = f"yield={yield_ms:g}"  # backchannels and side speech are stopped for too (the default)
    async with SimulatorServer(bench, faults=faults) as sim:
        bus = EventBus()
        sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)))
        t0: list[float] = []
        config = RunSettings(model="sim", base_url=sim.base_url, speed=speed, turns=turns,
                           end_of_turn=EndOfTurn(quiet_ms=1000.0, drain_ms=200.0))
        await run_benchmark(bench, config, bus, on_session=lambda s: t0.append(s.run.clock.t0))
        events = sub.drain()
        truth = list(sim.duplex_truth)
    origins = {e.session: e.t_ms for e in events if isinstance(e, SessionOpened)}
    results = [e.result for e in events if isinstance(e, TurnEnded) and e.turn_index is not None and e.turn_index >= 0]
    lost = [r.turn_index for r in results if r.status == "lost_pace"]
    if lost:
        print(f"  yield={yield_ms:g}: turn(s) {lost} lost pace on this machine: their timing is no measurement")
    return [p for p in yield_errors(results, origins, truth, t0[0], speed) if p[0].turn_index not in lost]


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--yields", default="150,400,800", help="yield settings to run, ms after a cue's onset")
    ap.add_argument("--turns", default="0-7")
    ap.add_argument("--speed", type=float, default=1.0)
    args = ap.parse_args()
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    bench = load_benchmark(DUPLEX_NAME)
    turns = parse_turns(args.turns)
    print(f"{bench.name}, turns {args.turns}, {args.speed:g}x: measured yield latency − what the simulator did")
    every: list[float] = []
    for y in (float(v) for v in args.yields.split(",")):
        pairs = await one_run(bench, y, turns, args.speed)
        errors = [m - s for _, m, s in pairs]
        every += errors
        print(describe(f"yield={y:g}", errors))
        for t, m, s in pairs:
            print(f"    turn {t.turn_index} duplex[{t.cue}] {t.kind:12} measured {m:7.1f}  simulator {s:7.1f}  "
                  f"error {m - s:+6.1f} ms")
    print(describe("all", every))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
