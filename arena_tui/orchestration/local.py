"""The default executor: a pool of local worker processes, each running several sessions.

Workers are spawned (not forked: the coordinator has a running event loop and threads) and each
runs an asyncio loop holding up to `per_worker` sessions at once, fewer while its loop runs late
(admission.py: each worker reports its loop's lag once a second); a job goes to the ready worker
holding the fewest, among those admitting one more. Parent and worker talk over one pipe per
worker: commands (run, cancel, stop) down, event batches (JSON, see transport.py) and outcomes up.
A benchmark snapshot is sent to a worker once.

A worker that dies (kill -9, OOM) closes its pipe: every job it held is reported through
`on_lost` and a fresh worker takes its place. A worker whose coordinator dies exits within
seconds, whatever its runs are doing (lifeline.py: parent-death signal and pipe EOF, then a
hard exit), so no orphan keeps running sessions.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_tui.spine.bus import EventBus
from arena_tui.spine import grid
from arena_tui.spine.heap import settle_heap, settle_heaps_here
from arena_tui.spine.settings import RunSettings

from .admission import Admission, Load, pace_text, probe_lag
from .executor import DEFAULT_RUNNER, Executor, Job, JobOutcome, OnDone, OnLost
from .lifeline import EXIT_ORPHANED, Lifeline, signal_on_parent_death

READY_TIMEOUT_S = 180.0  # a cold worker imports Pipecat; on a loaded 2-core machine that is slow
STOP_TIMEOUT_S = 30.0


class ExecutorError(Exception):
    """The pool could not start (a worker died before it was ready)."""


def _exit_reason(pid: int, code: int | None) -> str:
    if code == EXIT_ORPHANED:
        return f"worker process {pid} stopped: it was told its coordinator was gone (SIGTERM)"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker process {pid} was killed ({name})"
    return f"worker process {pid} exited (code {code})"


@dataclass(eq=False)
class _Worker:
    proc: Any
    conn: Connection
    admission: Admission
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    jobs: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)  # snapshots already sent
    slot: int = 0  # its place in the pool: its pacers' phase is slot / pool size (`arena_tui.spine.grid`)

    @property
    def pid(self) -> int:
        return self.proc.pid


class LocalExecutor(Executor):
    def __init__(self, bus: EventBus, *, on_lost: OnLost, on_done: OnDone | None = None,
                 workers: int | None = None, per_worker: int = 8, speed: float = 1.0,
                 runner: str = DEFAULT_RUNNER, warm: tuple[str, ...] = ()) -> None:
        """`warm`: the model aliases the jobs will run; a worker loads their providers before it says
        it is ready, so no worker's first session imports them while other workers' sessions pace."""
        super().__init__(bus, on_lost=on_lost, on_done=on_done, runner=runner)
        self.warm = tuple(warm)
        self.size = workers or os.cpu_count() or 1
        self.per_worker = per_worker  # the most a worker is given; admission control may give fewer
        self.speed = speed  # the campaign's speed: new runs on a busy worker may get less
        self._ctx = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._pending: collections.deque[Job] = collections.deque()
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        _tracker_running()
        fresh = [self._spawn() for _ in range(self.size)]
        waits = [asyncio.ensure_future(w.ready.wait()) for w in fresh]
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                while not all(w.ready.is_set() for w in fresh):
                    dead = [w for w in fresh if w not in self._workers]
                    if dead:
                        raise ExecutorError(_exit_reason(dead[0].pid, dead[0].proc.exitcode) + " while starting")
                    await asyncio.wait(waits, timeout=0.2)
        except TimeoutError:
            raise ExecutorError(f"workers not ready after {READY_TIMEOUT_S:.0f} s") from None
        finally:
            for w in waits:
                w.cancel()

    def submit(self, job: Job) -> None:
        if self._closing:
            raise RuntimeError("executor is closed")
        self._opened(job)
        self._pending.append(job)
        self._dispatch()

    def cancel(self, run_id: str) -> None:
        """Stop one job: a queued one ends `cancelled` now; a running one is cancelled in its worker,
        publishes its own `interrupted` ending, and then ends `cancelled` through `on_done`."""
        job = next((j for j in self._pending if j.run_id == run_id), None)
        if job is not None:
            self._pending.remove(job)
            self._finish(run_id, JobOutcome("cancelled", "cancelled before it started", started=False))
            return
        w = next((w for w in self._workers if run_id in w.jobs), None)
        if w is not None:
            self._send(w, ("cancel", run_id))

    def admissions(self) -> list[Admission]:
        return [w.admission for w in self._workers]

    def _queued(self) -> list[Job]:
        return list(self._pending)

    def worker_pid(self, run_id: str) -> int | None:
        return next((w.pid for w in self._workers if run_id in w.jobs), None)

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        while self._pending:
            self._finish(self._pending.popleft().run_id, JobOutcome("cancelled", "closed before it started", started=False))
        workers = list(self._workers)
        for w in workers:
            if w.ready.is_set():
                self._send(w, ("stop",))
            else:  # still importing (a stop signal during start-up): it reads no pipe yet, and holds no run
                w.proc.terminate()
        for w in workers:
            await asyncio.to_thread(w.proc.join, STOP_TIMEOUT_S)
            if w.proc.is_alive():
                w.proc.kill()
                await asyncio.to_thread(w.proc.join, 5)
        await self.join_readers()

    async def join_readers(self) -> None:
        """Let the readers' last callbacks (outcomes, exits) run before returning from close."""
        for _ in range(100):
            if not self._workers:
                return
            await asyncio.sleep(0.02)

    # -- pool

    def _spawn(self) -> _Worker:
        """Start one worker, from the loop's thread: its parent-death signal follows this thread."""
        parent, child = self._ctx.Pipe(duplex=True)
        taken = {w.slot for w in self._workers}
        slot = next(k for k in range(len(taken) + 1) if k not in taken)  # a lost worker's replacement takes its place
        proc = self._ctx.Process(target=_worker_main, args=(child, self.runner, os.getpid(), self.warm, slot / self.size),
                                 name="arena-worker")
        proc.start()
        child.close()
        w = _Worker(proc, parent, Admission(self.per_worker, self.speed), slot=slot)
        self._workers.append(w)
        threading.Thread(target=self._read, args=(w,), daemon=True, name=f"arena-worker-{w.pid}").start()
        return w

    def _read(self, w: _Worker) -> None:  # reader thread: pipe -> event loop, in order
        assert self._loop is not None
        while True:
            try:
                msg = w.conn.recv()
            except (EOFError, OSError):
                break
            if not self._call(self._on_message, w, msg):
                return
        w.proc.join()
        self._call(self._on_exit, w)

    def _call[*Ts](self, fn: Callable[[*Ts], object], *args: *Ts) -> bool:
        try:
            self._loop.call_soon_threadsafe(fn, *args)  # type: ignore[union-attr]  # a closed loop's AttributeError is caught below
            return True
        except RuntimeError:  # loop closed: nobody left to tell
            return False

    def _on_message(self, w: _Worker, msg: tuple) -> None:
        kind = msg[0]
        if kind == "events":
            if msg[1] in w.jobs:
                self._publish(msg[2])
        elif kind == "done":
            run_id, out = msg[1], msg[2]
            w.jobs.discard(run_id)
            self._finish(run_id, JobOutcome(out["status"], out["message"], out["result"]))
            self._dispatch()
        elif kind == "load":
            if w.admission.observe(Load(msg[1], msg[2]), len(w.jobs)):
                self._dispatch()
            self._set_pace(pace_text(x.admission for x in self._workers))
        elif kind == "ready":
            w.ready.set()
            self._dispatch()

    def _on_exit(self, w: _Worker) -> None:
        if w in self._workers:
            self._workers.remove(w)
        w.conn.close()
        reason = _exit_reason(w.pid, w.proc.exitcode)
        for run_id in sorted(w.jobs):
            self._finish(run_id, lost=reason)
        w.jobs.clear()
        if not self._closing:
            self._spawn()
            self._dispatch()

    def _dispatch(self) -> None:
        while self._pending and not self._closing:
            free = [w for w in self._workers if w.ready.is_set() and len(w.jobs) < w.admission.limit]
            if not free:
                return
            job = self.caps.take_next(self._pending)  # the first a provider cap has room for
            if job is None:
                return
            w = min(free, key=lambda w: (len(w.jobs), w.admission.busy))
            snap = job.snapshot
            if snap.key not in w.keys:
                self._send(w, ("snapshot", snap))
                w.keys.add(snap.key)
            w.jobs.add(job.run_id)
            settings = w.admission.settings_for(job.settings, resumed=job.keeps_speed)
            self._send(w, ("run", job.run_id, snap.key, settings, job.resume))

    def _send(self, w: _Worker, msg: tuple) -> None:
        try:
            w.conn.send(msg)
        except (OSError, ValueError):  # dying worker: its reader reports the loss
            pass


