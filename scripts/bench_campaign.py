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

`--startup` measures start-up instead, as `campaign run` meets it: seconds from the campaign's
start to its first run's `run_started` and to the last run's, and the whole wall time, for the
local executor, Ray without an address (a cluster of its own, as the CLI starts it) and Ray
reusing a cluster `ray start --head` started beforehand on 127.0.0.1 (found through Ray's
`ray_current_cluster`; its own start not counted). Ray's start-up breakdown (`startup_report`)
is printed under the table. Run it from another checkout's PYTHONPATH to measure that code.

    .venv/bin/python -m scripts.bench_campaign [--speed 20] [--repeats 2] [--concurrency N] [--skip ray]
    .venv/bin/python -m scripts.bench_campaign --startup [--skip ray-reuse]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from arena_tui.campaign import records
from arena_tui.orchestration.orchestrator import run_campaign
from arena_tui.orchestration.ray_cluster import LOCAL_IP, import_ray
from arena_tui.campaign.spec import build_spec
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import RunStarted
from arena_tui.store import Store
from benchmarks.registry import open_benchmark

MODELS = ("sim", "gpt-realtime", "grok-realtime", "gemini-native-audio")


def spec_for(args: argparse.Namespace, executor: str, ray_address: str | None = None):
    return build_spec({}, {"benchmarks": "demo_bench", "models": ",".join(MODELS), "repeats": args.repeats,
                           "speed": args.speed, "fake": True, "judge": "none", "executor": executor,
                           "ray_address": ray_address, "concurrency": args.concurrency, "turns": args.turns})


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
            await run_benchmark(bench, spec.run_settings(model), bus, run_id)

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


async def startup(args: argparse.Namespace, db: Path, executor: str) -> tuple[float, float, float, int, int, str]:
    """(first run_started s, last run_started s, wall s, complete, cells, the executor's start-up report)."""
    spec = spec_for(args, executor)
    store = await Store.open(db)
    bus = EventBus()
    rec = store.start_recording(bus)
    seen: list[float] = []
    reports: list[str] = []
    sub = bus.subscribe(lambda e: isinstance(e, RunStarted))

    async def note() -> None:
        async for _ in sub:
            seen.append(time.monotonic())

    watcher = asyncio.create_task(note())

    def on_executor(ex) -> None:
        report = getattr(ex, "startup_report", None)
        if report is not None:
            reports.append(report())

    t0 = time.monotonic()
    result = await run_campaign(store, bus, spec, notice=lambda line: None, on_executor=on_executor)
    wall = time.monotonic() - t0
    cells = await records.cells(store, result.campaign_id)
    done, _ = await tally(store, [c.run_id for c in cells if c.run_id])
    bus.close()
    await rec
    await watcher
    await store.close()
    first, last = (seen[0] - t0, seen[-1] - t0) if seen else (0.0, 0.0)
    return first, last, wall, done, len(cells), reports[0] if reports else "(no report)"


def ray_start_head(tmp: Path) -> tuple[subprocess.Popen, str]:
    """`ray start --head --block` on 127.0.0.1 under TMPDIR=tmp; (the process, its address)."""
    env = {**os.environ, "TMPDIR": str(tmp), "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    head = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                             "--node-ip-address", LOCAL_IP, "--port", "0", "--include-dashboard", "false",
                             "--disable-usage-stats"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address_file = tmp / "ray" / "ray_current_cluster"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and head.poll() is None:
        if address_file.is_file() and (address := address_file.read_text().strip()):
            try:
                socket.create_connection((LOCAL_IP, int(address.rpartition(":")[2])), timeout=1).close()
                return head, address
            except OSError:
                pass
        time.sleep(0.2)
    head.kill()
    raise SystemExit("ray start --head did not come up")


def startup_main(args: argparse.Namespace, skip: set[str], work: Path) -> int:
    """One campaign per way, each in a fresh TMPDIR (Ray's folder follows it); prints the table."""
    rows, reports = [], []

    def fresh_tmp(name: str) -> Path:
        tmp = Path(tempfile.mkdtemp(prefix=name, dir="/tmp"))  # short: Ray's socket paths
        os.environ["TMPDIR"] = str(tmp)
        tempfile.tempdir = None
        return tmp

    saved = os.environ.get("TMPDIR")
    with contextlib.suppress(ImportError):  # (a checkout before the Ray log routing has no log_to)
        from arena_tui.orchestration.ray_logs import log_to

        log_to(work / "arena-tui.log")  # Ray's log lines: not the user's data folder
    try:
        if "local" not in skip:
            rows.append(("local executor", *asyncio.run(startup(args, work / "local.db", "local"))[:5]))
        if "ray" not in skip:
            tmp = fresh_tmp("rbo")
            *row, report = asyncio.run(startup(args, work / "ray.db", "ray"))
            rows.append(("ray, own cluster", *row))
            reports.append(("ray, own cluster", report))
            left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if "ray" in str(p.relative_to(tmp)))
            reports.append(("  Ray's and ours left in TMPDIR", ", ".join(left) or "nothing"))
            shutil.rmtree(tmp, ignore_errors=True)
        if "ray-reuse" not in skip:
            tmp = fresh_tmp("rbr")
            head, address = ray_start_head(tmp)
            try:
                *row, report = asyncio.run(startup(args, work / "reuse.db", "ray"))
                rows.append(("ray, ray start", *row))
                reports.append(("ray, ray start", report))
            finally:
                head.terminate()
                head.wait(60)
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if saved is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved
        tempfile.tempdir = None
    print(f"start-up: demo_bench × {len(MODELS)} models × {args.repeats} repeats at speed {args.speed:g} "
          "(wall clock from the campaign's start)")
    print(f"{'how':<18} {'1st run s':>9} {'last run s':>10} {'wall s':>8} {'complete':>9}")
    for how, first, last, wall, done, total in rows:
        print(f"{how:<18} {first:>9.1f} {last:>10.1f} {wall:>8.1f} {done:>4}/{total:<4}")
    for how, report in reports:
        print(f"{how}: {report}")
    return 0 if all(row[4] == row[5] for row in rows) else 1


def ray_cluster():
    """Two Ray nodes on 127.0.0.1 and the folder everything Ray writes goes under: `cluster_utils`
    also records the head's address in Ray's default folder ($RAY_TMPDIR/ray), which a fresh TMPDIR
    does not have (FileNotFoundError) and another Ray user's /tmp/ray owns; it is pointed inside."""
    import_ray(local=True)
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths
    os.environ["RAY_TMPDIR"] = temp
    try:
        cluster = Cluster(initialize_head=True, head_node_args={
            "node_ip_address": LOCAL_IP, "num_cpus": 1, "include_dashboard": False, "temp_dir": os.path.join(temp, "ray")})
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    try:
        cluster.add_node(node_ip_address=LOCAL_IP, num_cpus=1)
    except BaseException:
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return cluster, temp


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--speed", type=float, default=20.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=None, help="sessions per worker (default: from the speed)")
    ap.add_argument("--skip", default="", help="comma-separated: one,local,ray (--startup: local,ray,ray-reuse)")
    ap.add_argument("--turns", default=None, help="turn subset, e.g. 0-1 (default: all)")
    ap.add_argument("--startup", action="store_true", help="measure start-up (see the module docstring)")
    args = ap.parse_args()
    from loguru import logger  # Pipecat's debug lines would cost the runs CPU and bury the table

    logger.remove()
    skip = set(filter(None, args.skip.split(",")))
    work = Path(tempfile.mkdtemp(prefix="bench-campaign-"))
    if args.startup:
        try:
            return startup_main(args, skip, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
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
