"""`arena-tui simulate`: serve the offline OpenAI-Realtime simulator for one benchmark.

`run --model sim` embeds the simulator itself; this command serves it on its own so any
Realtime client (or a second `arena-tui run --model gpt-realtime --base-url …`) can be
pointed at it. It is a simulator, not a model: it says so on every line it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError
from benchmarks.loader import BenchmarkError
from benchmarks.registry import load_benchmark

from ..orchestration.simulator import SimulatorServer, parse_faults, simulator_server

#: how much lower than its clients the simulator runs: on one machine, the kernel otherwise lets it
#: preempt the engine whose pacing it measures (measured: 8 sessions' input pacing p99 2.3 → 0.8-1.6 ms)
SIM_NICE = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bench", help="benchmark name or folder")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    parser.add_argument("--faults", help="e.g. '3:no_response,5:barge_in,7:slow_first_audio=1500,expire=120'")
    parser.add_argument("--voice", choices=["auto", "espeak", "tone"], default="auto",
                        help="reply audio: espeak-ng speech, or tone bursts (default: espeak when installed)")
    parser.add_argument("--response-delay-ms", type=float, default=300.0,
                        help="audio time from speech_stopped to the first reply audio (default 300)")
    parser.add_argument("--nice", type=int, default=SIM_NICE, metavar="N",
                        help=f"lower this process's CPU priority by N (default {SIM_NICE}; 0 keeps it): it stands in for "
                        "a remote provider, and must not take the CPU from the client it is measuring")
    parser.add_argument("--truth", metavar="FILE",
                        help="when it stops, write what it did on every turn (one JSON object a line) to FILE")
    parser.add_argument("--duration", type=float, metavar="SECONDS",
                        help="stop after this many seconds (default: until Ctrl-C)")


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0..65535 (got {args.port})")
    if args.response_delay_ms < 0:
        raise CliError(f"--response-delay-ms must be >= 0 (got {args.response_delay_ms})")
    if not 0 <= args.nice <= 19:
        raise CliError(f"--nice must be 0..19 (got {args.nice})")
    faults = parse_faults(args.faults)
    try:
        bench = load_benchmark(args.bench, paths.data_dir(args.data))
    except BenchmarkError as e:
        raise CliError(str(e)) from None
    except (FileNotFoundError, KeyError, ValueError) as e:
        raise CliError(f"benchmark {args.bench!r}: {e}") from None
    server = simulator_server(bench, faults=faults, voice=args.voice, port=args.port,
                              response_delay_ms=args.response_delay_ms)
    if args.nice:
        os.nice(args.nice)
    try:
        asyncio.run(_serve(server, args.duration, sys.stdout, args.truth))
    except KeyboardInterrupt:
        pass
    except OSError as e:  # e.g. the port is taken
        raise CliError(f"cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    return 0


async def _serve(server: SimulatorServer, duration: float | None, out: TextIO, truth: str | None = None) -> None:
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # SIGTERM stops it as cleanly as Ctrl-C
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    url = await server.start()
    faults = str(server.faults) or "none"
    print(f"SIMULATOR (not a real model) for {server.benchmark.name}: {url}", file=out)
    print(f"  voice: {server.voice}; faults: {faults}; audio of {len(server.index)} turns indexed; "
          f"CPU priority nice {os.nice(0)}", file=out)
    print("  any Bearer token is accepted; stop with Ctrl-C", file=out, flush=True)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), duration)
    finally:
        await server.stop()
        if truth:
            Path(truth).write_text("".join(t.model_dump_json() + "\n" for t in server.truth_log))
        for t in server.truth_log:
            after = "" if t.first_audio_after_stop_ms is None else f", first audio {t.first_audio_after_stop_ms:.0f} ms after stop"
            fault = f", fault {t.fault}" if t.fault else ""
            print(f"  session {t.session} turn {t.turn_index} attempt {t.attempt}: {t.status} "
                  f"({t.identified_by}{fault}{after})", file=out)
        print(f"SIMULATOR stopped after {len(server.sessions)} session(s)", file=out, flush=True)
