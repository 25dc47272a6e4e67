#!/usr/bin/env python
"""Does the live UI cost the engine its pacing? The engine's input-pacing figures with and without it.

Not a test: prints numbers. Both runs are the real engine against the in-process simulator
with the real store recording, for --seconds of wall time at 1x: once headless, once inside
the Textual app (headless terminal) with the run screen open, so meters, table, transcript and
log repaint live. Also prints how often the UI brought the meters up to date (a screen paint with
new events) and how often they were actually repainted, over the run and while audio played:
levels only arrive while a track plays, and a meter whose picture would not change (1 dB, one
cell) is not repainted, so the overall figures depend on how much of the run is silence.

With --profile, also where the loop's time went: the callbacks that held the loop longest, by
task or callback name, in thread CPU time (insensitive to other processes on a busy machine).

With --keys N, instead: N simulator runs stream at 1x into the app, started and judged as the app
starts them (in worker processes, as `arena-tui` does; --where thread: on the engine's own thread in
the app's process, --where loop: on the app's own loop, as before), while keys
are pressed on one run's screen, and it prints keypress-to-screen latency p50/p95 (key posted →
the first frame the compositor produced that shows its effect) for table navigation (down/up) and
for opening the turn detail (enter), with the input-pacing p99 of those N runs (goal: p95 < 50 ms).

    .venv/bin/python -m scripts.bench_ui_pacing [--bench demo_bench] [--seconds 60] [--profile]
                                                  [--refresh-hz 30] [--ui-only] [--keys 8 [--where pool|thread|loop]]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from textual import events

REPO = Path(__file__).resolve().parent.parent

from arena_tui.app import ArenaApp  # noqa: E402
from arena_tui.orchestration.launch import EngineLauncher  # noqa: E402
from arena_tui.orchestration.run_pool import RunPool  # noqa: E402
from arena_tui.spine.heap import settle_heaps_here  # noqa: E402
from arena_tui.spine.bus import EventBus  # noqa: E402
from arena_tui.screens.run import RunScreen  # noqa: E402
from arena_tui.screens.turn_detail import TurnDetailScreen  # noqa: E402
from arena_tui.store import Store  # noqa: E402
from arena_tui.widgets.meters import LevelMeters  # noqa: E402
from arena_tui.widgets.turn_table import TurnTable  # noqa: E402
from arena_tui.run_view import RunState, specs_from_benchmark  # noqa: E402
from benchmarks.registry import load_benchmark  # noqa: E402
from arena_tui.spine.settings import RunSettings  # noqa: E402
from runners.engine import run_benchmark  # noqa: E402

ACTIVE_MS = 100.0  # a meter counts as "moving" this long after a level event for it arrived


class LoopProfile:
    """Thread-CPU time of every loop callback over `slow_ms`, by what ran (task coroutine or callback)."""

    def __init__(self, slow_ms: float = 1.0) -> None:
        self.slow_s = slow_ms / 1000.0
        self.count: collections.Counter[str] = collections.Counter()
        self.total: collections.Counter[str] = collections.Counter()
        self.worst: dict[str, float] = {}
        self._orig = asyncio.events.Handle._run

    def __enter__(self) -> LoopProfile:
        orig, prof = self._orig, self

        def run(handle: asyncio.Handle) -> None:
            t = time.thread_time()
            try:
                orig(handle)
            finally:
                d = time.thread_time() - t
                if d > prof.slow_s:
                    prof.add(handle, d)

        asyncio.events.Handle._run = run  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._orig  # type: ignore[method-assign]

    def add(self, handle: asyncio.Handle, d: float) -> None:
        cb = handle._callback  # type: ignore[attr-defined]
        owner = getattr(cb, "__self__", None)
        if isinstance(owner, asyncio.Task):
            coro = owner.get_coro()
            name = f"task {getattr(coro, '__qualname__', coro)}"
            timer = getattr(getattr(coro, "cr_frame", None), "f_locals", {}).get("self")
            callback = getattr(timer, "_callback", None)
            if callback is not None:  # a Textual timer: say whose
                name += f" → {getattr(callback, '__qualname__', callback)}"
        else:
            name = getattr(cb, "__qualname__", repr(cb))
        self.count[name] += 1
        self.total[name] += d
        self.worst[name] = max(self.worst.get(name, 0.0), d)

    def report(self, label: str, top: int = 8) -> str:
        head = (f"  {label}: callbacks holding the loop > {self.slow_s * 1000:.0f} ms CPU "
                f"({sum(self.count.values())} in all): count, total ms, worst ms, what")
        lines = [head]
        for name, _ in self.total.most_common(top):
            lines.append(f"    {self.count[name]:5d} {self.total[name] * 1000:8.1f} {self.worst[name] * 1000:7.1f}  {name}")
        return "\n".join(lines)


async def timed_run(bench, bus: EventBus, seconds: float, run_id: str) -> list[float]:
    inputs = []
    cfg = RunSettings(model="sim", speed=1.0)
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


async def headless(bench, seconds: float, prof: LoopProfile | None, db: Path) -> list[float]:
    store = await Store.open(db)
    bus = EventBus()
    store.start_recording(bus)
    try:
        with prof or contextlib.nullcontext():
            return await timed_run(bench, bus, seconds, "bench-headless")
    finally:
        await store.flush()
        await store.close()


class UiCounts:
    """What the UI did, stamped on the wall clock: screen paints, meter repaints, meter frames drawn,
    and when level events reached the bus (to tell 'audio playing' from silence)."""

    def __init__(self) -> None:
        self.paints: list[float] = []
        self.repaints: list[float] = []
        self.frames: list[float] = []
        self.levels: list[float] = []

    def rate(self, stamps: list[float], wall: float) -> float:
        return len(stamps) / wall if wall > 0 else 0.0

    def active(self) -> list[tuple[float, float]]:
        """Merged windows of ACTIVE_MS after each level event: when a meter had something new to show."""
        out: list[tuple[float, float]] = []
        for t in sorted(self.levels):
            end = t + ACTIVE_MS / 1000.0
            if out and t <= out[-1][1]:
                out[-1] = (out[-1][0], end)
            else:
                out.append((t, end))
        return out

    def active_rate(self, stamps: list[float]) -> tuple[float, float]:
        windows = self.active()
        secs = sum(b - a for a, b in windows)
        inside = 0
        for s in stamps:
            inside += any(a <= s <= b for a, b in windows)
        return (inside / secs if secs else 0.0), secs


async def with_ui(bench, seconds: float, prof: LoopProfile | None, db: Path) -> tuple[list[float], UiCounts, float]:
    app = ArenaApp(db)
    counts = UiCounts()
    async with app.run_test(size=(160, 46)) as pilot:
        await pilot.pause()
        run_id = "bench-ui"
        app.live[run_id] = RunState(run_id, specs_from_benchmark(bench))
        app.push_screen(RunScreen(app.live[run_id], live=True))
        await pilot.pause(0.2)
        screen = app.screen
        meters = screen.query_one(LevelMeters)
        paint, refresh, render_line = screen.paint, meters.refresh, meters.render_line

        def counting_paint(*a, **kw):
            counts.paints.append(time.monotonic())
            return paint(*a, **kw)

        def counting_refresh(*a, **kw):
            counts.repaints.append(time.monotonic())
            return refresh(*a, **kw)

        def counting_render_line(y):
            if y == 0:
                counts.frames.append(time.monotonic())
            return render_line(y)

        screen.paint = counting_paint  # type: ignore[method-assign]
        meters.refresh = counting_refresh  # type: ignore[method-assign]
        meters.render_line = counting_render_line  # type: ignore[method-assign]
        publish = app.bus.publish

        def stamping_publish(event):
            if event.kind == "level":
                counts.levels.append(time.monotonic())
            publish(event)

        app.bus.publish = stamping_publish  # type: ignore[method-assign]
        t0 = time.monotonic()
        with prof or contextlib.nullcontext():
            late = await timed_run(bench, app.bus, seconds, run_id)
        wall = time.monotonic() - t0
    return late, counts, wall


class FrameStamps:
    """Wraps `App._display` (called with each frame the compositor made): when, and whether it
    already showed what the last key asked for."""

    def __init__(self, app: ArenaApp) -> None:
        self.app = app
        self.want: object = None  # callable(screen) -> bool while a key is being timed
        self.hit: float | None = None
        self.shown = asyncio.Event()  # set by the frame that shows it: no polling loop sharing the app's loop
        display = app._display

        def stamped(screen, renderable):
            if renderable is not None and self.want is not None and self.hit is None and self.want(screen):
                self.hit = time.perf_counter()
                self.shown.set()
            return display(screen, renderable)

        app._display = stamped  # type: ignore[method-assign]

    async def time_key(self, key: str, shown) -> float | None:
        """ms from posting `key` to the first frame for which `shown(screen)` holds (None: no frame in 2 s).

        The key goes in as the terminal driver sends it (as `pilot.press` does, without its waits
        for an idle process, which never comes while runs stream: ~2 s a key)."""
        self.want, self.hit = shown, None
        self.shown.clear()
        t0 = time.perf_counter()
        post_key(self.app, key)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.shown.wait(), 2.0)
        self.want = None
        return None if self.hit is None else (self.hit - t0) * 1000.0


def post_key(app: ArenaApp, key: str) -> None:
    event = events.Key(key, None)
    event.set_sender(app)
    app._driver.send_message(event)


WALL_ENV = "ARENA_BENCH_RUN_SECONDS"  # how long each pooled run goes (read in the worker)


async def run_keeping_pacing(benchmark, config, bus, run_id, resume=None) -> dict:
    """The engine's run in a pool worker for ${WALL_ENV} seconds of wall time, returning its
    sessions' input lateness (ms): the worker is where its pacing happens."""
    import os  # deferred: in the worker

    sessions: list = []
    task = asyncio.create_task(run_benchmark(benchmark, config, bus, run_id, on_session=sessions.append))
    try:
        await asyncio.wait_for(asyncio.shield(task), float(os.environ[WALL_ENV]))
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    return {"late_ms": [x for s in sessions for x in s.input.lateness_ms]}


