#!/usr/bin/env python
"""How exactly the engine paces user audio, and how many real-time sessions this machine holds.

Not a test: prints numbers. Every run is the real engine (PacedInput → Pipecat OpenAI Realtime
service → PacedOutput) against the in-process simulator, so the load is what a run costs.

  A. one session at 1x for --single-seconds: input pacing error (p50/p99/max, wall ms late
     against the ideal absolute schedule t0 + n*20 ms) and drift (error trend over the run).
  B. all turns of the benchmark at --fast-speed: the same figures (a 75-turn run's drift).
  C. N concurrent 1x sessions for --concurrency-seconds each, N = 1, 2, 4, …: p99 pacing error,
     until it exceeds --p99-limit-ms (default 2 ms). Here the simulator runs in its own process
     (`arena-tui simulate`), as a provider would be remote; it still shares the two cores.

    .venv/bin/python -m scripts.bench_pacing [--bench PATH] [--single-seconds 120] ...
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from loguru import logger

REPO = Path(__file__).resolve().parent.parent

from arena_tui.spine.bus import EventBus  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402
from arena_tui.spine.settings import RunSettings  # noqa: E402
from runners.engine import run_benchmark  # noqa: E402
from runners.simulator import SimulatorServer  # noqa: E402
from scripts import shared_data  # noqa: E402


def default_bench() -> Path:
    root = shared_data()
    return root / "conversation_bench"


async def one_run(bench, speed: float, seconds: float | None, turns=None, url: str | None = None) -> tuple[list[float], float, int]:
    """Run (capped at `seconds` wall) and return (lateness samples ms, wall s, turns finished).

    Without `url` the simulator runs in this process (its CPU shares the event loop)."""
    sim = None
    if url is None:
        sim = SimulatorServer(bench)
        url = await sim.start()
    inputs = []
    bus = EventBus()
    sub = bus.subscribe(lambda e: e.kind == "turn_ended")
    cfg = RunSettings(model="sim", base_url=url, speed=speed, turns=turns)
    t0 = time.monotonic()
    task = asyncio.create_task(run_benchmark(bench, cfg, bus, on_session=lambda s: inputs.append(s.input)))
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout=seconds)
    except TimeoutError:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    wall = time.monotonic() - t0
    if sim is not None:
        await sim.stop()
    late = [x for i in inputs for x in i.lateness_ms]
    return late, wall, len(sub.drain())


def stats(late: list[float]) -> str:
    a = np.asarray(late)
    if a.size == 0:
        return "no samples"
    n = a.size
    head, tail = a[: max(1, n // 10)], a[-max(1, n // 10) :]
    slope = np.polyfit(np.arange(n) * 0.02, a, 1)[0] * 60.0 if n > 10 else 0.0  # ms per minute of schedule
    return (
        f"chunks {n}: late p50 {np.percentile(a, 50):.3f} ms, p99 {np.percentile(a, 99):.3f} ms, "
        f"max {a.max():.3f} ms; drift: first-10% mean {head.mean():.3f} ms, last-10% mean {tail.mean():.3f} ms, "
        f"trend {slope:+.4f} ms/min"
    )


class SimProcess:
    """One `arena-tui simulate` process (below the engine's CPU priority), as a remote provider
    would be: `base_url`, `pid`, and `truth_log` once stopped (a `SimulatorServer`'s face)."""

    def __init__(self, folder: str) -> None:
        self.folder, self.base_url, self.truth_log = folder, "", []
        self._tmp = tempfile.TemporaryDirectory()
        self._proc: asyncio.subprocess.Process | None = None
        self.pid = 0

    async def __aenter__(self) -> SimProcess:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena_tui.cli", "simulate", self.folder, "--port", "0",
            "--truth", str(Path(self._tmp.name) / "truth.jsonl"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=str(REPO))
        self.pid = self._proc.pid
        assert self._proc.stdout is not None
        line = (await asyncio.wait_for(self._proc.stdout.readline(), 60)).decode()
        self.base_url = line.strip().rsplit(" ", 1)[-1]
        return self

    async def stop(self) -> None:
        from runners.simulator.records import TurnTruth

        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.returncode is None:
            proc.terminate()  # it writes its truth as it stops
            try:
                await asyncio.wait_for(proc.communicate(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        path = Path(self._tmp.name) / "truth.jsonl"
        if path.exists():
            self.truth_log = [TurnTruth.model_validate_json(x) for x in path.read_text().splitlines() if x]
        self._tmp.cleanup()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def concurrent(bench, n: int, seconds: float) -> list[float]:
    """N sessions in this process against one simulator in another (as a remote provider would be)."""
    async with SimProcess(str(bench.root)) as sim:
        out = await asyncio.gather(*[one_run(bench, 1.0, seconds, url=sim.base_url) for _ in range(n)])
    return [x for late, _, _ in out for x in late]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=default_bench())
    ap.add_argument("--single-seconds", type=float, default=120.0)
    ap.add_argument("--fast-speed", type=float, default=15.0)
    ap.add_argument("--fast-seconds", type=float, default=240.0, help="cap for part B")
    ap.add_argument("--concurrency-seconds", type=float, default=40.0)
    ap.add_argument("--max-sessions", type=int, default=16)
    ap.add_argument("--p99-limit-ms", type=float, default=2.0)
    ap.add_argument("--skip", default="", help="parts to skip, e.g. 'B,C'")
    ap.add_argument("--spin-ms", type=float, default=None, help="pace by sleeping and yield-spinning this many ms before each deadline (0: plain sleep) instead of a kernel timer")
    args = ap.parse_args()
    if args.spin_ms is not None:
        from runners.transports import PacedInput

        PacedInput.spin_s, PacedInput.precise = args.spin_ms / 1000.0, False
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    bench = load_benchmark(args.bench)
    skip = {p.strip().upper() for p in args.skip.split(",") if p.strip()}
    from runners.transports import PacedInput

    print(
        f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; benchmark {bench.name} "
        f"({len(bench.turns)} turns); input paced by "
        + ("a kernel timer" if PacedInput.precise else f"sleep + {PacedInput.spin_s * 1000:g} ms spin"),
        flush=True,
    )

    if "A" not in skip:
        late, wall, done = await one_run(bench, 1.0, args.single_seconds)
        print(f"A. 1x, one session, {wall:.0f} s wall, {done} turns: {stats(late)}", flush=True)
    if "B" not in skip:
        cpu0 = time.process_time()
        late, wall, done = await one_run(bench, args.fast_speed, args.fast_seconds)
        cpu = time.process_time() - cpu0
        print(
            f"B. {args.fast_speed:g}x, {done} turns in {wall:.0f} s wall ({cpu:.0f} s CPU): {stats(late)}",
            flush=True,
        )
    if "C" not in skip:
        n = 1
        while n <= args.max_sessions:
            late = await concurrent(bench, n, args.concurrency_seconds)
            p99 = float(np.percentile(late, 99)) if late else float("nan")
            print(f"C. {n} concurrent 1x sessions (load {os.getloadavg()[0]:.2f}): {stats(late)}", flush=True)
            if p99 > args.p99_limit_ms:
                print(f"   p99 {p99:.3f} ms > {args.p99_limit_ms} ms at {n} sessions", flush=True)
                break
            n = n * 2 if n < 4 else n + 2


if __name__ == "__main__":
    asyncio.run(main())
