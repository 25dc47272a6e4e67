"""`--executor ray`: each run is a Ray task on any node, streaming its event batches back.

The snapshot of a benchmark is `ray.put` once and shared by all of its runs, so audio reaches
other nodes through Ray's object store, not a shared filesystem. A task is a streaming
generator: it first says where it runs (pid, node), then yields event batches (transport.py)
and finally the outcome. A lost worker or node surfaces as a Ray system error while the
coordinator iterates the stream; that job goes to `on_lost`. Tasks are never retried by Ray
(`max_retries=0`): resuming is the orchestrator's decision, and a retried run would re-record
turns.

Ray is an optional extra (`pip install 'arena-tui[ray]'`). A cluster we start ourselves binds
and advertises 127.0.0.1 only, without dashboard and usage statistics. Without an address it
is always a new one (`address="local"`): Ray's own default would first follow
`$TMPDIR/ray/ray_current_cluster` (or /tmp/ray/...) and `RAY_ADDRESS`, so a file left by an
earlier `ray start` or a killed test cluster sent the campaign to a dead address, where
`ray.init` retried for minutes.

When the coordinator dies, Ray ends its tasks itself: on a cluster we joined, the raylet kills
a dead driver's task workers (tests/test_campaign_executors.py); a cluster we started shares
the driver's fate (Ray gives its processes a parent-death signal).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import queue
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from arena_tui.spine.bus import EventBus

from .executor import DEFAULT_RUNNER, Executor, Job, JobOutcome, OnDone, OnLost
from .snapshot import BenchmarkSnapshot

LOCAL_IP = "127.0.0.1"
RUN_CPUS = 0.25  # four 1× sessions share a core; a campaign asks 1 / its sessions per worker


# Ray asks the routing table for "its" address (192.0.2.2 on a sandbox); with cluster mode off
# for IP discovery it uses 127.0.0.1 in the driver, GCS, raylets and workers (they inherit env).
# Read when Ray is first imported, so set before that.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def import_ray(local: bool = True) -> Any:
    """Ray, with usage statistics off (and loopback-only addresses when `local`).

    A clear message when the extra is not installed."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ.update(LOOPBACK_ENV)
    try:
        import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used
    except ImportError:
        raise RuntimeError("the Ray executor needs the extra: pip install 'arena-tui[ray]'") from None
    return ray


def is_local(address: str | None) -> bool:
    return address is None or address.split("//")[-1].startswith((LOCAL_IP, "localhost"))


