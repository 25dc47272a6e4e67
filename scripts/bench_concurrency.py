"""How many concurrent 1x sessions this machine holds, and what a session's CPU costs.

Not a test: prints a table. Each session is the real engine against its own simulator at 1x
(so the simulator's truth is at hand), a few turns each. Where the simulators run (`--sim`):
  - process (default): where a real provider would be, apart from the engine: `--sim-procs`
    processes (each serving its share of the sessions, as a provider host serves many) at
    `--sim-nice` (default 19, the lowest priority: a real provider takes none of this machine's
    CPU), below the engine's, so the figures are the engine's;
  - host: all in this coordinator process, as one remote provider host would serve them;
  - worker: each inside its session's worker process (the workers' load doubles).
How they time their replies (`--timing`): real (default: the fakes' envelope of a real service,
each simulator drawing its own: streamed at 0.25x in 0.3-1 s bursts, first audio 0.5-1.4 s,
sometimes 3-10 s), or instant (all of a reply's audio at once, 300 ms after the user, every
session's reply at the same moment: the worst case, every burst at once on the cores the engine
paces on).
Rows: `--ns` sessions on an otherwise idle machine, then `--hog-ns` sessions beside `--hogs`
processes spinning on the CPU at the engine's priority (another program busy, as on a laptop).
  - local executor: worker processes (default: as many as a campaign of N sessions gets),
    sessions spread least-loaded; every event crosses to this coordinator process in batches,
    as a campaign's would;
  - one process: the N sessions on this process's event loop.
Columns: input pacing error (wall ms late against the ideal 20 ms schedule, all chunks of all
sessions, as scripts/bench_pacing.py measures it), latency error (our timeline's audible bot
speech onset − the simulator's truth, as scripts/bench_latency_error.py measures it: the truth is
the simulator's audio clock, which itself lags when the simulators are short of CPU), the same
onset against when the simulator's first audio actually left it (the machine's monotonic clock:
the engine's error alone), and the engine's CPU seconds per session-minute (its workers' and this
coordinator's CPU over whole runs, start-up included, per minute of each session's wall time; of
it, `coord`: the coordinator taking every event the workers batch to it; with --sim process the
simulators' apart, `sim`).
Goal: pacing p99 < 2 ms and onset vs when sent p95 <= 10 ms (48 sessions on a quiet 2-core
machine, 32 beside one CPU hog).

    .venv/bin/python -m scripts.bench_concurrency [--ns 48] [--hog-ns 32] [--hogs 1] [--turns 0-1]
        [--sim process|host|worker] [--timing real|instant] [--modes local,one]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

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
from scripts.bench_hogs import cpu_hogs
from scripts.bench_latency_error import ONSET_VS_SENT, latency_errors
from runners.fakes.timing import ENVELOPE
from runners.simulator.records import TurnTruth
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


async def with_executor(snap, config: RunSettings, n: int, workers: int, hosted: list | None,
                        stop_hosted) -> tuple[list[dict], int, float]:
    """N runs on the local executor; `hosted`: one simulator per run, started already (None: each
    run's own, inside its worker), `stop_hosted()` stops them (their truth logs complete then).
    Also: the CPU seconds the workers used (reaped when the pool closes)."""
    bus = EventBus()
    sub = bus.subscribe(lambda e: isinstance(e, (SessionOpened, TurnEnded)))
    results: list[dict] = []
    lost: list[str] = []
    sims: dict[str, Any] = {}  # a SimulatorServer or a SimHosts server: base_url, truth_log

    finished: dict[str, dict] = {}

    def done(job: Job, outcome: JobOutcome) -> None:
        if outcome.status == "finished":
            finished[job.run_id] = outcome.result
        else:
            lost.append(f"{job.run_id}: {outcome.message}")

    pool = LocalExecutor(bus, on_lost=lambda job, why: lost.append(why), on_done=done,
                         workers=workers, per_worker=max(1, math.ceil(n / workers)), runner=RUNNER,
                         warm=(config.model,))
    children0 = os.times()
    async with pool:
        for i in range(n):
            run_id = uuid.uuid4().hex
            job_config = config
            if hosted is not None:
                sims[run_id] = hosted[i]
                job_config = config.aimed(base_url=hosted[i].base_url)
            pool.submit(Job(run_id, snap, job_config))
        await pool.join()
    children1 = os.times()
    workers_cpu = (children1.children_user - children0.children_user) + (children1.children_system - children0.children_system)
    await stop_hosted()
    events = sub.drain()
    for run_id, result in finished.items():
        if run_id in sims:
            mine = [e for e in events if e.run_id == run_id]
            errors = latency_errors(mine, sims[run_id].truth_log, config.chunk_ms, result["t0"])
            result["latency_errors"], result["sent_errors"] = errors[FIGURE], errors[ONSET_VS_SENT]
        results.append(result)
    for why in lost:
        print(f"   lost/failed: {why}", file=sys.stderr)
    return results, len(lost), workers_cpu


class SimHosts:
    """`procs` simulator processes serving `n` sessions between them (`--sim process`), at `nice`:
    `servers[i]` has `base_url`, and `truth_log` once `stop()` has run; `cpu_s` their CPU then."""

    def __init__(self, bench: str, n: int, procs: int, timing: str, nice: int) -> None:
        self.bench, self.n, self.procs, self.timing, self.nice = bench, n, max(1, min(procs, n)), timing, nice
        self.servers: list[SimpleNamespace] = []
        self.cpu_s = 0.0
        self._tmp = tempfile.TemporaryDirectory()
        self._procs: list[tuple[subprocess.Popen[str], list[SimpleNamespace], Path]] = []

    async def __aenter__(self) -> SimHosts:
        first = 0
        for k in range(self.procs):
            count = self.n // self.procs + (1 if k < self.n % self.procs else 0)
            out = Path(self._tmp.name) / str(k)
            out.mkdir()
            proc = subprocess.Popen([sys.executable, "-m", "scripts.bench_concurrency", "--serve-sims", str(count),
                                     "--bench", self.bench, "--timing", self.timing, "--seed", str(first), "--sim-nice", str(self.nice),
                                     "--truth-dir", str(out)], stdout=subprocess.PIPE, text=True,
                                    cwd=str(Path(__file__).resolve().parents[1]))
            mine = []
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("READY"):
                    break
                mine.append(SimpleNamespace(base_url=line.split()[-1], truth_log=[]))
            if len(mine) != count:
                raise RuntimeError(f"simulator host {k} exited {proc.poll()} after {len(mine)}/{count} simulators")
            self._procs.append((proc, mine, out))
            self.servers.extend(mine)
            first += count
        return self

    async def stop(self) -> None:
        t0 = os.times()
        for proc, _mine, _out in self._procs:
            proc.send_signal(signal.SIGTERM)
        for proc, mine, out in self._procs:
            await asyncio.to_thread(proc.wait, 60)
            for i, server in enumerate(mine):
                path = out / f"{i}.jsonl"
                server.truth_log = [TurnTruth.model_validate_json(x) for x in path.read_text().splitlines() if x]
        self._procs.clear()
        t1 = os.times()
        self.cpu_s = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)

    async def __aexit__(self, *exc: object) -> None:
        for proc, _mine, _out in self._procs:
            proc.kill()
            proc.wait()
        self._tmp.cleanup()


async def serve_simulators(args: argparse.Namespace) -> None:
    """This process as one simulator host (`SimHosts`): `--serve-sims` simulators, each drawing its
    own reply timing; prints `SIM i URL` lines then READY; on SIGTERM writes each truth log."""
    os.nice(args.sim_nice)
    bench = open_benchmark(args.bench)
    for i in range(len(bench.turns)):  # the voices made first: a simulator holds its input while it synthesizes
        voice.synthesize(voice.reply_text(bench, i), voice.resolve_voice("auto"))
    servers = [SimulatorServer(bench, timing=ENVELOPE.replace(seed=args.seed + i) if args.timing == "real" else None)
               for i in range(args.serve_sims)]
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    for i, server in enumerate(servers):
        print(f"SIM {i} {await server.start()}", flush=True)
    print("READY", flush=True)
    await stop.wait()
    for i, server in enumerate(servers):
        await server.stop()
        (Path(args.truth_dir) / f"{i}.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in server.truth_log))


async def in_process(bench, config: RunSettings, n: int) -> tuple[list[dict], int]:
    out = await asyncio.gather(*[measured_run(bench, config, EventBus(), uuid.uuid4().hex) for _ in range(n)],
                               return_exceptions=True)
    return [r for r in out if isinstance(r, dict)], sum(1 for r in out if not isinstance(r, dict))


def row(mode: str, n: int, hogs: int, results: list[dict], failed: int, wall: float, cpu_s: tuple[float, float],
        sim_cpu_s: float | None) -> str:
    """`cpu_s`: (the workers', this coordinator's) CPU seconds; `sim_cpu_s`: the simulator processes'."""
    late = np.asarray([x for r in results for x in r["lateness"]])
    err = np.abs([x for r in results for x in r["latency_errors"]])
    sent = np.abs([x for r in results for x in r.get("sent_errors", [])])
    pace = (f"{np.percentile(late, 50):6.2f} {np.percentile(late, 99):7.2f} {late.max():8.2f}" if late.size
            else f"{'-':>6} {'-':>7} {'-':>8}")
    lat = f"{np.percentile(err, 95):7.2f} {err.max():8.2f}" if err.size else f"{'-':>7} {'-':>8}"
    lat_sent = f"{np.percentile(sent, 95):7.2f} {sent.max():8.2f}" if sent.size else f"{'-':>7} {'-':>8}"
    # the goal is the engine's: its pacing, and its onset against when the provider's audio left
    judged = sent if sent.size else err
    ok = "yes" if late.size and judged.size and np.percentile(late, 99) < 2.0 and np.percentile(judged, 95) <= 10.0 and not failed else "no"
    session_min = n * wall / 60.0 if n and wall else float("inf")
    workers, coordinator = (x / session_min for x in cpu_s)
    sim = f"{sim_cpu_s / session_min:5.2f}" if sim_cpu_s is not None else f"{'-':>5}"
    return (f"{mode:12} {n:3} {hogs:4} {len(results):4} {failed:4} | {pace} | {err.size:4} {lat} | {lat_sent} | "
            f"{workers + coordinator:6.2f} {coordinator:5.2f} {sim} | {wall:6.1f} {os.getloadavg()[0]:5.2f} | {ok}")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="demo_bench")
    ap.add_argument("--turns", default="0-1")
    ap.add_argument("--ns", default="48", help="session counts on an otherwise idle machine")
    ap.add_argument("--hog-ns", default="32", help="session counts beside --hogs CPU hogs ('' for none)")
    ap.add_argument("--hogs", type=int, default=1, help="processes spinning on the CPU beside the --hog-ns rows")
    ap.add_argument("--workers", type=int, default=None,
                    help="worker processes (default: what a campaign of N sessions at 1x gets, CampaignSpec.local_workers)")
    ap.add_argument("--modes", default="local", help="local (executor), one (one process)")
    ap.add_argument("--sim", choices=["host", "process", "worker"], default="process",
                    help="where each session's simulator runs: processes of their own at --sim-nice (default), this "
                         "coordinator, its session's worker")
    ap.add_argument("--sim-nice", type=int, default=19, help="with --sim process: their CPU priority (nice)")
    ap.add_argument("--sim-procs", type=int, default=os.cpu_count() or 1, help="with --sim process: how many")
    ap.add_argument("--timing", choices=["instant", "real"], default="real",
                    help="the simulators' reply timing: the fakes' real envelope (default: runners/fakes/timing.py, "
                         "streamed at 0.25x in 0.3-1 s bursts), or all audio at once 300 ms after the user")
    ap.add_argument("--serve-sims", type=int, default=None, help=argparse.SUPPRESS)  # this process as a SimHosts process
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--truth-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    from loguru import logger

    logger.remove()
    if args.serve_sims is not None:
        await serve_simulators(args)
        return
    logger.add(sys.stderr, level="CRITICAL")
    # each hosted simulator draws its own replies' timing (a seed of its own), as a provider's sessions differ
    timings = (ENVELOPE.replace(seed=i) if args.timing == "real" else None for i in itertools.count())
    bench = open_benchmark(args.bench)
    snap = snapshot(bench)
    config = build_settings("sim", speed=1.0, turns=args.turns, greeting=False)
    # the hosted simulators' reply voices, made before the clock starts: a provider speaks on its
    # own machines, and a simulator holds its input while it synthesizes (its audio clock stops;
    # the first reply's espeak-ng took 120-300 ms), which the latency error would count as ours
    for i in config.turns or range(len(bench.turns)):
        voice.synthesize(voice.reply_text(bench, i), voice.resolve_voice("auto"))
    # this process takes the campaign's events (and may host the simulators), and paces like a
    # worker: a full GC pass over its ~300k objects (85 ms measured) would hold every hosted
    # simulator's reply, which the latency error would then count as ours
    settle_heaps_here()
    settle_heap("bench loaded")
    print(f"{bench.name} turns {args.turns}, 1x, {os.cpu_count()} CPUs, "
          f"{args.workers or 'as a campaign gets'} workers, simulators: {args.sim}"
          f"{f' ({args.sim_procs} processes, nice {args.sim_nice})' if args.sim == 'process' else ''}, timing {args.timing}, "
          f"load {os.getloadavg()[0]:.2f} at start; latency error = |{FIGURE} − simulator truth|; "
          f"CPU s per session-minute: the engine's (workers + this coordinator, of it the coordinator's: events in, batched), the simulators' apart")
    print(f"{'':26} | pacing late (ms)       | latency error (ms)  | vs when sent (ms) | CPU s/session-min  |")
    print(f"{'mode':12} {'N':>3} {'hogs':>4} {'ok':>4} {'fail':>4} | {'p50':>6} {'p99':>7} {'max':>8} | "
          f"{'n':>4} {'p95':>7} {'max':>8} | {'p95':>7} {'max':>8} | {'engine':>6} {'coord':>5} {'sim':>5} | {'wall s':>6} {'load':>5} | goal")
    cases = [(int(x), 0) for x in args.ns.split(",") if x] + [(int(x), args.hogs) for x in args.hog_ns.split(",") if x]
    for n, hogs in cases:
        for mode in args.modes.split(","):
            with cpu_hogs(hogs):
                t0, cpu0 = time.monotonic(), time.process_time()
                sim_cpu: float | None = None
                if mode == "local":
                    workers = args.workers or CampaignSpec(benchmarks=(bench.name,), models=("sim",), repeats=n).local_workers
                    if args.sim == "process":
                        async with SimHosts(args.bench, n, args.sim_procs, args.timing, args.sim_nice) as hosts:
                            t0, cpu0 = time.monotonic(), time.process_time()
                            results, failed, workers_cpu = await with_executor(snap, config, n, workers, hosts.servers, hosts.stop)
                        sim_cpu = hosts.cpu_s
                    else:
                        async with contextlib.AsyncExitStack() as stack:
                            hosted = ([await stack.enter_async_context(SimulatorServer(bench, timing=next(timings))) for _ in range(n)]
                                      if args.sim == "host" else None)

                            async def stop_hosted() -> None:
                                for sim in hosted or []:
                                    await sim.stop()  # its truth log is complete

                            results, failed, workers_cpu = await with_executor(snap, config, n, workers, hosted, stop_hosted)
                else:
                    results, failed = await in_process(bench, config, n)
                    workers_cpu = 0.0
                wall = time.monotonic() - t0
                cpu = (workers_cpu, time.process_time() - cpu0)
            label = f"executor ×{workers}" if mode == "local" else "one process"
            print(row(label, n, hogs, results, failed, wall, cpu, sim_cpu), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
