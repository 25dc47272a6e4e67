"""Paced file input and paced null output: the two ends of a session, on the run's one clock.

Both pace themselves against absolute deadlines on `RunClock` (never by accumulating
sleeps), so input placement and bot playback are exact in AUDIO time whatever `--speed`
is, and every measurement (latency, overlap, levels) reads the same timeline.

Neither ever sends a frame without a real await first, late or not. Pipecat's pushes do not
suspend (its queues are unbounded and a queue with frames in it hands one over without a
wait), so a pacer that is behind schedule and skips its sleep would push chunk after chunk in
one step of the loop: the selector is never polled, and no signal handler, watchdog or other
session runs until the pacer has caught up, which at high speed on a busy machine is never
(each chunk costs more wall time than the 0.4 ms it stands for at 50x). So catching up is
bounded (`CatchUp`): at most `CATCH_UP_CHUNKS` late chunks or `CATCH_UP_WALL_S` of wall time
between two selector rounds, and every wait (`DeadlineTimer`) is a selector round even when its
deadline has passed; the lateness is recorded (`PacedInput.lateness_ms`, the clock's `PaceKeeper`).
Why not one chunk per round: every round costs the loop's own overhead once per stage of the
pipeline, and at 25x on a shared 2-core machine one chunk per round fell 1.2-1.9 s behind in a
3-turn run where the old unbounded burst stayed within 0.1-0.25 s and a burst of 8-25 mostly does.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import os
import sys
import time
from collections import deque
from collections.abc import Callable

import numpy as np
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameCallback, FrameDirection
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import TransportParams

from arena_tui.spine.events import Interval
from arena_tui.spine.grid import next_tick
from arena_tui.spine.slices import ask_short_slice

from arena_tui.spine.settings import Pace
from .pace import PaceKeeper

#: late chunks (or frames) a pacer may send between two selector rounds (half a second of audio),
#: and the wall time it may spend on them: bounded, and wide enough to catch up at 25x (see above)
CATCH_UP_CHUNKS = 25
CATCH_UP_WALL_S = 0.005

#: lateness samples a PacedInput keeps (the newest; ~22 min of audio at 20 ms): a run's memory does not grow with its length
LATENESS_KEPT = 1 << 16


class RunClock:
    """Monotonic time since run start, scaled by speed so that `t_ms()` is AUDIO time.

    Its `pace` follows how late the paced input goes out on it; every loop of a run ticks on
    `sleep`, which raises `pace.LostPace` once the run has lost pace (the rule: `runners/pace.py`).
    """

    def __init__(self, speed: float = 1.0, start_ms: float = 0.0, pace: Pace | None = None) -> None:
        """`start_ms`: where the timeline starts (a resumed run continues after its stored events);
        `pace`: the bound past which the run has lost pace (None: none, e.g. a text run)."""
        self.speed = speed
        self.t0 = time.monotonic() - start_ms / 1000.0 / speed
        self.pace = PaceKeeper(speed, pace)

    def t_ms(self) -> float:
        return (time.monotonic() - self.t0) * 1000.0 * self.speed

    def mono_at(self, t_ms: float) -> float:
        return self.t0 + t_ms / 1000.0 / self.speed

    async def sleep(self, ms: float) -> None:
        """Sleep `ms` of AUDIO time; raises `LostPace` if the run lost pace meanwhile."""
        await asyncio.sleep(max(0.0, ms) / 1000.0 / self.speed)
        self.pace.check()


class CatchUp:
    """How far a late pacer may go without giving the loop back: `CATCH_UP_CHUNKS` items or
    `CATCH_UP_WALL_S` seconds since it last waited, whichever comes first."""

    def __init__(self) -> None:
        self._n = 0
        self._since = time.monotonic()

    def may_go_on(self) -> bool:
        """One more late item in this step of the loop?"""
        if self._n < CATCH_UP_CHUNKS and time.monotonic() - self._since < CATCH_UP_WALL_S:
            self._n += 1
            return True
        return False

    def waited(self) -> None:
        """The pacer gave the loop back (a selector round went by)."""
        self._n = 0
        self._since = time.monotonic()


class _Clip:
    def __init__(self, pcm: bytes, future: asyncio.Future[Interval], marks: list[tuple[float, Callable[[], Frame]]],
                 at_ms: float | None = None, on_start: Callable[[float], None] | None = None) -> None:
        self.pcm = pcm
        self.pos = 0
        self.start_ms: float | None = None
        self.future = future
        self.marks = sorted(marks, key=lambda m: m[0])  # (ms into the clip, frame factory) pushed once played
        self.at_ms = at_ms  # not before this timeline time (None: at the next chunk)
        self.on_start = on_start  # told where the clip starts, before its first chunk is handed on


#: a kernel timer the loop's selector waits on (Linux): wakes to the microsecond without spinning
HAVE_TIMERFD = hasattr(os, "timerfd_create")


class DeadlineTimer:
    """Sleeps until a monotonic instant, and always gives the loop at least one selector round,
    even when the instant has passed (see the module docstring: a late pacer must not hold the loop).

    asyncio's epoll wait rounds its timeout UP to whole ms, so a plain sleep wakes ~0.5 ms late on
    average. Where the OS has one (`HAVE_TIMERFD`), a kernel timer armed at the instant and watched
    by the loop's own selector wakes the loop on time instead (tens of µs) at no CPU cost: one per
    event loop (`_LoopTimer`), shared by every pacer on it, so the pacers of one process (on one grid,
    `arena_tui.spine.grid`) wake it once a period, not once each. Elsewhere, or with `precise=False`,
    the coarse sleep ends `spin_s` early and the rest is spent yielding to the loop (other tasks keep
    running, but a session spun ~1.5 ms of every 20: a third of what a 1x session cost).
    """

    def __init__(self, spin_s: float, precise: bool = HAVE_TIMERFD) -> None:
        self.spin_s = spin_s
        self._shared: _LoopTimer | None = None
        if sys.version_info >= (3, 13) and precise and HAVE_TIMERFD:  # (3.13 added os.timerfd_*)
            self._shared = _LoopTimer.join(asyncio.get_running_loop())

    async def sleep_until(self, target: float) -> None:
        if self._shared is None:
            delay = target - time.monotonic() - self.spin_s
            await asyncio.sleep(delay if delay > 0 else 0)
            while time.monotonic() < target:
                await asyncio.sleep(0)
            return
        if time.monotonic() >= target:
            await asyncio.sleep(0)
            return
        await self._shared.wait(target)

    def close(self) -> None:
        if self._shared is not None:
            self._shared.leave()
            self._shared = None


class _LoopTimer:
    """One timerfd per event loop, armed at the earliest deadline any pacer waits for; each time it
    fires it wakes every waiter whose deadline has come (deadlines on one grid come together), then
    re-arms for the next. Closed when its last pacer leaves: a long campaign opens hundreds of
    sessions in one process, and a worker holds no timer between them."""

    _of: dict[asyncio.AbstractEventLoop, _LoopTimer] = {}
    _fd: int

    @classmethod
    def join(cls, loop: asyncio.AbstractEventLoop) -> _LoopTimer:
        timer = cls._of.get(loop)
        if timer is None:
            timer = cls._of[loop] = cls(loop)
        timer._users += 1
        return timer

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._users = 0
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []  # a heap: (deadline, order, future)
        self._order = itertools.count()
        self._armed: float | None = None
        if sys.version_info < (3, 13):  # (never: joined only where there is a timerfd, 3.13 on)
            raise RuntimeError("no timerfd before Python 3.13")
        self._fd = os.timerfd_create(time.CLOCK_MONOTONIC, flags=os.TFD_NONBLOCK | os.TFD_CLOEXEC)
        loop.add_reader(self._fd, self._fired)

    def wait(self, target: float) -> asyncio.Future[None]:
        """A future done once the monotonic clock has reached `target`."""
        fut: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._waiters, (target, next(self._order), fut))
        if self._armed is None or target < self._armed:
            self._arm(target)
        return fut

    def _arm(self, target: float) -> None:
        self._armed = target
        if sys.version_info >= (3, 13):  # (always: a timerfd is only ever made there)
            os.timerfd_settime(self._fd, flags=os.TFD_TIMER_ABSTIME, initial=target)

    def _fired(self) -> None:
        try:
            os.read(self._fd, 8)
        except BlockingIOError:  # re-armed since it fired
            return
        self._armed = None
        now = time.monotonic()
        waiters = self._waiters
        while waiters and (waiters[0][0] <= now or waiters[0][2].done()):  # due, or given up (cancelled)
            fut = heapq.heappop(waiters)[2]
            if not fut.done():
                fut.set_result(None)
        if waiters:
            self._arm(waiters[0][0])

    def leave(self) -> None:
        self._users -= 1
        if self._users > 0:
            return
        self._of.pop(self._loop, None)
        for _, _, fut in self._waiters:
            fut.cancel()
        with contextlib.suppress(Exception):  # the loop may be closing already
            self._loop.remove_reader(self._fd)
        os.close(self._fd)


class PacedInput(BaseInputTransport):
    """Streams 20 ms chunks on one absolute schedule: queued user clips, else silence.

    `play(pcm)` queues a clip; its future resolves with where it was placed on the timeline
    once its last chunk has gone out.
    """

    #: how long before each deadline to stop sleeping and yield-spin instead, without a kernel
    #: timer (`DeadlineTimer`); `precise`: use one where the OS has it
    spin_s = 0.0015
    precise = HAVE_TIMERFD

    def __init__(
        self,
        clock: RunClock,
        *,
        sample_rate: int = 24000,
        chunk_ms: float = 20.0,
        preroll_ms: float = 100.0,
        on_user_chunk: Callable[[bytes, float], None] | None = None,
        **kwargs,
    ) -> None:
        # Direct: a frame from the stage before (the user aggregator, when it goes first) passes on in
        # its pusher's task. This stage adds nothing to a frame it passes, and queued here one was
        # lost: a Voice Live turn's second tool call, every time (tests/test_provider_realtime_new.py).
        super().__init__(TransportParams(audio_in_enabled=True, audio_in_sample_rate=sample_rate),
                         enable_direct_mode=True, **kwargs)
        self.preroll_ms = preroll_ms  # silence always sent first, whatever is queued
        self.clock = clock
        self.rate = sample_rate
        self.chunk_ms = chunk_ms
        self.chunk_bytes = int(sample_rate * chunk_ms / 1000) * 2
        self._silence = bytes(self.chunk_bytes)
        self._clips: deque[_Clip] = deque()
        self._due: list[Callable[[], Frame]] = []
        self._on_user_chunk = on_user_chunk
        self._task: asyncio.Task | None = None
        self.start_ms: float | None = None  # timeline time of chunk 0
        self.chunks_sent = 0
        # wall ms each chunk went out after its deadline (the newest LATENESS_KEPT)
        self.lateness_ms: deque[float] = deque(maxlen=LATENESS_KEPT)
        self._worst_late_ms = 0.0  # the most late any chunk went out since `take_lateness`
        self._worst_clip_late_ms = 0.0  # ... and a chunk carrying queued audio (the user's speech)
        self.started = asyncio.Event()

    def play(self, pcm: bytes, marks: list[tuple[float, Callable[[], Frame]]] | None = None, *,
             at_ms: float | None = None, on_start: Callable[[float], None] | None = None) -> asyncio.Future[Interval]:
        """Queue a clip. `marks` are (offset ms into the clip, frame factory): the frame is made
        and pushed right after the chunk containing the offset has gone out, e.g. user-speaking
        brackets at speech bounds (made late on purpose: frame ids order frames in time).
        `at_ms`: the clip starts there on the timeline, to the sample (silence before it; at the
        next chunk when that time has passed); `on_start(start_ms)` says where it did start."""
        fut: asyncio.Future[Interval] = asyncio.get_running_loop().create_future()
        self._clips.append(_Clip(pcm, fut, marks or [], at_ms, on_start))
        return fut

    def take_lateness(self) -> tuple[float, float]:
        """(any chunk, a chunk of queued audio): the most wall ms one went out after its deadline
        since the last call (then reset). Late silence only delays silence; late queued audio
        may put a pause into the user's speech that the user never made."""
        worst = (self._worst_late_ms, self._worst_clip_late_ms)
        self._worst_late_ms = self._worst_clip_late_ms = 0.0
        return worst

    def playing(self) -> bool:
        return bool(self._clips)

    def discard(self, future: asyncio.Future[Interval]) -> None:
        """Drop the queued clip `play` returned this future for, unless it has begun (it is cancelled)."""
        for clip in list(self._clips):
            if clip.future is future and clip.start_ms is None:
                self._clips.remove(clip)
                future.cancel()

    def clear(self) -> None:
        """Drop queued clips (the session is going away); their futures are cancelled."""
        while self._clips:
            self._clips.popleft().future.cancel()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        if self._task is None:
            self._task = self.create_task(self._pace(), name="paced-input")

    async def stop(self, frame: EndFrame) -> None:
        await self._stop_pacing()
        await super().stop(frame)

    async def cancel(self, frame: CancelFrame) -> None:
        await self._stop_pacing()
        await super().cancel(frame)

    async def cleanup(self) -> None:
        # A pipeline cancelled while its StartFrame is still on the way (a service connecting)
        # never gets the CancelFrame here: it is only cleaned up, and the pacer must stop then too.
        await self._stop_pacing()
        await super().cleanup()

    async def push_audio_frame(self, frame: InputAudioRawFrame) -> None:
        """Straight down the pipeline from the pacer: the base transport would queue each chunk for
        its own audio task, which only runs an input filter we do not have, so every chunk would
        wait a task switch more (and cost one) before it left."""
        if self._params.audio_in_filter is not None:
            await super().push_audio_frame(frame)
        elif self._params.audio_in_enabled and not self._paused and self._params.audio_in_passthrough:
            await self.push_frame(frame)

    async def _stop_pacing(self) -> None:
        if self._task:
            await self.cancel_task(self._task)
            self._task = None
        self.clear()

    async def _pace(self) -> None:
        clock = self.clock
        ask_short_slice()  # this loop's thread paces: picked sooner when its timer fires on a busy machine
        # the first chunk on this process's grid: its pacers wake together (`arena_tui.spine.grid`)
        first = next_tick(time.monotonic(), self.chunk_ms / 1000.0 / clock.speed)
        self.start_ms = (first - clock.t0) * 1000.0 * clock.speed
        self.started.set()
        # (without a kernel timer) spin at most a tenth of the chunk interval, so fast runs do not spin all the time
        timer = DeadlineTimer(min(self.spin_s, 0.1 * self.chunk_ms / 1000.0 / clock.speed), self.precise)
        try:
            await self._pace_chunks(clock, timer)
        finally:
            timer.close()

    async def _pace_chunks(self, clock: RunClock, timer: DeadlineTimer) -> None:
        assert self.start_ms is not None
        catch_up = CatchUp()
        n = 0
        while True:
            deadline_ms = self.start_ms + n * self.chunk_ms
            target = clock.mono_at(deadline_ms)
            if time.monotonic() < target or not catch_up.may_go_on():
                await timer.sleep_until(target)  # a selector round, even when late
                catch_up.waited()
            late = (time.monotonic() - target) * 1000.0
            self.lateness_ms.append(late)
            self._worst_late_ms = max(self._worst_late_ms, late)
            clock.pace.note(late)
            pcm = self._take_chunk(deadline_ms)
            if pcm is not self._silence:
                self._worst_clip_late_ms = max(self._worst_clip_late_ms, late)
            n += 1
            self.chunks_sent = n
            await self.push_audio_frame(InputAudioRawFrame(audio=pcm, sample_rate=self.rate, num_channels=1))
            while self._due:
                await self.push_frame(self._due.pop(0)())

    def _take_chunk(self, t_ms: float) -> bytes:
        assert self.start_ms is not None
        if not self._clips or t_ms < self.start_ms + self.preroll_ms - 1e-6:
            return self._silence
        clip = self._clips[0]
        lead = b""
        if clip.start_ms is None:
            if clip.at_ms is not None and clip.at_ms >= t_ms + self.chunk_ms:
                return self._silence  # not yet
            if clip.at_ms is not None and clip.at_ms > t_ms:  # it starts inside this chunk: silence up to it
                lead = bytes(min(self.chunk_bytes - 2, round((clip.at_ms - t_ms) * self.rate / 1000.0) * 2))
            clip.start_ms = t_ms + len(lead) / 2 / self.rate * 1000.0
            if clip.on_start is not None:
                clip.on_start(clip.start_ms)
        pcm = clip.pcm[clip.pos : clip.pos + self.chunk_bytes - len(lead)]
        clip.pos += len(pcm)
        if lead:
            pcm = lead + pcm
        if self._on_user_chunk is not None and pcm:
            self._on_user_chunk(pcm, t_ms)
        played_ms = clip.pos / 2 / self.rate * 1000.0
        while clip.marks and (clip.marks[0][0] <= played_ms or clip.pos >= len(clip.pcm)):
            self._due.append(clip.marks.pop(0)[1])
        if clip.pos >= len(clip.pcm):
            self._clips.popleft()
            end = clip.start_ms + len(clip.pcm) / 2 / self.rate * 1000.0
            if not clip.future.done():
                clip.future.set_result(Interval(start_ms=clip.start_ms, end_ms=end))
        if len(pcm) < self.chunk_bytes:
            pcm = pcm + bytes(self.chunk_bytes - len(pcm))
        return pcm


