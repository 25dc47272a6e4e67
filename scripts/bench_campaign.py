"""Campaign throughput: the same matrix in one process, on the local executor, and on Ray.

Not a test: prints a table. The matrix is demo_bench × 4 models (the simulator and three
providers against their local protocol fakes) × 2 repeats at speed 20, every run recorded by
one real store and judged by nobody (this measures running, not judging). Three ways:
  - one process: the 8 runs as tasks on this process's event loop (`run_benchmark` each), as
    many at once as one campaign worker would hold;
  - local: `run_campaign` with the local executor (worker processes, one per core);
  - ray: `run_campaign` on a two-node Ray cluster started here on 127.0.0.1.
Columns: wall seconds for the whole matrix (start to last run ended, setup included and shown
apart), runs/s (one run = one cell), and the retries the runs needed (a process past its pace
budget turns slow replies into false no-response retries). Wall-clock only: no audio-time
figure is mixed in. `--concurrency N` sets the sessions per worker (default: the campaign's,
from the speed) to show what oversubscription does.

    .venv/bin/python -m scripts.bench_campaign [--speed 20] [--repeats 2] [--concurrency N] [--skip ray]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from arena_tui.campaign import records
from arena_tui.campaign.orchestrator import run_campaign, run_config
from arena_tui.campaign.ray_executor import LOCAL_IP, import_ray
from arena_tui.campaign.spec import build_spec
from arena_tui.spine.bus import EventBus
from arena_tui.store import Store
from benchmarks.registry import open_benchmark
from runners.config import RunConfig

MODELS = ("sim", "gpt-realtime", "grok-realtime", "gemini-native-audio")


def spec_for(args: argparse.Namespace, executor: str, ray_address: str | None = None):
    return build_spec({}, {"benchmarks": "demo_bench", "models": ",".join(MODELS), "repeats": args.repeats,
                           "speed": args.speed, "fake": True, "judge": "none", "executor": executor,
                           "ray_address": ray_address, "concurrency": args.concurrency})


async def tally(store: Store, run_ids: list[str]) -> tuple[int, int]:
    """(complete runs, retries over all their turns)."""
    done = sum([(await records.cell_state(store, r))[0] == "complete" for r in run_ids])
    retries = sum([sum(t.retries for t in await store.turn_results(r)) for r in run_ids])
    return done, retries


async def one_process(args: argparse.Namespace, db: Path) -> tuple[float, float, int, int]:
    from runners.engine import run_benchmark

    bench = open_benchmark("demo_bench")
    spec = spec_for(args, "local")
    store = await Store.open(db)
    bus = EventBus()
    rec = store.start_recording(bus)
    ids = []
    t0 = time.monotonic()
    slots = asyncio.Semaphore(spec.per_worker)

    async def one(model: str, run_id: str) -> None:
        async with slots:
            await run_benchmark(bench, RunConfig(**run_config(spec, model)), bus, run_id)

    tasks = []
    for cell in spec.cells():
        run_id = uuid.uuid4().hex
        ids.append(run_id)
        tasks.append(one(cell.model, run_id))
    await asyncio.gather(*tasks, return_exceptions=True)
    wall = time.monotonic() - t0
    await store.flush()
    done, retries = await tally(store, ids)
    bus.close()
    await rec
    await store.close()
    return 0.0, wall, done, len(ids), retries


async def campaign(args: argparse.Namespace, db: Path, executor: str, address: str | None = None) -> tuple[float, float, int, int]:
    spec = spec_for(args, executor, address)
    store = await Store.open(db)
    bus = EventBus()
    rec = store.start_recording(bus)
    started: list[float] = []
    t0 = time.monotonic()

    def notice(line: str) -> None:
        if " started" in line and not started:
            started.append(time.monotonic())

    result = await run_campaign(store, bus, spec, notice=notice)
    wall = time.monotonic() - t0
    cells = await records.cells(store, result.campaign_id)
    done, retries = await tally(store, [c.run_id for c in cells if c.run_id])
    bus.close()
    await rec
    await store.close()
    return (started[0] - t0) if started else 0.0, wall, done, len(cells), retries


def ray_cluster():
    import_ray(local=True)
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    cluster = Cluster(initialize_head=True, head_node_args={
        "node_ip_address": LOCAL_IP, "num_cpus": 1, "include_dashboard": False, "temp_dir": temp})
    cluster.add_node(node_ip_address=LOCAL_IP, num_cpus=1)
    return cluster, temp


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--speed", type=float, default=20.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=None, help="sessions per worker (default: from the speed)")
    ap.add_argument("--skip", default="", help="comma-separated: one,local,ray")
    args = ap.parse_args()
    from loguru import logger  # Pipecat's debug lines would cost the runs CPU and bury the table

    logger.remove()
    skip = set(filter(None, args.skip.split(",")))
    work = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    rows = []
    try:
        if "one" not in skip:
            rows.append(("one process", *asyncio.run(one_process(args, work / "one.db"))))
        if "local" not in skip:
            rows.append(("local executor", *asyncio.run(campaign(args, work / "local.db", "local"))))
        if "ray" not in skip:
            cluster, temp = ray_cluster()
            try:
                rows.append(("ray, 2 nodes", *asyncio.run(campaign(args, work / "ray.db", "ray", cluster.address))))
            finally:
                import ray

                if ray.is_initialized():
                    ray.shutdown()
                cluster.shutdown()
                shutil.rmtree(temp, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_worker = spec_for(args, "local").per_worker
    print(f"demo_bench × {len(MODELS)} models × {args.repeats} repeats at speed {args.speed:g}, {per_worker} "
          f"session(s) per worker (wall clock; setup = start until the first run was submitted)")
    print(f"{'how':<16} {'setup s':>8} {'wall s':>8} {'complete':>9} {'runs/s':>8} {'retries':>8}")
    for how, setup, wall, done, total, retries in rows:
        print(f"{how:<16} {setup:>8.1f} {wall:>8.1f} {done:>4}/{total:<4} {total / wall:>8.3f} {retries:>8}")
    return 0 if all(row[3] == row[4] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
