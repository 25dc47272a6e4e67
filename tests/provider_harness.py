"""A minimal real Pipecat pipeline around one provider service, for exercising it against a fake.

    feeder (20 ms InputAudioRawFrames: queued WAVs, zeros in between)
      → user context aggregator → the real LLM service → collector → assistant aggregator

This is not the engine: no timeline, no pacing of bot audio. It exists so each provider's
service class can be proven against its local fake in a few seconds.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import soxr
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    ErrorFrame,
    Frame,
    FunctionCallResultFrame,
    InputAudioRawFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMTextFrame,
    StartFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

FRAME_MS = 20
GREETING = "Greet the user briefly."  # the reference harness's greeting handshake


def greeting_context() -> LLMContext:
    """A context whose one user message asks for the greeting (turn -1)."""
    return LLMContext(messages=[{"role": "user", "content": GREETING}])


def shared_root(repo_root: Path | None = None) -> Path:
    """The read-only Audio Arena data: $ARENA_TUI_SHARED, else ../shared/audio-arena from the repo."""
    env = os.environ.get("ARENA_TUI_SHARED")
    if env:
        return Path(env)
    root = repo_root or Path(__file__).resolve().parents[2]
    return (root / ".." / "shared" / "audio-arena").resolve()


def read_wav_pcm16(path: Path, sample_rate: int) -> bytes:
    """Mono PCM16 at `sample_rate` (the Arena WAVs carry 0xFFFFFFFF sizes; soundfile copes)."""
    data, rate = sf.read(str(path), dtype="int16", always_2d=True)
    mono = data[:, 0]
    if rate != sample_rate:
        mono = soxr.resample(mono, rate, sample_rate)
    return np.asarray(mono, dtype="<i2").tobytes()


class WavFeeder(FrameProcessor):
    """Pipeline source: a steady 20 ms frame stream, user audio when queued, digital silence otherwise."""

    def __init__(self, sample_rate: int, speed: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.sample_rate = sample_rate
        self.speed = speed
        self._queue: list[bytes | type[Frame]] = []  # markers are created when pushed, in order
        self._task: asyncio.Task[None] | None = None
        self.sent_user_ms = 0.0
        self.errors: list[str] = []  # ErrorFrames travel upstream and end here
        self._idle = asyncio.Event()
        self._idle.set()

    def play(self, pcm: bytes, *, mark_turn: bool = False) -> None:
        """Queue user audio; it goes out after whatever is queued already.

        `mark_turn` brackets it with User{Started,Stopped}SpeakingFrame, as the engine does
        for client-VAD providers (it knows where each user WAV starts and ends).
        """
        step = self.sample_rate * FRAME_MS // 1000 * 2
        if mark_turn:
            self._queue.append(UserStartedSpeakingFrame)
        for i in range(0, len(pcm), step):
            self._queue.append(pcm[i : i + step].ljust(step, b"\0"))
        if mark_turn:
            self._queue.append(UserStoppedSpeakingFrame)
        self._idle.clear()

    async def played(self) -> None:
        await self._idle.wait()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, ErrorFrame):
            self.errors.append(frame.error)
        await self.push_frame(frame, direction)
        if isinstance(frame, StartFrame) and self._task is None:
            self._task = self.create_task(self._pump())
        elif isinstance(frame, (EndFrame, CancelFrame)) and self._task:
            await self.cancel_task(self._task)
            self._task = None

    async def _pump(self) -> None:
        step = self.sample_rate * FRAME_MS // 1000 * 2
        silence = b"\0" * step
        start = time.monotonic()
        n = 0
        while True:
            if self._queue and isinstance(self._queue[0], type):
                await self.push_frame(self._queue.pop(0)())
                continue
            if self._queue:
                chunk = self._queue.pop(0)
                assert isinstance(chunk, bytes)
                self.sent_user_ms += FRAME_MS
            else:
                chunk = silence
                self._idle.set()
            await self.push_frame(InputAudioRawFrame(audio=chunk, sample_rate=self.sample_rate, num_channels=1))
            n += 1
            delay = start + n * FRAME_MS / 1000 / self.speed - time.monotonic()
            await asyncio.sleep(max(0.0, delay))


class Collector(FrameProcessor):
    """Records what the service pushed downstream, for assertions."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.audio_bytes = 0
        self.audio_rate = 0
        self.text = ""  # TTSTextFrame text (the spoken transcript)
        self.llm_text = ""
        self.user_transcripts: list[str] = []
        self.responses_ended = 0
        self.errors: list[str] = []
        self.tool_results: list[Any] = []
        self.frames: list[str] = []

    @property
    def audio_ms(self) -> float:
        return self.audio_bytes / 2 / self.audio_rate * 1000 if self.audio_rate else 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio_bytes += len(frame.audio)
            self.audio_rate = frame.sample_rate
        elif isinstance(frame, TTSTextFrame):
            self.text += frame.text if not self.text or frame.text.startswith(" ") else " " + frame.text
        elif isinstance(frame, LLMTextFrame):
            self.llm_text += frame.text
        elif isinstance(frame, TranscriptionFrame):
            self.user_transcripts.append(frame.text)
        elif isinstance(frame, LLMFullResponseEndFrame):
            self.responses_ended += 1
        elif isinstance(frame, ErrorFrame):
            self.errors.append(frame.error)
        elif isinstance(frame, FunctionCallResultFrame):
            self.tool_results.append(frame.result)
        if not isinstance(frame, InputAudioRawFrame):
            self.frames.append(type(frame).__name__)
        await self.push_frame(frame, direction)