class PacedOutput(BaseOutputTransport):
    """A null speaker that plays bot audio in real time (/speed) and reports what it played, when.

    The base output transport does not pace; this one does, so "played at" is a real
    position on the timeline. Audio that arrives faster than real time queues up behind
    what is playing, like a sound card's buffer: a write returns shortly before its frame
    ends (`lookahead`), so the next frame is already queued and playback stays gapless
    despite the pipeline's per-frame overhead.

    Audio plays from when it ARRIVED here (the service pushing it), or right after the audio
    before it when that was still playing, not from when the base transport's audio task got
    round to writing it: that hop is a step of the event loop, and on a loop shared by many
    sessions it would add our own queueing to the model's latency, and a late write would put a
    gap into a reply that had none (at speed 10, 30 ms of wall time is a 300 ms pause: the bot
    would seem to stop and start again). An interruption stops the speaker at once: audio
    written ahead of its play time is not heard (`on_interruption` says from when).
    """

    LOOKAHEAD_AUDIO_MS = 40.0
    LOOKAHEAD_WALL_S = 0.015

    def __init__(
        self,
        clock: RunClock,
        *,
        sample_rate: int = 24000,
        on_bot_audio: Callable[[bytes, float], None] | None = None,
        on_interruption: Callable[[float, float], None] | None = None,
        drop_silence: bool = False,
        **kwargs,
    ) -> None:
        """`drop_silence`: the service streams its output continuously, silence included (a
        full-duplex model): inaudible frames are not played (`audible`). Playing them would queue
        every hiccup of this machine's loop behind them for good (a frame that arrives late plays
        late, and so does every frame after it): the next words would sound later than they came."""
        super().__init__(
            TransportParams(
                audio_out_enabled=True,
                audio_out_sample_rate=sample_rate,
                audio_out_end_silence_secs=0,
                audio_out_10ms_chunks=2,
            ),
            # frames from the service are handled as it pushes them, not queued for a task of
            # this stage (two task switches per frame: its input task, then its process task);
            # nothing here waits: bot audio is paced by the base transport's own audio task
            enable_direct_mode=True,
            **kwargs,
        )
        self.clock = clock
        self.rate = sample_rate
        self.play_end_ms = 0.0
        self.last_audio_ms: float | None = None  # when the last bot frame finished playing
        # audio received vs played, in ms: frames arrive at the provider's rate and are played
        # after the base transport resampled them, so bytes would not compare
        self._ms_in = 0.0
        self._ms_out = 0.0
        self._on_bot_audio = on_bot_audio
        self._on_interruption = on_interruption
        self._drop_silence = drop_silence
        self._catch_up = CatchUp()
        # (audio ms received up to and including a frame, when that frame arrived): a written frame
        # plays no earlier than the audio in it arrived
        self._arrivals: deque[tuple[float, float]] = deque()

    def busy(self) -> bool:
        """Bot audio received but not yet played."""
        # the base transport's stream resampler (provider rate != run rate) holds back ~40 ms
        # that it releases only with later audio: that much is not "still to play"
        return self._ms_in - self._ms_out > 60.0 or self.play_end_ms > self.clock.t_ms()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, OutputAudioRawFrame) and self._drop_silence and not audible(frame.audio):
                return  # a continuous stream's silence: nothing to hear, and nothing to queue behind
            if isinstance(frame, OutputAudioRawFrame):
                self._ms_in += _duration_ms(frame)
                self._arrivals.append((self._ms_in, self.clock.t_ms()))
            elif isinstance(frame, InterruptionFrame):
                now = self.clock.t_ms()
                pending_ms = max(0.0, self._ms_in - self._ms_out)
                playing = self.play_end_ms > now
                self._ms_in = self._ms_out = 0.0
                self._arrivals.clear()
                # the speaker stops here: what was written ahead of its play time (the lookahead)
                # is never heard, and the listener (`on_interruption`) drops it
                self.play_end_ms = min(self.play_end_ms, now)
                if self.last_audio_ms is not None:
                    self.last_audio_ms = min(self.last_audio_ms, now)
                if (pending_ms > 20.0 or playing) and self._on_interruption is not None:
                    self._on_interruption(now, pending_ms)
        await super().process_frame(frame, direction)

    async def queue_frame(self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM,
                          callback: FrameCallback | None = None) -> None:
        """The user's chunks the service passes on after sending them end here, as they arrive: the
        speaker plays none of them, and queueing each for this stage's task cost a hop 50 times a
        second per session."""
        if direction == FrameDirection.DOWNSTREAM and isinstance(frame, InputAudioRawFrame):
            return
        await super().queue_frame(frame, direction, callback)

    async def push_frame(self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM) -> None:
        """The bot's frames, once played, go no further: nothing after the speaker reads audio (the
        assistant aggregator keeps text), and each would cost every later stage a hop and an observer call."""
        if direction == FrameDirection.DOWNSTREAM and isinstance(frame, (InputAudioRawFrame, OutputAudioRawFrame)):
            return
        await super().push_frame(frame, direction)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        now = self.clock.t_ms()
        while self._arrivals and self._arrivals[0][0] <= self._ms_out + 1e-6:
            self._arrivals.popleft()  # audio played before this frame
        arrived = min(now, self._arrivals[0][1]) if self._arrivals else now
        start = max(arrived, self.play_end_ms)
        dur = _duration_ms(frame)
        end = start + dur
        self.play_end_ms = end
        self._ms_out += dur
        if self._on_bot_audio is not None:
            self._on_bot_audio(frame.audio, start)
        self.last_audio_ms = end
        lead = max(self.LOOKAHEAD_AUDIO_MS / 1000.0 / self.clock.speed, self.LOOKAHEAD_WALL_S)
        delay = self.clock.mono_at(end) - lead - time.monotonic()
        # behind (or inside the lookahead) a bounded burst, then a selector round: Pipecat's output
        # loop takes queued frames and pushes them on without suspending, so without this a
        # whole queued reply would go through in one step of the loop
        if delay > 0 or not self._catch_up.may_go_on():
            await asyncio.sleep(max(delay, 0.0))
            self._catch_up.waited()
        return True


#: the quietest a frame of a continuous output stream may be and still be heard (−60 dBFS peak)
AUDIBLE_PEAK = 33


def audible(pcm: bytes) -> bool:
    """Whether a frame of bot audio holds anything a listener hears (a full-duplex stream's silence does not)."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
    return bool(samples.size) and int(np.abs(samples.astype(np.int32)).max()) >= AUDIBLE_PEAK


def _duration_ms(frame: OutputAudioRawFrame) -> float:
    return len(frame.audio) / 2 / max(1, frame.num_channels) / frame.sample_rate * 1000.0
