"""The paced ends of a session in a real Pipecat pipeline: the null speaker with bot audio at
another rate than the run's (Ultravox's 48 kHz), the input's teardown, and both ends giving the
loop back when they are behind schedule."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

import numpy as np
import pytest
from pipecat.frames.frames import Frame, StartFrame, TTSAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from runners.transports import CATCH_UP_CHUNKS, HAVE_TIMERFD, DeadlineTimer, PacedInput, PacedOutput, RunClock


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


class _Count(FrameProcessor):
    """A sink that only passes frames on (the pipeline's end)."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)


async def _pipeline(*processors: FrameProcessor) -> tuple[WorkerRunner, PipelineWorker, asyncio.Task]:
    worker = PipelineWorker(Pipeline(list(processors)), params=PipelineParams(audio_out_sample_rate=24000),
                            idle_timeout_secs=None, enable_rtvi=False, enable_turn_tracking=False)  # fmt: skip
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    return runner, worker, asyncio.create_task(runner.run())


async def _held_then_rounds(count: Callable[[], int], hold_s: float, rounds: int = 400) -> tuple[int, list[int]]:
    """Hold the loop `hold_s` (as a starved process is held) with a real signal arriving meanwhile;
    then (what `count` moved before the signal's handler ran, how much it moved per selector round
    for `rounds` rounds). A task that sleeps 0 runs once per round of the loop, so its steps are rounds."""
    loop = asyncio.get_running_loop()
    handled = loop.create_future()
    at_hold: list[int] = []

    def hold() -> None:
        at_hold.append(count())
        os.kill(os.getpid(), signal.SIGUSR1)  # delivered through the loop's selector, as SIGTERM is
        time.sleep(hold_s)

    loop.add_signal_handler(signal.SIGUSR1, lambda: handled.done() or handled.set_result(count()))
    try:
        loop.call_soon(hold)
        steps = []
        last = None
        for _ in range(rounds):
            await asyncio.sleep(0)
            if at_hold:
                now = count()
                if last is not None:
                    steps.append(now - last)
                last = now
        # an old pacer never catches up at this speed: its handler would never run
        before_handler = await asyncio.wait_for(handled, 10)
    finally:
        loop.remove_signal_handler(signal.SIGUSR1)
    return before_handler - at_hold[0], steps


async def test_a_late_pacer_gives_the_loop_back_for_every_chunk():
    """Issue 23 (4): a pacer far behind schedule (the loop held 1 s at 50x: 2,500 chunks late)
    used to push every late chunk in one step of the loop (Pipecat's pushes never suspend), so the
    SIGTERM handler and every other task waited until it caught up, which on a busy machine was
    never. Now a bounded burst of late chunks goes out between selector rounds, and their
    lateness is recorded."""
    clock = RunClock(50.0)
    inp = PacedInput(clock)
    runner, _, task = await _pipeline(inp, _Count())
    try:
        await asyncio.wait_for(inp.started.wait(), 10)
        await asyncio.sleep(0.05)
        sent_before_signal, steps = await _held_then_rounds(lambda: inp.chunks_sent, 1.0)
        # a signal's handler runs two rounds after its wake-up byte (read, then called): a burst each
        assert sent_before_signal <= 3 * CATCH_UP_CHUNKS, f"{sent_before_signal} chunks went out before the signal handler ran"
        assert max(steps) <= CATCH_UP_CHUNKS + 1, f"{max(steps)} chunks in one round of the loop"
        assert max(inp.lateness_ms) >= 900 and clock.pace.worst_lag_ms >= 45_000  # recorded: 1 s wall, 50 s of audio
    finally:
        await runner.cancel("test over")
        await asyncio.wait_for(task, 10)


async def test_a_late_speaker_gives_the_loop_back_for_every_frame():
    """The same for the null speaker, on a machine where each frame costs more wall time than
    it plays (1 ms against 0.4 ms at 50x): its writes never slept, so Pipecat's output loop took
    the whole queued reply in one step. Now a bounded burst goes out between selector rounds."""
    played: list[float] = []

    def heavy(pcm: bytes, t: float) -> None:
        played.append(t)
        time.sleep(0.001)  # a starved process: the frame's own work outlasts its 0.4 ms

    out = PacedOutput(RunClock(50.0), sample_rate=24000, on_bot_audio=heavy)
    runner, worker, task = await _pipeline(out, _Count())
    tone = (0.3 * 32767 * np.sin(2 * np.pi * 220 * np.arange(24000 * 20) / 24000)).astype("<i2").tobytes()  # 20 s
    try:
        await worker.queue_frames([TTSAudioRawFrame(audio=tone[i : i + 9600], sample_rate=24000, num_channels=1)
                                   for i in range(0, len(tone), 9600)])  # fmt: skip
        steps: list[int] = []  # frames written per round of the loop (a task sleeping 0 runs once a round)
        while len(played) < 200 and len(steps) < 20_000:
            before = len(played)
            await asyncio.sleep(0)
            steps.append(len(played) - before)
        assert len(played) >= 200, "the queued reply is playing"
        assert max(steps) <= CATCH_UP_CHUNKS + 1, f"{max(steps)} frames written in one round of the loop"
    finally:
        await runner.cancel("test over")
        await asyncio.wait_for(task, 10)


@pytest.mark.parametrize("precise", [True, False], ids=["kernel-timer", "sleep-and-spin"])
async def test_the_pacers_timer_never_wakes_early_and_always_gives_the_loop_a_round(precise: bool):
    """Both ways of waiting for a chunk's deadline: never before it (a chunk sent early would put
    user audio on the timeline before its place), and a deadline already passed still lets the
    rest of the loop run once (a late pacer must not hold the loop)."""
    if precise and not HAVE_TIMERFD:
        pytest.skip("no timerfd on this OS: the pacer sleeps and spins")
    timer = DeadlineTimer(0.0015, precise=precise)
    rounds = 0

    async def count_rounds() -> None:
        nonlocal rounds
        while True:
            rounds += 1
            await asyncio.sleep(0)

    counter = asyncio.create_task(count_rounds())
    try:
        for i in range(20):
            target = time.monotonic() + 0.0003 * i
            await timer.sleep_until(target)
            assert time.monotonic() >= target
        before = rounds
        await timer.sleep_until(time.monotonic() - 1.0)
        await timer.sleep_until(time.monotonic() - 1.0)
        assert rounds > before, "a passed deadline held the loop"
    finally:
        counter.cancel()
        timer.close()


@pytest.mark.skipif(not HAVE_TIMERFD or not os.path.isdir("/proc/self/fd"), reason="the kernel timer is Linux's")
async def test_a_stopped_pacer_gives_its_timer_back():
    """Each session's pacer holds a kernel timer while it plays: a long campaign opens hundreds of
    sessions in one process, so a stopped pacer must close it."""
    open_fds = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        inp = PacedInput(RunClock(20.0))
        runner, _, task = await _pipeline(inp, _Count())
        await asyncio.wait_for(inp.started.wait(), 10)
        await asyncio.sleep(0.05)
        await runner.cancel("test over")
        await asyncio.wait_for(task, 10)
    assert len(os.listdir("/proc/self/fd")) <= open_fds


@pytest.mark.skipif(not HAVE_TIMERFD, reason="the kernel timer is Linux's")
async def test_pacers_on_one_grid_wake_their_loop_once_a_period_and_never_early(monkeypatch: pytest.MonkeyPatch):
    """Several sessions' pacers in one process start on the process's grid: their deadlines
    coincide, and the loop's one timer serves them all in one wake (each wake of a worker on a busy
    machine may wait for a core); still none sends before its deadline."""
    from arena_tui.spine import grid
    from runners import transports

    monkeypatch.setattr(grid, "_phase", 0.37)
    fires = 0
    fired = transports._LoopTimer._fired

    def counted(self: transports._LoopTimer) -> None:
        nonlocal fires
        fires += 1
        fired(self)

    monkeypatch.setattr(transports._LoopTimer, "_fired", counted)
    clock = RunClock(1.0)
    inputs = [PacedInput(clock, preroll_ms=0.0) for _ in range(4)]
    started = []
    for inp in inputs:  # sessions that start at different moments
        started.append(await _pipeline(inp, _Count()))
        await asyncio.wait_for(inp.started.wait(), 10)
        await asyncio.sleep(0.007)
    period = inputs[0].chunk_ms / 1000.0
    for inp in inputs:  # each starts on the grid: 0.37 of the way into a period
        first = clock.mono_at(inp.start_ms)
        assert abs((first / period - 0.37) - round(first / period - 0.37)) < 1e-6, first
    fires0, chunks0 = fires, sum(inp.chunks_sent for inp in inputs)
    await asyncio.sleep(0.5)
    woke, chunks = fires - fires0, sum(inp.chunks_sent for inp in inputs) - chunks0
    try:
        assert chunks >= 4 * 20, chunks
        assert woke <= chunks / 3, f"{woke} timer wakes for {chunks} chunks of 4 pacers on one grid"
        assert all(x >= 0.0 for inp in inputs for x in inp.lateness_ms), "a chunk went out before its deadline"
    finally:
        for runner, _, task in started:
            await runner.cancel("test over")
            await asyncio.wait_for(task, 10)
    assert transports._LoopTimer._of.get(asyncio.get_running_loop()) is None, "the last pacer gave the timer back"
