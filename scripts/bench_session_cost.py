#!/usr/bin/env python
"""What one live 1x session costs: CPU ms per second of audio, and where it goes.

Not a test: prints numbers. N sessions of the real engine (PacedInput → Pipecat OpenAI Realtime
service → PacedOutput) run at 1x in this process against one simulator in its own process (as a
remote provider would be, `arena-tui simulate`), as `scripts/bench_pacing.py` part C runs them.
After --warmup seconds (session start, the greeting), the steady state is measured for --seconds:
this process's CPU time (all threads) and its main thread's, and the simulator process's, per
second of audio per session. CPU time, unlike pacing lateness, does not change with the load
other processes put on the machine, so figures taken on a busy machine still compare.

With --profile, also where the engine's main-thread time went in that window (cProfile: its own
overhead inflates the Python share, so read the split, not the total): the top functions by own
time, and own time by package.

    .venv/bin/python -m scripts.bench_session_cost [--sessions 1] [--seconds 30] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import gc
import os
import pstats
import sys
import time
from pathlib import Path

from loguru import logger

from arena_tui.spine.bus import EventBus  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402
from arena_tui.spine.settings import RunSettings, parse_turns  # noqa: E402
from runners.engine import run_benchmark  # noqa: E402
from runners.transports import PacedInput  # noqa: E402
from scripts.bench_pacing import SimProcess, default_bench  # noqa: E402

TICK_S = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK_S


def package_of(filename: str) -> str:
    """Which package a profiled function's file belongs to (its top folder under site-packages,
    our own packages by name, the standard library's module)."""
    path = filename.replace("\\", "/")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    for ours in ("runners/", "arena_tui/", "benchmarks/", "scripts/"):
        if f"/{ours}" in path:
            rest = path.split(f"/{ours}", 1)[1]
            return ours + rest.split("/", 1)[0].removesuffix(".py")
    if path.startswith("~") or path.startswith("<"):
        return "builtins"
    return "stdlib:" + path.rsplit("/", 1)[-1].removesuffix(".py")


