"""How many concurrent 1x sessions this machine holds: local executor vs one process.

Not a test: prints a table. Each session is the real engine against its own simulator at 1x
(so the simulator's truth is at hand), a few turns each. Where the simulators run (`--sim`):
  - host (default): all in this coordinator process, as one remote provider host would serve them;
  - process: each as its own `arena-tui simulate` process (below the engine's CPU priority),
    all started before the runs;
  - worker: each inside its session's worker process (the workers' load doubles).
How they time their replies (`--timing`): instant (default: all of a reply's audio at once, 300 ms
after the user, every session's reply at the same moment: the worst case, 16 bursts at once on the
cores the engine paces on), or real (the fakes' envelope of a real service, each simulator drawing
its own: streamed at 0.25x in 0.3-1 s bursts, first audio 0.5-1.4 s, sometimes 3-10 s).
For N sessions:
  - local executor: worker processes (default: one per core), sessions spread least-loaded;
    every event crosses to this coordinator process in batches, as a campaign's would;
  - one process: the N sessions on this process's event loop (today's way).
Columns: input pacing error (wall ms late against the ideal 20 ms schedule, all chunks of all
sessions, as scripts/bench_pacing.py measures it), latency error (our timeline's audible bot
speech onset − the simulator's truth, as scripts/bench_latency_error.py measures it: the truth is
the simulator's audio clock, which itself lags when the simulators are short of CPU), and the same
onset against when the simulator's first audio actually left it (the machine's monotonic clock:
our engine's error alone).
Goal: >= 16 sessions at pacing p99 < 2 ms and latency error p95 <= 10 ms.

    .venv/bin/python -m scripts.bench_concurrency [--ns 1,2,4,8,12,16,20,24] [--turns 0-1] [--timing real]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import sys
import time
import uuid

import numpy as np

from arena_tui.spine.bus import EventBus
from arena_tui.orchestration.executor import Job, JobOutcome
from arena_tui.orchestration.local import LocalExecutor
from arena_tui.campaign.snapshot import snapshot
from arena_tui.campaign.spec import CampaignSpec
from arena_tui.spine.events import SessionOpened, TurnEnded
from arena_tui.spine.heap import settle_heap, settle_heaps_here
from benchmarks.registry import open_benchmark
from arena_tui.spine.settings import RunSettings, build_settings
from scripts.bench_latency_error import ONSET_VS_SENT, latency_errors
from scripts.bench_pacing import SimProcess
from runners.fakes.timing import ENVELOPE
from runners.simulator import SimulatorServer, voice

RUNNER = "scripts.bench_concurrency:measured_run"
FIGURE = "audible bot speech onset"


async def measured_run(benchmark, config: RunSettings, bus: EventBus, run_id: str) -> dict:
    """One session against its own simulator; returns its pacing lateness and latency errors."""
    from runners.engine import run_benchmark

    inputs: list = []
    t0: list[float] = []

    def opened(s) -> None:
        inputs.append(s.input)
        t0.append(s.run.clock.t0)  # where the run's timeline starts on this machine's monotonic clock

    if config.base_url:  # a simulator the coordinator hosts: it works out the latency errors
        await run_benchmark(benchmark, config, bus, run_id, on_session=opened)
        return {"lateness": [x for i in inputs for x in i.lateness_ms], "latency_errors": [], "sent_errors": [],
                "t0": t0[0] if t0 else None}
    sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)))
    async with own_simulator(benchmark) as (url, truth):
        cfg = config.model_copy(update={"base_url": url})
        await run_benchmark(benchmark, cfg, bus, run_id, on_session=opened)
    errors = latency_errors(sub.drain(), truth, cfg.chunk_ms, t0[0] if t0 else None)
    return {"lateness": [x for i in inputs for x in i.lateness_ms], "latency_errors": errors[FIGURE],
            "sent_errors": errors.get(ONSET_VS_SENT, [])}


@contextlib.asynccontextmanager
async def own_simulator(benchmark):
    """(url, truth log filled in when it stops), in this process."""
    truth: list = []
    async with SimulatorServer(benchmark) as sim:
        yield sim.base_url, truth
        truth.extend(sim.truth_log)


async def with_executor(snap, config: RunSettings, n: int, workers: int, hosted: list | None) -> tuple[list[dict], int]:
    """N runs on the local executor; `hosted`: one simulator per run, started already (None: each
    run's own, inside its worker)."""
    bus = EventBus()
    sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)))
    results: list[dict] = []
    lost: list[str] = []
    sims: dict[str, object] = {}

    finished: dict[str, dict] = {}

    def done(job: Job, outcome: JobOutcome) -> None:
        if outcome.status == "finished":
            finished[job.run_id] = outcome.result
        else:
            lost.append(f"{job.run_id}: {outcome.message}")

    pool = LocalExecutor(bus, on_lost=lambda job, why: lost.append(why), on_done=done,
                         workers=workers, per_worker=max(1, math.ceil(n / workers)), runner=RUNNER,
                         warm=(config.model,))
    async with pool:
        for i in range(n):
            run_id = uuid.uuid4().hex
            job_config = config
            if hosted is not None:
                sims[run_id] = hosted[i]
                job_config = config.aimed(base_url=hosted[i].base_url)
            pool.submit(Job(run_id, snap, job_config))
        await pool.join()
    for sim in sims.values():
        await sim.stop()  # its truth log is complete
    events = sub.drain()
    for run_id, result in finished.items():
        if run_id in sims:
            mine = [e for e in events if e.run_id == run_id]
            errors = latency_errors(mine, sims[run_id].truth_log, config.chunk_ms, result["t0"])
            result["latency_errors"], result["sent_errors"] = errors[FIGURE], errors[ONSET_VS_SENT]
        results.append(result)
    for why in lost:
        print(f"   lost/failed: {why}", file=sys.stderr)
    return results, len(lost)


