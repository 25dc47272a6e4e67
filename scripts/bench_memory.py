#!/usr/bin/env python
"""Peak memory of a process running simulator sessions: does it stay flat in run length?

Not a test: prints a table. Each row is a fresh engine process (so its peak RSS is its own) that
runs `--sessions` simulator runs at once (the real engine, all recorded by one real store),
for the short and the longer turn range, against one simulator in a process of its own
(`arena-tui simulate`, as a provider would be remote). Columns: peak RSS of the engine process
(MB; in brackets what the runs added after the imports) and of the simulator's, the runs' audio
timeline (how far their clock ran), the conversation track they stored (MB of PCM), wall time
and how the runs ended. Keep sessions × speed within what a process paces (~16, docs/campaigns.md). `--gap-ms` gives every turn's reply that much of a silent wait (audio
time; the simulator's slow_first_audio): the idle time that used to be stored, and held in
memory, as silence.

    .venv/bin/python -m scripts.bench_memory [--bench PATH] [--speed 4] [--short 0-1] [--long 0-9] [--gap-ms 30000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from scripts import shared_data

REPO = Path(__file__).resolve().parent.parent


def default_bench() -> Path:
    root = shared_data()
    return root / "conversation_bench"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


async def child(bench_path: str, url: str, sessions: int, turns: str, speed: float, db: str) -> dict:
    """The runs of one row, in this process."""
    from loguru import logger  # deferred: only the measured child process loads the engine

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    from arena_tui.spine.bus import EventBus  # deferred: only the measured child process loads the engine
    from arena_tui.store import Store  # deferred: only the measured child process loads the engine
    from benchmarks.registry import load_benchmark  # deferred: only the measured child process loads the engine
    from arena_tui.spine.settings import RunSettings, parse_turns  # deferred: only the measured child process loads the engine
    from runners.engine import RunError, run_benchmark  # deferred: only the measured child process loads the engine

    bench = load_benchmark(bench_path)
    picked = parse_turns(turns)
    store = await Store.open(Path(db))
    bus = EventBus()
    store.start_recording(bus)
    conv_bytes = [0]
    timeline = [0.0]
    ends: list[str] = []

    async def follow() -> None:
        async for ev in bus.subscribe(lambda e: e.kind in ("audio", "run_ended")):
            if ev.kind == "audio" and ev.track == "conversation":
                conv_bytes[0] += len(ev.pcm)
            elif ev.kind == "run_ended":
                timeline[0] = max(timeline[0], ev.t_ms)
                ends.append(ev.status + (f" ({ev.reason[:40]})" if ev.status == "failed" else ""))

    async def one() -> None:
        try:
            await run_benchmark(bench, RunSettings(model="sim", base_url=url, speed=speed, turns=picked), bus)
        except RunError:
            pass  # its run_ended says how

    import gc  # deferred: the child collects before its baseline

    gc.collect()
    base = peak_mb()
    watcher = asyncio.create_task(follow())
    t0 = time.monotonic()
    await asyncio.gather(*[one() for _ in range(sessions)])
    wall = time.monotonic() - t0
    await store.flush()
    bus.close()
    await watcher
    await store.close()
    return {"peak_mb": peak_mb(), "base_mb": base, "wall_s": wall, "timeline_s": timeline[0] / 1000.0,
            "conv_mb": conv_bytes[0] / 1e6, "ends": ends}


def _peak_of(pid: int) -> float:
    """Peak RSS (VmHWM) of a live process, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def row(args: argparse.Namespace, sessions: int, turns: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    from arena_tui.spine.settings import parse_turns  # deferred: the parent needs only this of the engine

    faults = ",".join(f"{t}:slow_first_audio={args.gap_ms:g}*" for t in parse_turns(turns)) if args.gap_ms else None
    sim = subprocess.Popen([sys.executable, "-m", "arena_tui.cli", "simulate", str(args.bench), "--port", "0",
                            *(["--faults", faults] if faults else [])],
                           cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert sim.stdout is not None
        url = sim.stdout.readline().strip().rsplit(" ", 1)[-1]
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "scripts.bench_memory", "--child", str(args.bench), url, str(sessions), turns,
                   f"{args.speed:g}", str(Path(tmp) / "m.db")]
            out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=args.timeout)
        sim_peak = _peak_of(sim.pid)
    finally:
        sim.terminate()
        sim.wait(10)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "sim_mb": sim_peak}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        bench, url, sessions, turns, speed, db = sys.argv[2:8]
        print(json.dumps(asyncio.run(child(bench, url, int(sessions), turns, float(speed), db))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=default_bench())
    ap.add_argument("--speed", type=float, default=4.0)
    ap.add_argument("--short", default="0-1", help="turns of the short run")
    ap.add_argument("--long", default="0-9", help="turns of the longer run")
    ap.add_argument("--sessions", default="1,4")
    ap.add_argument("--gap-ms", type=float, default=0.0, help="a silent wait before every reply (audio ms)")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.bench.name} at {args.speed:g}x, "
          f"wait before each reply {args.gap_ms / 1000:g} s of audio", flush=True)
    print(f"{'sessions':>8} {'turns':>6} {'engine peak MB':>16} {'sim MB':>7} {'timeline s':>10} {'conv MB':>8} "
          f"{'wall s':>7}  ends")
    for sessions in (int(s) for s in args.sessions.split(",")):
        for turns in (args.short, args.long):
            r = row(args, sessions, turns)
            if "error" in r:
                print(f"{sessions:>8} {turns:>6}  failed: {r['error']}", flush=True)
                continue
            ends: dict[str, int] = {}
            for e in r["ends"]:
                ends[e] = ends.get(e, 0) + 1
            peak = f"{r['peak_mb']:.0f} (+{r['peak_mb'] - r['base_mb']:.0f})"
            print(f"{sessions:>8} {turns:>6} {peak:>16} {r['sim_mb']:>7.0f} {r['timeline_s']:>10.0f} {r['conv_mb']:>8.1f} {r['wall_s']:>7.1f}  "
                  + ", ".join(f"{k} {v}" for k, v in sorted(ends.items())), flush=True)


if __name__ == "__main__":
    main()
