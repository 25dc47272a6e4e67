"""Inside a Ray worker process: the warm worker actor (`Worker`: the engine and the jobs'
providers imported once, then many runs on its event loop, as a local worker holds them) and a
run as a streaming call (`ray_task`: where it runs, event batches, the outcome), with the loop's
lag reported to every run's stream for admission control."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

from arena_tui.campaign.snapshot import BenchmarkSnapshot
from arena_tui.spine.heap import settle_heap, settle_heaps_here
from arena_tui.spine.settings import RunSettings

from .admission import Load, probe_lag
from .ray_cluster import code_id
from .ray_scratch import remove_scratch, scratch, sweep_scratch, unpacked

_LOAD_TO: set[asyncio.Queue[tuple]] = set()  # the item queues of the runs on this worker now
_PROBE: list[asyncio.Task[None]] = []
_WINDOW = [0]


def _report_load(load: Load) -> None:
    """This worker's loop lag, to every run's stream (the coordinator takes each window once)."""
    _WINDOW[0] += 1
    for q in _LOAD_TO:
        q.put_nowait(("load", _WINDOW[0], load.worst_ms, load.mean_ms))


class Worker:
    """A warm worker: the engine imported once, then many runs on this actor's event loop."""

    async def ready(self, warm: tuple[str, ...] = ()) -> dict[str, Any]:
        """Load the engine and the jobs' providers (`warm`), as a local worker does before it says
        it is ready, so no first session imports them while others pace."""
        import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

        t = time.monotonic()
        from .worker import execute  # noqa: F401  # deferred: the engine loads here, once per worker
        from runners import engine  # deferred: the engine (Pipecat, ~1 s) loads in the worker process, never in the coordinator

        for model in warm:
            with contextlib.suppress(Exception):  # a model that cannot run is reported by its job, as ever
                engine.runner_for(model)
        settle_heaps_here()  # a worker lives as long as its coordinator, and paces
        settle_heap("ray worker loaded")  # the collector's full passes leave the engine's modules alone
        sweep_scratch()
        if not _PROBE:  # admission control: this loop's lag, once a window (admission.py)
            _PROBE.append(asyncio.get_running_loop().create_task(probe_lag(_report_load)))
        return {"pid": os.getpid(), "node": ray.util.get_node_ip_address(), "scratch": str(scratch()),
                "code": code_id(), "import_s": time.monotonic() - t, "nice": os.getpriority(os.PRIO_PROCESS, 0)}

    async def run(self, snap: BenchmarkSnapshot, settings: RunSettings, run_id: str, runner_spec: str,
                  resume: dict | None = None):
        async for item in ray_task(snap, settings, run_id, runner_spec, resume):
            yield item

    async def cleanup(self) -> None:
        remove_scratch()


async def ray_task(snap: BenchmarkSnapshot, settings: RunSettings, run_id: str, runner_spec: str,
                   resume: dict | None = None):
    """Streaming generator: ("where", pid, ip), then ("events", bytes)..., then ("done", outcome).

    The run is a task on the worker's loop beside its other runs (as a local worker holds them);
    cancelling this call cancels it, and it ends itself `interrupted`."""
    import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    from .worker import execute, load_runner  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    yield ("where", os.getpid(), ray.util.get_node_ip_address())
    benchmark = unpacked(snap)
    runner = load_runner(runner_spec)
    items: asyncio.Queue[tuple] = asyncio.Queue()

    async def run() -> None:
        try:
            out = await execute(runner, benchmark, settings, run_id, lambda b: items.put_nowait(("events", b)), resume)
        except BaseException as e:  # (execute reports the run's own errors; this is the rest)
            out = {"status": "error", "message": f"{type(e).__name__}: {e}", "result": {}}
        items.put_nowait(("done", out))

    task = asyncio.create_task(run(), name=f"run-{run_id}")
    _LOAD_TO.add(items)
    try:
        while True:
            item = await items.get()
            yield item
            if item[0] == "done":
                return
    finally:
        _LOAD_TO.discard(items)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