async def in_process(bench, config: RunSettings, n: int) -> tuple[list[dict], int]:
    out = await asyncio.gather(*[measured_run(bench, config, EventBus(), uuid.uuid4().hex) for _ in range(n)],
                               return_exceptions=True)
    return [r for r in out if isinstance(r, dict)], sum(1 for r in out if not isinstance(r, dict))


def row(mode: str, n: int, results: list[dict], failed: int, wall: float) -> str:
    late = np.asarray([x for r in results for x in r["lateness"]])
    err = np.abs([x for r in results for x in r["latency_errors"]])
    sent = np.abs([x for r in results for x in r.get("sent_errors", [])])
    pace = (f"{np.percentile(late, 50):6.2f} {np.percentile(late, 99):7.2f} {late.max():8.2f}" if late.size
            else f"{'-':>6} {'-':>7} {'-':>8}")
    lat = f"{np.percentile(err, 95):7.2f} {err.max():8.2f}" if err.size else f"{'-':>7} {'-':>8}"
    lat_sent = f"{np.percentile(sent, 95):7.2f} {sent.max():8.2f}" if sent.size else f"{'-':>7} {'-':>8}"
    ok = "yes" if late.size and err.size and np.percentile(late, 99) < 2.0 and np.percentile(err, 95) <= 10.0 and not failed else "no"
    return (f"{mode:12} {n:3} {len(results):4} {failed:4} | {pace} | {err.size:4} {lat} | {lat_sent} | "
            f"{wall:6.1f} {os.getloadavg()[0]:5.2f} | {ok}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="demo_bench")
    ap.add_argument("--turns", default="0-1")
    ap.add_argument("--ns", default="1,2,4,8,12,16,20,24")
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes (default: what a campaign of N sessions at 1x gets, CampaignSpec.local_workers)")
    ap.add_argument("--modes", default="local,one", help="local (executor), one (one process)")
    ap.add_argument("--sim", choices=["host", "process", "worker"], default="host",
                    help="where each session's simulator runs: this coordinator (default), its own process, its session's worker")
    ap.add_argument("--timing", choices=["instant", "real"], default="instant",
                    help="the hosted simulators' reply timing: all audio at once 300 ms after the user (default), or "
                         "the fakes' real envelope (runners/fakes/timing.py: streamed at 0.25x in 0.3-1 s bursts)")
    args = ap.parse_args()
    if args.timing != "instant" and args.sim != "host":
        ap.error("--timing real needs --sim host")
    # each simulator draws its own replies' timing (a seed of its own), as a provider's sessions differ
    timings = (ENVELOPE.replace(seed=i) if args.timing == "real" else None for i in itertools.count())
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="CRITICAL")
    bench = open_benchmark(args.bench)
    snap = snapshot(bench)
    config = build_settings("sim", speed=1.0, turns=args.turns, greeting=False)
    # the hosted simulators' reply voices, made before the clock starts: a provider speaks on its
    # own machines, and a simulator holds its input while it synthesizes (its audio clock stops;
    # the first reply's espeak-ng took 120-300 ms), which the latency error would count as ours
    for i in config.turns or range(len(bench.turns)):
        voice.synthesize(voice.reply_text(bench, i), voice.resolve_voice("auto"))
    # this process hosts the simulators (a provider host) and takes the campaign's events, and
    # paces like a worker: a full GC pass over its ~300k objects (85 ms measured) would hold every
    # hosted simulator's reply, which the latency error would then count as ours
    settle_heaps_here()
    settle_heap("bench loaded")
    print(f"{bench.name} turns {args.turns}, 1x, {os.cpu_count()} CPUs, "
          f"{args.workers or 'as a campaign gets'} workers, simulators: {args.sim}, timing {args.timing}, "
          f"load {os.getloadavg()[0]:.2f} at start; latency error = |{FIGURE} − simulator truth|")
    print(f"{'':21} | pacing late (ms)       | latency error (ms)  | vs when sent (ms) |")
    print(f"{'mode':12} {'N':>3} {'ok':>4} {'fail':>4} | {'p50':>6} {'p99':>7} {'max':>8} | "
          f"{'n':>4} {'p95':>7} {'max':>8} | {'p95':>7} {'max':>8} | {'wall s':>6} {'load':>5} | goal")
    for n in [int(x) for x in args.ns.split(",")]:
        for mode in args.modes.split(","):
            t0 = time.monotonic()
            if mode == "local":
                workers = args.workers or CampaignSpec(benchmarks=(bench.name,), models=("sim",), repeats=n).local_workers
                async with contextlib.AsyncExitStack() as stack:
                    make = {"host": lambda: SimulatorServer(bench, timing=next(timings)), "process": lambda: SimProcess(str(bench.root))}
                    hosted = ([await stack.enter_async_context(make[args.sim]()) for _ in range(n)]
                              if args.sim in make else None)
                    results, failed = await with_executor(snap, config, n, workers, hosted)
            else:
                results, failed = await in_process(bench, config, n)
            label = f"executor ×{workers}" if mode == "local" else "one process"
            print(row(label, n, results, failed, time.monotonic() - t0),
                  flush=True)


if __name__ == "__main__":
    asyncio.run(main())