class ServiceRig:
    """Runs `service` in the minimal pipeline; `async with ServiceRig(...) as rig:`."""

    def __init__(
        self,
        service: FrameProcessor,
        *,
        context: LLMContext | None = None,
        sample_rate: int = 24000,
        speed: float = 1.0,
        send_context: bool = True,
    ):
        self.service = service
        self.context = context if context is not None else greeting_context()
        self.sample_rate = sample_rate
        self.feeder = WavFeeder(sample_rate, speed)
        self.collector = Collector()
        self.send_context = send_context
        pair = LLMContextAggregatorPair(self.context)
        self.pipeline = Pipeline([self.feeder, pair.user(), service, self.collector, pair.assistant()])
        self.worker = PipelineWorker(
            self.pipeline,
            params=PipelineParams(audio_in_sample_rate=sample_rate),
            idle_timeout_secs=None,
            enable_rtvi=False,
            check_dangling_tasks=False,
        )
        self.runner = WorkerRunner(handle_sigint=False)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ServiceRig:
        await self.runner.add_workers(self.worker)
        self._task = asyncio.create_task(self.runner.run())
        if self.send_context:
            # Gotcha 1 of the Pipecat notes: queue the context first or tools go missing.
            await self.worker.queue_frame(LLMContextFrame(self.context))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.worker.cancel()
        if self._task:
            try:
                await asyncio.wait_for(self._task, timeout=15)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    @property
    def errors(self) -> list[str]:
        """Every ErrorFrame seen, upstream (where the services push them) or downstream."""
        return self.feeder.errors + self.collector.errors

    async def wait_until(self, cond: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while not (value := cond()):
            if self._task and self._task.done():
                raise RuntimeError(f"pipeline ended while waiting for {what or cond}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what or cond}; collector saw {self.collector.frames[-15:]}")
            await asyncio.sleep(0.02)
        return value


def tools_schema(tools: list[dict[str, Any]]) -> Any:
    """Benchmark `tools.json` entries as Pipecat's provider-neutral ToolsSchema."""
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema  # deferred: Pipecat loads only when a harness builds tools
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema  # deferred: Pipecat loads only when a harness builds tools

    return ToolsSchema(
        standard_tools=[
            FunctionSchema(
                name=t["name"],
                description=t.get("description", ""),
                properties=t.get("parameters", {}).get("properties", {}),
                required=t.get("parameters", {}).get("required", []),
            )
            for t in tools
        ]
    )


def scripted_tool_handler(results: dict[str, Any], seen: list[tuple[str, dict[str, Any]]]):
    """A Pipecat function handler answering each call with `results[name]` (what a benchmark scripts)."""

    async def handler(params: Any) -> None:
        seen.append((params.function_name, dict(params.arguments)))
        await params.result_callback(results.get(params.function_name, {"status": "not_available"}))

    return handler
