#!/usr/bin/env python
"""Does the live UI cost the engine its pacing? The engine's input-pacing figures with and without it.

Not a test: prints numbers. Both runs are the real engine against the in-process simulator
with the real store recording, for --seconds of wall time at 1x: once headless, once inside
the Textual app (headless terminal) with the run screen open, so meters, table, transcript and
log repaint live. Also prints how often the UI actually repainted the meters.

    .venv/bin/python scripts/bench_ui_pacing.py [--bench demo_bench] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from arena_tui.app import ArenaApp  # noqa: E402
from arena_tui.bus import EventBus  # noqa: E402
from arena_tui.screens.run import RunScreen  # noqa: E402
from arena_tui.store import Store  # noqa: E402
from arena_tui.widgets.meters import LevelMeters  # noqa: E402
from arena_tui.widgets.run_state import RunState, specs_from_benchmark  # noqa: E402
from benchmarks.loader import load_benchmark  # noqa: E402
from runners.config import RunConfig  # noqa: E402
from runners.engine import run_benchmark  # noqa: E402


async def timed_run(bench, bus: EventBus, seconds: float, run_id: str) -> list[float]:
    inputs = []
    cfg = RunConfig(model="sim", speed=1.0)
    task = asyncio.create_task(
        run_benchmark(bench, cfg, bus, run_id=run_id, on_session=lambda s: inputs.append(s.input))
    )
    try:
        await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
    return [x for i in inputs for x in i.lateness_ms]


async def headless(bench, seconds: float) -> list[float]:
    store = await Store.open(Path(tempfile.mkdtemp()) / "a.db")
    bus = EventBus()
    store.start_recording(bus)
    try:
        return await timed_run(bench, bus, seconds, "bench-headless")
    finally:
        await store.flush()
        await store.close()


async def with_ui(bench, seconds: float) -> tuple[list[float], float]:
    app = ArenaApp(Path(tempfile.mkdtemp()) / "a.db")
    paints = 0
    async with app.run_test(size=(160, 46)) as pilot:
        await pilot.pause()
        run_id = "bench-ui"
        app.live[run_id] = RunState(run_id, specs_from_benchmark(bench))
        app.push_screen(RunScreen(app.live[run_id], live=True))
        await pilot.pause(0.2)
        meters = app.screen.query_one(LevelMeters)
        original = meters.refresh

        def counting_refresh(*a, **kw):
            nonlocal paints
            paints += 1
            return original(*a, **kw)

        meters.refresh = counting_refresh  # type: ignore[method-assign]
        t0 = time.monotonic()
        late = await timed_run(bench, app.bus, seconds, run_id)
        wall = time.monotonic() - t0
    return late, paints / wall


def fmt(late: list[float]) -> str:
    a = np.asarray(late)
    if a.size == 0:
        return "no samples"
    return f"chunks {a.size}: late p50 {np.percentile(a, 50):.3f} ms, p99 {np.percentile(a, 99):.3f} ms, max {a.max():.3f} ms"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="demo_bench")
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    from loguru import logger

    logger.remove()
    bench = load_benchmark(args.bench)
    print(f"{args.bench}, {args.seconds:.0f} s wall at 1x, real engine + simulator + store")
    print("headless :", fmt(await headless(bench, args.seconds)))
    late, hz = await with_ui(bench, args.seconds)
    print("with UI  :", fmt(late))
    print(f"meter repaints: {hz:.1f}/s (target ≥ 15, cap 20 by the coalescing timer)")


if __name__ == "__main__":
    asyncio.run(main())