def _tracker_running() -> None:
    """Start multiprocessing's resource tracker if it is not running. The first spawn starts it,
    passing it `sys.stderr.fileno()`; inside the monitor that is Textual's capture, whose -1
    fails the spawn ("bad value(s) in fds_to_keep"). No await between the swap and its undoing:
    nothing else can write to stderr meanwhile."""
    from multiprocessing import resource_tracker  # deferred: a pool's start, not the command's

    captured, sys.stderr = sys.stderr, sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = captured


# -- worker process


def _worker_main(conn: Connection, runner_spec: str, coordinator: int, warm: tuple[str, ...] = (),
                 phase: float = 0.0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    grid.set_phase(phase)  # the pool's workers pace at phases of their own
    lifeline = Lifeline()
    lifeline.install()  # before anything slow: the coordinator may die while Pipecat imports
    if not signal_on_parent_death(coordinator):
        lifeline.orphaned("the coordinator was gone before the worker started")
    asyncio.run(_serve(conn, runner_spec, lifeline, warm))


async def _serve(conn: Connection, runner_spec: str, lifeline: Lifeline, warm: tuple[str, ...] = ()) -> None:
    from .logs import worker_logs  # deferred: runs in the spawned worker process only; the coordinator never loads the engine

    worker_logs()  # the coordinator owns the terminal (a TUI may be drawing on it); before Pipecat greets
    from .worker import execute, load_runner  # deferred: runs in the spawned worker process only; the coordinator never loads the engine

    loop = asyncio.get_running_loop()
    runner = load_runner(runner_spec)
    import runners.engine  # deferred: runs in the spawned worker process only; the coordinator never loads the engine

    for model in warm:  # its provider's modules (Pipecat's service, ~0.3 s of imports) before any session paces
        with contextlib.suppress(Exception):  # a model that cannot run is reported by its job, as ever
            runners.engine.runner_for(model)
    settle_heaps_here()  # a worker lives as long as its coordinator
    settle_heap("worker loaded")  # the collector's full passes leave the engine's modules alone

    inbox: asyncio.Queue[tuple] = asyncio.Queue()
    outbox: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
    def request_stop() -> None:
        loop.call_soon_threadsafe(inbox.put_nowait, ("stop",))

    lifeline.on_stop(request_stop)

    def read() -> None:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):  # the coordinator is gone: stop, and exit soon regardless
                lifeline.orphaned("its coordinator's pipe closed")
                return
            loop.call_soon_threadsafe(inbox.put_nowait, msg)
            if msg[0] == "stop":
                return

    def write() -> None:  # pipe writes block; keep them off the pacing loop
        while (msg := outbox.get()) is not None:
            try:
                conn.send(msg)
            except (OSError, ValueError):
                return

    threading.Thread(target=read, daemon=True).start()
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    scratch = Path(tempfile.mkdtemp(prefix="arena-worker-"))
    lifeline.remove_on_exit(scratch)
    benchmarks: dict[str, Any] = {}
    tasks: dict[str, asyncio.Task[dict]] = {}

    def done(run_id: str, task: asyncio.Task[dict]) -> None:  # also for a task cancelled before its first step
        tasks.pop(run_id, None)
        out = {"status": "cancelled", "message": "cancelled before it started", "result": {}} if task.cancelled() \
            else task.result()
        outbox.put(("done", run_id, out))

    def start(run_id: str, key: str, settings: RunSettings, resume: dict | None) -> None:
        send = lambda b: outbox.put(("events", run_id, b))  # noqa: E731
        task = asyncio.create_task(execute(runner, benchmarks[key], settings, run_id, send, resume))
        task.add_done_callback(lambda t: done(run_id, t))
        tasks[run_id] = task

    outbox.put(("ready", os.getpid()))
    probe = asyncio.create_task(probe_lag(lambda load: outbox.put(("load", load.worst_ms, load.mean_ms))))
    try:
        while True:
            msg = await inbox.get()
            if msg[0] == "snapshot":
                benchmarks[msg[1].key] = msg[1].materialize(scratch)
            elif msg[0] == "run":
                start(msg[1], msg[2], msg[3], msg[4])
            elif msg[0] == "cancel":
                if msg[1] in tasks:
                    tasks[msg[1]].cancel()
            elif msg[0] == "stop":
                for t in list(tasks.values()):
                    t.cancel()
                await asyncio.gather(*tasks.values(), return_exceptions=True)
                break
    finally:
        probe.cancel()
        outbox.put(None)
        writer.join(STOP_TIMEOUT_S)
        shutil.rmtree(scratch, ignore_errors=True)