class BenchLauncher(EngineLauncher):
    """The app's own launcher, also keeping each run's input pacing. where: "pool" (worker
    processes, as `arena-tui` runs them), "thread" (the engine's thread in the app's process, as
    before) or "loop" (the app's own loop, as before that)."""

    def __init__(self, where: str = "pool", seconds: float = 60.0) -> None:
        super().__init__(RunPool(runner="scripts.bench_ui_pacing:run_keeping_pacing") if where == "pool" else None)
        os.environ[WALL_ENV] = str(seconds)
        self.where = where
        self.sessions: list = []
        self.on_session = self.sessions.append
        self.late: list[float] = []

    def start_run(self, benchmark, config, bus, run_id):
        if self.where == "loop":
            return run_benchmark(benchmark, config, bus, run_id=run_id, on_session=self.on_session)
        run = super().start_run(benchmark, config, bus, run_id)
        if self.where == "thread":
            return run

        async def keep() -> dict:
            result = await run
            self.late.extend(result.get("late_ms", []))
            return result

        return keep()

    def lateness(self) -> list[float]:
        return self.late + [x for s in self.sessions for x in s.input.lateness_ms]


async def keys_while_streaming(bench, runs: int, seconds: float, db: Path, where: str = "pool") -> None:
    """`runs` simulator runs at 1x, started and judged (heuristic) as the app starts them; keys
    pressed on the first run's screen; the runs end after `seconds` (pooled: of their own)."""
    settle_heaps_here()  # as `arena-tui` sets up the monitor's process
    launcher = BenchLauncher(where, seconds)
    app = ArenaApp(db, launcher=launcher)
    nav: list[float] = []
    detail: list[float] = []
    missed = 0
    async with app.run_test(size=(160, 46)) as pilot:
        await pilot.pause()
        t_start = time.monotonic()
        ids = [app.start_run(bench, RunSettings(model="sim", speed=1.0), judge="heuristic") for _ in range(runs)]
        app.open_run(ids[0])
        while not all(app.live[i].started for i in ids):  # pooled: the workers start first
            await pilot.pause(0.2)
        t_start = time.monotonic()
        await pilot.pause(3.0)  # the runs are under way, the table has its rows
        frames = FrameStamps(app)
        await pilot.press("f")  # follow off: the cursor moves only by the keys
        table = app.screen.query_one(TurnTable)
        t_end = t_start + seconds - 8.0
        step = 0
        while time.monotonic() < t_end:
            key = "down" if step % 2 == 0 else "up"
            before = table.cursor_row
            ms = await frames.time_key(key, lambda sc, b=before: isinstance(sc, RunScreen) and table.cursor_row != b)
            nav.append(ms) if ms is not None else None
            missed += ms is None
            if step % 6 == 5:
                ms = await frames.time_key("enter", lambda sc: isinstance(sc, TurnDetailScreen))
                detail.append(ms) if ms is not None else None
                missed += ms is None
                await asyncio.sleep(0.3)
                await frames.time_key("escape", lambda sc: isinstance(sc, RunScreen))
                await asyncio.sleep(0.2)
            step += 1
            await asyncio.sleep(0.15)
        if where == "pool":
            while any(app.running(i) for i in ids):
                await asyncio.sleep(0.2)
        else:
            await asyncio.sleep(max(0.0, t_start + seconds - time.monotonic()))
            await app.stop_runs(ids)
        late = launcher.lateness()
    where = {"pool": "worker processes", "thread": "the engine's thread", "loop": "the app's own loop"}[where]
    print(f"{runs} simulator runs of {bench.name} at 1x on {where}, judged (heuristic), streaming into the app, "
          f"{seconds:.0f} s wall; keys on one run's screen (160x46, headless terminal)")
    for label, xs in (("table navigation (down/up)", nav), ("open turn detail (enter)", detail)):
        a = np.asarray(xs)
        if a.size:
            print(f"  {label}: n {a.size}, keypress-to-screen p50 {np.percentile(a, 50):.1f} ms, "
                  f"p95 {np.percentile(a, 95):.1f} ms, max {a.max():.1f} ms (goal p95 < 50 ms)")
    if missed:
        print(f"  keys with no frame showing their effect within 2 s: {missed}")
    print(f"  input pacing of the {runs} runs: {fmt(late)}")


