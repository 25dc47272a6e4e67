"""The paced ends of a session in a real Pipecat pipeline: the null speaker with bot audio at
another rate than the run's (Ultravox's 48 kHz), and the input's teardown."""

from __future__ import annotations

import asyncio

import numpy as np
from pipecat.frames.frames import Frame, StartFrame, TTSAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from runners.transports import PacedInput, PacedOutput, RunClock


async def test_output_at_another_rate_is_played_and_then_not_busy():
    clock = RunClock(4.0)
    played: list[tuple[int, float]] = []
    out = PacedOutput(clock, sample_rate=24000, on_bot_audio=lambda pcm, t: played.append((len(pcm), t)))
    worker = PipelineWorker(
        Pipeline([out]),
        params=PipelineParams(audio_out_sample_rate=24000),
        idle_timeout_secs=None,
        enable_rtvi=False,
        enable_turn_tracking=False,
    )
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    task = asyncio.create_task(runner.run())
    tone = (0.3 * 32767 * np.sin(2 * np.pi * 220 * np.arange(48000) / 48000)).astype("<i2").tobytes()  # 1 s at 48 kHz
    frames = [TTSAudioRawFrame(audio=tone[i : i + 9600], sample_rate=48000, num_channels=1) for i in range(0, len(tone), 9600)]
    await worker.queue_frames(frames)
    try:
        for _ in range(200):
            await asyncio.sleep(0.02)
            if played and not out.busy():
                break
        played_ms = sum(n for n, _ in played) / 2 / 24000 * 1000
        assert not out.busy(), ("a rate change must not leave the speaker busy forever", out._ms_in, out._ms_out)
        assert 900 <= played_ms <= 1000, played_ms  # at the run's rate (the resampler holds back ~40 ms)
    finally:
        await runner.cancel("test over")
        await asyncio.wait_for(task, 10)


class _Connecting(FrameProcessor):
    """Holds the StartFrame the way a service does while it connects (set `connected` to let it on)."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = asyncio.Event()
        self.connected = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, StartFrame):
            self.holding.set()
            await self.connected.wait()
        await self.push_frame(frame, direction)


async def test_input_cancelled_while_a_later_processor_still_starts_stops_pacing():
    """Pipecat only cleans up a pipeline cancelled before its StartFrame reached the end (no
    CancelFrame reaches the input): the pacer must stop then too, not outlive the session (CI saw
    `dangling tasks detected: ['PacedInput#0::paced-input']` on a run stopped at its first write)."""
    inp = PacedInput(RunClock(20.0))
    later = _Connecting()
    worker = PipelineWorker(Pipeline([inp, later]), params=PipelineParams(), idle_timeout_secs=None,
                            enable_rtvi=False, enable_turn_tracking=False)  # fmt: skip
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    task = asyncio.create_task(runner.run())
    await asyncio.wait_for(later.holding.wait(), 10)
    await asyncio.wait_for(inp.started.wait(), 10)  # the input is pacing: its start came first
    await runner.cancel("stopped while connecting")
    await asyncio.wait_for(task, 10)
    assert inp._task is None
    assert not [t for t in asyncio.all_tasks() if "paced-input" in t.get_name()]