class GcPauses:
    """How long the garbage collector held the process, per generation (gc.callbacks)."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses[info["generation"]].append((time.perf_counter() - self._t0) * 1000.0)

    def report(self) -> str:
        return "; ".join(f"gen{g} {len(p)}× max {max(p, default=0):.1f} ms total {sum(p):.0f} ms"
                         for g, p in self.pauses.items())


class LoopStalls:
    """Loop steps that held the loop longer than `slow_ms` of wall time, by what ran, with the CPU
    time they used: a step whose wall time is mostly not CPU was the process waiting for a core."""

    def __init__(self, slow_ms: float = 1.0) -> None:
        self.slow_s = slow_ms / 1000.0
        self.rows: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
        self._orig = asyncio.events.Handle._run

    def __enter__(self) -> LoopStalls:
        orig, me = self._orig, self

        def run(handle: asyncio.Handle) -> None:
            w, c = time.perf_counter(), time.thread_time()
            try:
                orig(handle)
            finally:
                dw = time.perf_counter() - w
                if dw > me.slow_s:
                    me.add(handle, dw, time.thread_time() - c)

        asyncio.events.Handle._run = run  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._orig  # type: ignore[method-assign]

    def add(self, handle: asyncio.Handle, wall: float, cpu: float) -> None:
        cb = handle._callback  # type: ignore[attr-defined]
        owner = getattr(cb, "__self__", None)
        if isinstance(owner, asyncio.Task):
            coro = owner.get_coro()
            frame = getattr(coro, "cr_frame", None)
            while frame is not None and getattr(coro, "cr_await", None) is not None:  # the innermost coroutine
                inner = coro.cr_await
                if not hasattr(inner, "cr_frame") or inner.cr_frame is None:
                    break
                coro, frame = inner, inner.cr_frame
            name = f"task {getattr(owner.get_coro(), '__qualname__', '?')} … {getattr(coro, '__qualname__', '?')}"
        else:
            name = getattr(cb, "__qualname__", repr(cb))
        row = self.rows[name]
        row[0] += 1
        row[1] += wall
        row[2] += cpu
        row[3] = max(row[3], wall)
        row[4] = max(row[4], cpu)

    def report(self, top: int) -> str:
        lines = [f"loop steps over {self.slow_s * 1000:g} ms wall: count, wall ms, CPU ms, worst wall ms, worst CPU ms, what"]
        for name, (n, wall, cpu, worst, worst_cpu) in sorted(self.rows.items(), key=lambda r: -r[1][1])[:top]:
            lines.append(f"  {int(n):6d} {wall * 1000:8.1f} {cpu * 1000:8.1f} {worst * 1000:7.1f} {worst_cpu * 1000:7.1f}  {name}")
        return "\n".join(lines)


#: what a profiled function's time serves, by where it lives (first match wins); builtins are
#: charged to their callers
JOBS = [
    ("paced ends (runners/transports)", ("runners/transports",)),
    ("timeline: meters, bot VAD, recorder (+ numpy)", ("runners/timeline", "arena_tui/spine:audio", "numpy")),
    ("run loop, tracks, events, bus", ("runners/run", "runners/pace", "runners/tools", "arena_tui/spine", "pydantic", "loguru")),
    ("Pipecat output transport (bot audio frames)", ("pipecat/transports/base_output",)),
    ("Pipecat input transport", ("pipecat/transports/base_input",)),
    ("provider service + websocket (JSON, base64, ids)", ("pipecat/services", "runners/providers", "websockets",
                                                          "stdlib:encoder", "stdlib:decoder", "stdlib:__init__",
                                                          "stdlib:uuid", "stdlib:base64", "stdlib:random", "stdlib:secrets")),
    ("Pipecat frame plumbing (processors, aggregators, queues)", ("pipecat", "stdlib:queues")),
    ("asyncio event loop", ("stdlib:",)),
]


def job_of(filename: str) -> str:
    path = filename.replace("\\", "/")
    where = package_of(filename)
    full = where + (":" + path.rsplit("/", 1)[-1].removesuffix(".py") if where.startswith("arena_tui") else "")
    if "site-packages/pipecat/" in path:
        full = "pipecat/" + path.split("site-packages/pipecat/", 1)[1]
    for job, prefixes in JOBS:
        if any(full.startswith(pre) for pre in prefixes):
            return job
    return "other"


def by_job(stats: pstats.Stats) -> collections.Counter[str]:
    """Own time per job, a builtin's charged to its callers in proportion to their calls' time."""
    out: collections.Counter[str] = collections.Counter()
    raw = stats.stats  # type: ignore[attr-defined]
    for (filename, _line, _name), (_cc, _nc, tt, _ct, callers) in raw.items():
        if package_of(filename) != "builtins" or not callers:
            out[job_of(filename)] += tt
            continue
        total = sum(c[2] for c in callers.values()) or 1.0
        for (cfile, _l, _n), c in callers.items():
            out[job_of(cfile)] += tt * c[2] / total
    return out


def report_profile(prof: cProfile.Profile, top: int, audio_s: float) -> None:
    stats = pstats.Stats(prof)
    by_pkg: collections.Counter[str] = collections.Counter()
    rows = []
    total = 0.0
    for (filename, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        total += tt
        by_pkg[package_of(filename)] += tt
        rows.append((tt, ct, nc, f"{package_of(filename)}:{name}:{line}"))
    calls = sum(nc for _cc, nc, _tt, _ct, _callers in stats.stats.values())  # type: ignore[attr-defined]
    print(f"profile: {total:.2f} s own time in the window (cProfile overhead included); {calls / audio_s:,.0f} "
          "Python and builtin calls per audio second per session (a count: the machine's load does not change it)")
    print("  own time by what it serves (builtins charged to their callers):")
    for job, tt in by_job(stats).most_common():
        print(f"    {tt / total * 100:5.1f} %  {job}")
    print("  own time by package:")
    for pkg, tt in by_pkg.most_common(top):
        print(f"    {tt / total * 100:5.1f} %  {pkg}")
    print("  top functions by own time: own %, cumulative s, calls, function")
    for tt, ct, nc, what in sorted(rows, reverse=True)[:top]:
        print(f"    {tt / total * 100:5.1f} % {ct:8.2f} {nc:9d}  {what}")
    print("  top functions by cumulative time: cumulative %, calls, function")
    for _tt, ct, nc, what in sorted(rows, key=lambda r: r[1], reverse=True)[:top]:
        print(f"    {ct / total * 100:5.1f} % {nc:9d}  {what}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=default_bench())
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--warmup", type=float, default=8.0, help="wall seconds before the window")
    ap.add_argument("--seconds", type=float, default=30.0, help="the measured window, wall seconds")
    ap.add_argument("--turns", default=None, help="instead of a window: these turns (and the greeting) from the "
                    "start to the end of the run, the same audio every time (e.g. 0-2; for call counts to compare)")
    ap.add_argument("--profile", action="store_true", help="cProfile the window (main thread)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--stalls", action="store_true", help="list the loop steps that held the loop over --stall-ms")
    ap.add_argument("--stall-ms", type=float, default=1.0)
    ap.add_argument("--dump", type=Path, default=None, help="with --profile: also write the pstats file here")
    ap.add_argument("--spin-ms", type=float, default=None, help="pace by sleeping and yield-spinning this many ms before each deadline (0: plain sleep) instead of a kernel timer")
    args = ap.parse_args()
    if args.spin_ms is not None:
        PacedInput.spin_s, PacedInput.precise = args.spin_ms / 1000.0, False
    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    bench = load_benchmark(args.bench)
    sim_proc = await SimProcess(str(bench.root)).__aenter__()
    tasks: list[asyncio.Task] = []
    inputs: list = []
    try:
        cfg = RunSettings(model="sim", base_url=sim_proc.base_url, speed=1.0, turns=parse_turns(args.turns) if args.turns else None)
        buses = [EventBus() for _ in range(args.sessions)]
        subs = [b.subscribe() for b in buses]  # a subscriber, as the store or the UI would be
        tasks = [asyncio.create_task(run_benchmark(bench, cfg, b, on_session=lambda s: inputs.append(s.input)))
                 for b in buses]
        await asyncio.sleep(0 if args.turns else args.warmup)
        for s in subs:
            s.drain()
        prof = cProfile.Profile(time.thread_time) if args.profile else None  # CPU time: waits are not work
        load0 = os.getloadavg()[0]
        wall0, cpu0, main0, sim0 = time.monotonic(), time.process_time(), time.thread_time(), process_cpu_s(sim_proc.pid)
        sys0 = os.times().system
        n0 = sum(i.chunks_sent for i in inputs)
        pauses = GcPauses()
        gc.callbacks.append(pauses)
        stalls = LoopStalls(args.stall_ms) if args.stalls else None
        if stalls:
            stalls.__enter__()
        if prof:
            prof.enable()
        # drain the subscribers as the store would, once a wake-up
        end = wall0 + args.seconds
        events = 0
        while not all(t.done() for t in tasks) if args.turns else time.monotonic() < end:
            await asyncio.sleep(0.05)
            events += sum(len(s.drain()) for s in subs)
        if prof:
            prof.disable()
        gc.callbacks.remove(pauses)
        if stalls:
            stalls.__exit__()
        wall = time.monotonic() - wall0
        cpu, main_cpu = time.process_time() - cpu0, time.thread_time() - main0
        sys_cpu = os.times().system - sys0
        sim = process_cpu_s(sim_proc.pid) - sim0
        chunks = sum(i.chunks_sent for i in inputs) - n0
        audio_s = chunks * cfg.chunk_ms / 1000.0  # input audio sent, all sessions
        late = sorted(x for i in inputs for x in list(i.lateness_ms)[-int(args.seconds * 50):])
        failed = [t for t in tasks if t.done() and (t.cancelled() or t.exception())] if args.turns else [t for t in tasks if t.done()]
        per = 1000.0 * cpu / audio_s
        print(f"machine: {os.cpu_count()} CPUs, load {load0:.2f} → {os.getloadavg()[0]:.2f}; {bench.name}; "
              f"{args.sessions} session(s) at 1x, " + (f"turns {args.turns}, {wall:.1f} s" if args.turns else f"{wall:.1f} s window")
              + (" (cProfile on)" if prof else ""))
        print(f"  engine process: {cpu * 1000:.0f} ms CPU ({main_cpu * 1000:.0f} ms main thread) for {audio_s:.1f} s of "
              f"audio: {per:.1f} ms CPU per audio second per session = {per / 10:.2f} % of a core per 1x session "
              f"(main thread {1000.0 * main_cpu / audio_s:.1f} ms/s, in the kernel {1000.0 * sys_cpu / audio_s:.1f} ms/s)")
        print(f"  simulator process: {1000.0 * sim / audio_s:.1f} ms CPU per audio second per session")
        print(f"  events published: {events / audio_s:.1f} per audio second per session")
        print(f"  garbage collection in the window: {pauses.report()}")
        if late:
            p99 = late[min(len(late) - 1, int(0.99 * len(late)))]
            print(f"  input pacing: p50 {late[len(late) // 2]:.3f} ms, p99 {p99:.3f} ms late")
        if failed:
            print(f"  {len(failed)} run(s) " + ("failed" if args.turns else "ended inside the window (the window outlived the benchmark?)"))
        if stalls:
            print(stalls.report(args.top))
        if prof:
            report_profile(prof, args.top, audio_s)
            if args.dump:
                prof.dump_stats(args.dump)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await sim_proc.stop()


if __name__ == "__main__":
    asyncio.run(main())