def fmt(late: list[float]) -> str:
    a = np.asarray(late)
    if a.size == 0:
        return "no samples"
    return f"chunks {a.size}: late p50 {np.percentile(a, 50):.3f} ms, p99 {np.percentile(a, 99):.3f} ms, max {a.max():.3f} ms"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="demo_bench")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--profile", action="store_true", help="also print the callbacks that held the loop longest")
    ap.add_argument("--refresh-hz", type=float, default=None,
                    help="override the app's coalescing rate (arena_tui.app.arena.REFRESH_HZ) to measure another setting")
    ap.add_argument("--ui-only", action="store_true", help="skip the headless run")
    ap.add_argument("--keys", type=int, metavar="RUNS", default=0,
                    help="instead: keypress-to-screen latency while RUNS simulator runs stream (e.g. 8)")
    ap.add_argument("--where", choices=("pool", "thread", "loop"), default="pool",
                    help="with --keys: where the app's runs execute: worker processes (as `arena-tui` runs them), "
                         "the engine's thread in the app's process, or the app's own loop (to compare)")
    args = ap.parse_args()
    if args.refresh_hz:
        import arena_tui.app.arena

        arena_tui.app.arena.REFRESH_HZ = args.refresh_hz
    from loguru import logger

    logger.remove()
    bench = load_benchmark(args.bench)
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:  # the runs' databases, removed after
        await measure(args, bench, Path(tmp))


