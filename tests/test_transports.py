"""The paced null speaker with bot audio at another rate than the run's (Ultravox's 48 kHz)."""

from __future__ import annotations

import asyncio

import numpy as np
from pipecat.frames.frames import TTSAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.workers.runner import WorkerRunner

from runners.transports import PacedOutput, RunClock


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
