"""One provider session in one Pipecat pipeline, the part both turn loops share: its service built
with the run's tool handler and tapped for the run (every frame it pushes, as it pushes it, and
its usage), its pipeline started and closed, its connected time billed once, the conversation it
holds. What it uses of its run is `SessionRun`, declared here: the session never imports the run."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from pipecat.frames.frames import ErrorFrame, Frame, MetricsFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.llm_service import FunctionCallParams, LLMService
from pipecat.workers.runner import WorkerRunner

from arena_tui.spine.events import Usage

from ..base import ProviderRunner, SessionSpec
from ..rotation import History
from .usage import LLM_USAGE, reports, tap_usage


class ToolHandler(Protocol):
    """Who answers the calls a session's service makes (`tool_calls.ToolAnswers`)."""

    async def answer(self, params: FunctionCallParams) -> None: ...


class SessionRun(Protocol):
    """What a session uses of its run (`base.RunBase`): its provider, clock and history, the tool
    handler its service calls, and where the frames and usage it taps go."""

    provider: ProviderRunner
    history: History
    @property
    def tools(self) -> ToolHandler: ...

    def now(self) -> float: ...

    def on_usage(self, usages: list[Usage]) -> None: ...

    def on_llm_frame(self, session: Any, frame: Frame) -> None: ...  # (`Any`: the run's own session class)


class SessionBase:
    """One provider session in one Pipecat pipeline (`session.Session` for audio, `text.TextSession`)."""

    def __init__(self, run: SessionRun, number: int, spec: SessionSpec) -> None:
        self.run = run
        self.number = number
        self.spec = spec
        self.opened_ms = run.now()
        self.replayed_chars = sum(i.chars() for i in spec.history)
        self.history_from = len(run.history.items)  # later turns are in this session's context too
        self.llm: LLMService | None = None
        #: other processors the run hears (a cascade's STT and TTS): id → the frame types they originate
        self.taps: dict[int, tuple[type, ...]] = {}
        self._runner: WorkerRunner | None = None
        self._task: asyncio.Task[None] | None = None
        self.billed = False  # its connected time has been reported (`bill`)

    def build_llm(self) -> LLMService:
        """The provider's service for this session, with the run's tool handler registered."""
        llm = self.run.provider.build_service(self.spec)
        # A synchronous tool (the handler answers at once from the turn spec). Registering it
        # with cancel_on_interruption=False would make Pipecat treat it as an async tool: it
        # appends its ASYNC TOOLS text to the benchmark's prompt, Gemini declares it NON_BLOCKING
        # and Ultravox sends a placeholder result.
        llm.register_function(None, self.run.tools.answer, cancel_on_interruption=True)
        # Pipecat warns (6 lines on the user's terminal, every session of Gemini, Nova Sonic,
        # Ultravox) that the service emits no user turn frames, for pipelines whose RTVI or
        # aggregators need them. Ours do not: the paced input brackets the user's speech itself.
        llm._warned_realtime_service_no_turn_frames = True
        # Every frame the service pushes (either way) goes to the run, as it is pushed. A pipeline
        # observer would see the same frames, but it is told of every push of every stage (each
        # 20 ms audio chunk several times), one queue hop each, to pick out the service's.
        llm.add_event_handler("on_after_push_frame", self._tap)
        for part in self.run.provider.usage_parts(llm):  # (a delegation's backend: its own requests, its own model)
            tap_usage(part, LLM_USAGE, self.run.on_usage)
        self.llm = llm
        return llm

    def _tap(self, _llm: LLMService, frame: Frame) -> None:
        if isinstance(frame, MetricsFrame):
            self.run.on_usage(reports(frame, LLM_USAGE))
        self.run.on_llm_frame(self, frame)

    def connection_usage(self) -> Usage | None:
        """Its connected time as a usage record (None: billed by its tokens alone, as text requests are)."""
        return None

    def bill(self) -> None:
        """Report its connected time once (`connection_usage`), before the run's end is said."""
        if not self.billed and (usage := self.connection_usage()) is not None:
            self.run.on_usage([usage])
        self.billed = True

    def tap(self, processor: FrameProcessor, kinds: tuple[type, ...]) -> None:
        """Hand the run the frames of `kinds` that another processor (a cascade's STT or TTS) pushes,
        and its errors (as it pushes them: the run learns why before it sees the session fail)."""
        self.taps[id(processor)] = kinds

        def heard(_processor: FrameProcessor, frame: Frame) -> None:
            if isinstance(frame, (*kinds, ErrorFrame)):
                self.run.on_llm_frame(self, frame)

        processor.add_event_handler("on_after_push_frame", heard)

    def worker(self, processors: list[Any], params: PipelineParams) -> PipelineWorker:
        """The session's pipeline (its service is tapped for the run by `build_llm`)."""
        return PipelineWorker(
            Pipeline(processors),
            params=params,
            idle_timeout_secs=None,
            enable_rtvi=False,
            enable_turn_tracking=False,
        )

    async def run_worker(self, worker: PipelineWorker, name: str, first: list[Frame] | None = None) -> asyncio.Task[None]:
        """Start the pipeline in the background, `first` frames queued; the task ends when the session is closed."""
        self._runner = WorkerRunner(handle_sigint=False)
        await self._runner.add_workers(worker)
        if first:
            await worker.queue_frames(first)
        self._task = asyncio.create_task(self._runner.run(), name=name)
        return self._task

    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def context_chars(self) -> int:
        """The conversation this session holds: what it was replayed plus the turns since
        (not the whole run's history: after a trimmed replay that would rotate every turn)."""
        return self.replayed_chars + sum(i.chars() for i in self.run.history.items[self.history_from :])

    async def close(self) -> None:
        self.bill()
        if self._runner is not None:
            with contextlib.suppress(Exception):
                await self._runner.cancel("session closed")
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._task, timeout=10.0)