async def measure(args: argparse.Namespace, bench, tmp: Path) -> None:
    if args.keys:
        await keys_while_streaming(bench, args.keys, args.seconds, tmp / "keys.db", args.where)
        return
    import arena_tui.app.arena

    print(f"{args.bench}, {args.seconds:.0f} s wall at 1x, real engine + simulator + store; "
          f"UI coalescing timer {arena_tui.app.arena.REFRESH_HZ:g} Hz")
    prof_h, prof_u = (LoopProfile(), LoopProfile()) if args.profile else (None, None)
    if not args.ui_only:
        print("headless :", fmt(await headless(bench, args.seconds, prof_h, tmp / "headless.db")))
    late, counts, wall = await with_ui(bench, args.seconds, prof_u, tmp / "ui.db")
    print("with UI  :", fmt(late))
    updates, secs = counts.active_rate(counts.paints)
    playing, _ = counts.active_rate(counts.repaints)
    drawn, _ = counts.active_rate(counts.frames)
    print(f"audio played {secs:.0f} s of {wall:.0f} s; rates over the run / while audio played "
          f"(target ≥ 15/s while playing; capped by the coalescing timer and by levels arriving 20/s per track):")
    print(f"  meter updates (screen paints with new events): {counts.rate(counts.paints, wall):.1f}/s / {updates:.1f}/s")
    print(f"  meter repaints (the picture changed at 1 dB resolution): "
          f"{counts.rate(counts.repaints, wall):.1f}/s / {playing:.1f}/s; frames drawn {drawn:.1f}/s while playing")
    if prof_h is not None and prof_u is not None:
        if not args.ui_only:
            print(prof_h.report("headless"))
        print(prof_u.report("with UI"))


if __name__ == "__main__":
    asyncio.run(main())
