"""One audio session: a provider connection inside one Pipecat pipeline, with its own paced
ends (`PacedInput` plays the user WAVs on the run's clock, `PacedOutput` plays the bot)."""

from __future__ import annotations

import asyncio
from typing import Protocol

from pipecat.frames.frames import ErrorFrame, LLMRunFrame
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
from pipecat.services.stt_service import STTService
from pipecat.services.tts_service import TTSService
from pipecat.turns.user_turn_strategies import ExternalUserTurnStrategies
from arena_tui.spine.events import Usage
from arena_tui.spine.settings import RunSettings

from ..base import RunError, SessionSpec
from ..transports import PacedInput, PacedOutput, RunClock
from .session_base import SessionBase, SessionRun
from .usage import STT_USAGE, TTS_USAGE, tap_usage


class FrameHooks(Protocol):
    """What a session tells its run's frame reader (`provider_frames.ProviderFrames`) beyond the frames it taps."""

    def on_response_done(self, session: Session, status: str, why: str) -> None: ...
    def on_session_event(self, session: Session, cls: type, /, **kw: object) -> None: ...
    def on_provider_error(self, session: Session, frame: ErrorFrame) -> None: ...


class AudioRunHooks(SessionRun, Protocol):
    """What a session uses of its run (`audio.AudioRun`, which owns its sessions), declared here
    so the session does not import the run."""

    config: RunSettings
    clock: RunClock
    rate: int
    @property
    def frames(self) -> FrameHooks: ...

    def on_user_chunk(self, pcm: bytes, t_ms: float) -> None: ...
    def on_bot_audio(self, pcm: bytes, t_ms: float) -> None: ...
    def on_truncated(self, t_ms: float, pending_ms: float) -> None: ...
    def on_usage(self, usages: list[Usage]) -> None: ...

PIPELINE_START_S = 30.0  # wall seconds a new pipeline may take to start playing input


class Session(SessionBase):
    """One provider connection inside one Pipecat pipeline, with its own paced ends."""

    run: AudioRunHooks

    def __init__(self, run: AudioRunHooks, number: int, spec: SessionSpec) -> None:
        super().__init__(run, number, spec)
        self.failed: str | None = None
        self.infra: str | None = None  # what failed it, when that was infrastructure (`infra.infra_failure`)
        self.errors: set[str] = set()
        self.input: PacedInput | None = None
        self.output: PacedOutput | None = None
        self.heard_turns: set[int] = set()  # turns whose audio this session was sent (never re-sent into it)
        self.retire: str | None = None  # a reason to replace this live session before the next turn

    async def open(self) -> None:
        run = self.run
        # what the service reports reaches the run as this session's (the runner hands both on)
        self.spec = self.spec.model_copy(update={
            "publish": lambda cls, **kw: run.frames.on_session_event(self, cls, **kw),
            "on_response_status": lambda status, why: run.frames.on_response_done(self, status, why),
            "tool_handler": run.tools.answer,
        })
        llm = self.build_llm()
        # The context goes to the service at start either way (its tools, Pipecat's gotcha 1);
        # whether that asks for a reply is the runner's part of `spec.kickoff`.
        kickoff = self.spec.kickoff
        context = LLMContext(
            [{"role": "user", "content": kickoff}] if kickoff else [],
            run.provider.tools(self.spec.tools),
        )
        # The user turn strategies the service recommends (a service with its own turn detection:
        # external ones), given up front instead of adopted when it starts: Pipecat's defaults,
        # built first otherwise, load the Smart Turn model (~55 ms of CPU holding the loop, and
        # every other session's pacing with it, each time a session opens; over a second the first time).
        recommended = llm.service_metadata_frame().user_turn_strategies
        if recommended is not None:  # as realtime mode wants them (Pipecat warns when it has to change them)
            for strategy in recommended.stop or []:
                if getattr(strategy, "wait_for_transcript", False):  # (each strategy that has it declares its own)
                    setattr(strategy, "wait_for_transcript", False)
        pair = LLMContextAggregatorPair(context, user_params=LLMUserAggregatorParams(user_turn_strategies=recommended))
        self.input = PacedInput(
            run.clock,
            sample_rate=run.rate,
            chunk_ms=run.config.chunk_ms,
            preroll_ms=run.config.preroll_ms,
            on_user_chunk=run.on_user_chunk,
        )
        self.output = PacedOutput(  # a full-duplex model's output never stops: its silence is not played
            run.clock, sample_rate=run.rate, on_bot_audio=run.on_bot_audio, on_interruption=run.on_truncated,
            drop_silence=run.provider.caps.duplex,
        )
        own = run.provider.session_pipeline(self.spec, llm, self.input, self.output)  # a cascade composes its own
        if own is not None:
            for processor in own.processors:
                if id(processor) in own.taps:
                    self.tap(processor, own.taps[id(processor)])
                if isinstance(processor, (STTService, TTSService)):  # what each part says it used
                    tap_usage(processor, STT_USAGE if isinstance(processor, STTService) else TTS_USAGE, run.on_usage)
        # The user aggregator goes before the paced input when nothing it reads comes from there:
        # its turns are the service's (external strategies read only the service's turn frames)
        # and no user-speaking brackets are pushed. The user's 20 ms chunks then go straight to
        # the service: one hop instead of two, 50 times a second (tests/test_session_pipeline.py).
        audio_only = isinstance(recommended, ExternalUserTurnStrategies) and not run.provider.client_turns(run.config)
        first = [pair.user(), self.input] if audio_only else [self.input, pair.user()]
        worker = self.worker(
            own.processors if own is not None else [*first, llm, self.output, pair.assistant()],
            PipelineParams(
                audio_in_sample_rate=run.rate,
                audio_out_sample_rate=run.rate,
                enable_metrics=True,
                enable_usage_metrics=True,
            ),
        )

        @worker.event_handler("on_pipeline_error")
        async def _on_error(_worker: PipelineWorker, frame: ErrorFrame) -> None:
            run.frames.on_provider_error(self, frame)

        task = await self.run_worker(worker, f"session-{self.number}", first=[LLMRunFrame()])
        started = asyncio.create_task(self.input.started.wait())
        done, _ = await asyncio.wait({started, task}, timeout=PIPELINE_START_S, return_when=asyncio.FIRST_COMPLETED)
        if started not in done:
            started.cancel()
            raise RunError(f"session {self.number}: the pipeline did not start")

    def connection_usage(self) -> Usage:
        """The wall seconds it has been connected: what a service billed by the minute charges."""
        seconds = max(0.0, self.run.clock.t_ms() - self.opened_ms) / 1000.0 / self.run.clock.speed
        return Usage(service="session", model=self.spec.model, session_seconds=round(seconds, 3))

    def alive(self) -> bool:
        return self.failed is None and self.running() and self.llm is not None and self.run.provider.is_alive(self.llm)

    async def close(self) -> None:
        if self.input is not None:
            self.input.clear()
        await super().close()