class RayExecutor(Executor):
    def __init__(self, bus: EventBus, *, on_lost: OnLost, on_done: OnDone | None = None,
                 address: str | None = None, run_cpus: float = RUN_CPUS, runner: str = DEFAULT_RUNNER) -> None:
        super().__init__(bus, on_lost=on_lost, on_done=on_done, runner=runner)
        self.address = address
        self.run_cpus = run_cpus
        self._ray: Any = None
        self._remote: Any = None
        self._owns_ray = False
        self._refs: dict[str, Any] = {}  # snapshot key -> ObjectRef (one put per benchmark)
        self._follow: dict[str, asyncio.Task[None]] = {}
        self._where: dict[str, tuple[int, str]] = {}  # run_id -> (pid, node ip)
        self._closing = False

    async def start(self) -> None:
        ray = self._ray = import_ray(is_local(self.address))
        if not ray.is_initialized():
            kw: dict[str, Any] = {"log_to_driver": False}
            if is_local(self.address):
                kw["_node_ip_address"] = LOCAL_IP
            if self.address is None:  # start a one-node cluster here, never attach to a remembered one
                kw["include_dashboard"] = False
            await asyncio.to_thread(ray.init, address=self.address or "local", **kw)
            self._owns_ray = True
        self._remote = ray.remote(num_returns="streaming", max_retries=0)(_ray_task)

    def submit(self, job: Job) -> None:
        if self._closing or self._remote is None:
            raise RuntimeError("executor is not running")
        self._opened(job)
        ref = self._refs.get(job.snapshot.key)
        if ref is None:
            ref = self._refs[job.snapshot.key] = self._ray.put(job.snapshot)
        stream = self._remote.options(num_cpus=self.run_cpus).remote(ref, job.config, job.run_id, self.runner, job.resume)
        self._follow[job.run_id] = asyncio.create_task(self._consume(job, stream), name=f"ray-{job.run_id}")

    def worker_pid(self, run_id: str) -> int | None:
        where = self._where.get(run_id)
        return where[0] if where and run_id in self._open else None

    def node_of(self, run_id: str) -> str | None:
        where = self._where.get(run_id)
        return where[1] if where else None

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in list(self._follow.values()):
            task.cancel()
        await asyncio.gather(*self._follow.values(), return_exceptions=True)
        self._refs.clear()
        if self._owns_ray and self._ray is not None:
            await asyncio.to_thread(self._ray.shutdown)

    async def _consume(self, job: Job, stream: Any) -> None:
        ex = self._ray.exceptions
        outcome: JobOutcome | None = None
        try:
            async for ref in stream:
                item = await ref
                if item[0] == "events":
                    self._publish(item[1])
                elif item[0] == "where":
                    self._where[job.run_id] = (item[1], item[2])
                elif item[0] == "done":
                    out = item[1]
                    outcome = JobOutcome(out["status"], out["message"], out["result"])
            self._finish(job.run_id, outcome or JobOutcome("error", "the task ended without an outcome"))
        except asyncio.CancelledError:
            try:
                self._ray.cancel(stream, force=True)
            except Exception:  # noqa: BLE001 - already finished or its node is gone
                pass
            self._finish(job.run_id, JobOutcome("cancelled", "closed"))
        except ex.TaskCancelledError:
            self._finish(job.run_id, JobOutcome("cancelled", "cancelled in Ray"))
        except ex.RayTaskError as e:  # the task's own code failed (not the run: that is caught inside)
            self._finish(job.run_id, JobOutcome("error", str(e).strip().splitlines()[-1]))
        except ex.RayError as e:  # worker crashed, node died, object lost, ...
            where = self._where.get(job.run_id)
            at = f" (pid {where[0]} on {where[1]})" if where else ""
            self._finish(job.run_id, lost=f"{type(e).__name__}{at}: {_first_line(e)}")
        finally:
            self._follow.pop(job.run_id, None)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


# -- inside a Ray worker process

_SCRATCH: Path | None = None
_BENCHMARKS: dict[str, Any] = {}


def _benchmark(snap: BenchmarkSnapshot) -> Any:
    """Unpack a snapshot once per worker process (workers are reused across tasks)."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix="arena-ray-"))
        atexit.register(shutil.rmtree, _SCRATCH, True)
    if snap.key not in _BENCHMARKS:
        _BENCHMARKS[snap.key] = snap.materialize(_SCRATCH)
    return _BENCHMARKS[snap.key]


def _ray_task(snap: BenchmarkSnapshot, config: dict, run_id: str, runner_spec: str, resume: dict | None = None):
    """Streaming generator: ("where", pid, ip), then ("events", bytes)..., then ("done", outcome)."""
    import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    from .worker import execute, load_runner  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    yield ("where", os.getpid(), ray.util.get_node_ip_address())
    benchmark = _benchmark(snap)
    runner = load_runner(runner_spec)
    items: queue.SimpleQueue[tuple] = queue.SimpleQueue()

    def run() -> None:  # the run gets its own loop; this thread only hands batches to Ray
        out = asyncio.run(execute(runner, benchmark, config, run_id, lambda b: items.put(("events", b)), resume))
        items.put(("done", out))

    threading.Thread(target=run, daemon=True, name=f"run-{run_id}").start()
    while True:
        item = items.get()
        yield item
        if item[0] == "done":
            return
