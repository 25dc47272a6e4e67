"""The executor interface: where a campaign's runs execute, and how their events come back.

A coordinator (the campaign orchestrator) owns one `EventBus`, the one `Store` writer recording
it, and the UI. It hands `Job`s to an executor; the executor runs each one somewhere else (a
local worker process, a Ray task on any node) and re-publishes every event the run produced on
the coordinator's bus, as the same typed events. An executor never opens the database.

Each submitted job ends exactly once, through one of two callbacks:
  - `on_done(job, outcome)`: the run's code returned or raised in the worker (the run's own
    verdict is its `run_ended` event; `outcome.status` says how the worker call ended);
  - `on_lost(job, reason)`: the worker or node holding it died; events published before the
    loss are on the bus, the run has no `run_ended`, and the orchestrator may resume it.

    executor = LocalExecutor(bus, on_lost=..., on_done=...)   # or RayExecutor(bus, address=...)
    await executor.start()
    for job in jobs: executor.submit(job)
    await executor.join()      # every job done or lost
    await executor.close()     # cancels what still runs (runs end `interrupted`), stops workers
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from arena_tui.spine.bus import EventBus

from arena_tui.campaign.snapshot import BenchmarkSnapshot
from arena_tui.spine.settings import RunSettings

from .provider_caps import ProviderCaps

# module:function of `async (benchmark, RunSettings, bus, run_id[, resume=]) -> dict`, imported in the worker
DEFAULT_RUNNER = "arena_tui.orchestration.worker:run_engine"


@dataclass(frozen=True)
class Job:
    """One run: a benchmark by value, its settings (validated where they were built; pickled to
    the worker as they are), its id, and when it continues an interrupted run, what to resume from."""

    run_id: str
    snapshot: BenchmarkSnapshot = field(repr=False)
    settings: RunSettings
    # set: continue the interrupted run `run_id` in place (worker.resume_seed's JSON form:
    # from_turn, start_ms, done = the finished turns' stored results)
    resume: dict[str, Any] | None = None
    # the orchestrator chose this run's speed (a re-run from scratch, slower): admission control keeps it
    speed_fixed: bool = False

    @property
    def keeps_speed(self) -> bool:
        """A resumed run keeps its timeline's one speed; a re-run keeps the speed it was announced at."""
        return self.resume is not None or self.speed_fixed


@dataclass(frozen=True)
class JobOutcome:
    # finished: the runner returned; error: it raised (message says what); cancelled: close() stopped it
    status: Literal["finished", "error", "cancelled"]
    message: str = ""
    result: dict[str, Any] = field(default_factory=dict)  # what the runner returned (JSON-able)
    started: bool = True  # False: cancelled before any worker took it


class NoWorkers(Exception):
    """No worker can start anywhere (every Ray node refused): `problems`, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"no worker can run the jobs: {len(problems)} problem(s)")
        self.problems = problems


OnLost = Callable[[Job, str], None]
OnDone = Callable[[Job, JobOutcome], None]


class Executor(abc.ABC):
    """Common bookkeeping: callbacks, the set of open jobs, `join`."""

    def __init__(self, bus: EventBus, *, on_lost: OnLost, on_done: OnDone | None = None,
                 runner: str = DEFAULT_RUNNER) -> None:
        self.bus = bus
        self.runner = runner
        self._on_lost = on_lost
        self._on_done = on_done
        self._open: dict[str, Job] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        self.pace = ""  # what admission control says now ("pace: 2 sessions/worker, machine busy")
        self.on_pace: Callable[[str], None] | None = None  # told each time `pace` changes
        self.on_notice: Callable[[str], None] | None = None  # told what the user should hear (a node lost, joined)
        #: sessions at once per provider, across every worker (the campaign sets its caps before `start`)
        self.caps = ProviderCaps()

    @abc.abstractmethod
    async def start(self) -> None:
        """Bring workers up; returns when jobs can run."""

    @abc.abstractmethod
    def submit(self, job: Job) -> None:
        """Queue a job (run ids must be unique among open jobs)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Cancel every open job (each ends with outcome `cancelled`) and stop the workers."""

    @abc.abstractmethod
    def worker_pid(self, run_id: str) -> int | None:
        """The OS pid of the process running `run_id` now (None if not started or gone)."""

    @property
    def open_jobs(self) -> list[Job]:
        return list(self._open.values())

    async def join(self) -> None:
        """Wait until every job submitted so far is done or lost."""
        await self._idle.wait()

    async def __aenter__(self) -> Executor:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- for subclasses

    def _opened(self, job: Job) -> None:
        if job.run_id in self._open:
            raise ValueError(f"run {job.run_id} is already submitted")
        self._open[job.run_id] = job
        self._idle.clear()

    def expect(self, settings: list[RunSettings], payload_bytes: int) -> None:
        """The jobs to come: their settings (each kind once) and the benchmarks' size. Told before
        `start`, so an executor whose workers run elsewhere can check each place can run them."""

    def held_back(self) -> int:
        """Queued jobs waiting for room under a provider cap (not for a worker)."""
        return self.caps.held_back(self._queued())

    def _queued(self) -> list[Job]:
        """The jobs submitted and not yet handed to a worker."""
        return []

    def admissions(self) -> list[Any]:
        """Admission control's state per live worker (admission.Admission); none: no such control."""
        return []

    def new_run_speed(self, asked: float) -> float:
        """The speed a fresh run asking `asked` would get now (the busiest worker's cap)."""
        return min([asked, *(a.speed_cap for a in self.admissions())])

    def _say(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

    def _set_pace(self, text: str) -> None:
        if text != self.pace:
            self.pace = text
            if self.on_pace is not None:
                self.on_pace(text)

    def _publish(self, data: bytes) -> None:
        from .transport import decode_batch  # deferred: only the coordinator decodes batches; workers import this module for Job alone

        for event in decode_batch(data):
            self.bus.publish(event)

    def _finish(self, run_id: str, outcome: JobOutcome | None = None, *, lost: str | None = None) -> None:
        job = self._open.pop(run_id, None)
        if job is None:
            return
        self.caps.release(run_id)  # (before the callbacks: a lost run resubmitted at once finds its room)
        try:
            if lost is not None:
                self._on_lost(job, lost)
            elif self._on_done is not None:
                self._on_done(job, outcome or JobOutcome("finished"))
        finally:
            if not self._open:
                self._idle.set()
