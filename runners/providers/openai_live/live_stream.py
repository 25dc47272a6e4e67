"""The continuous output of an OpenAI Live session: one audio frame every 200 ms of the session
timeline, speech when the model speaks and silence when it does not, with the words of each
spoken frame as a timed transcript fragment.

The Live API is full duplex: the model's audio never pauses for a turn (Pipecat's service says
so: "the model streams output continuously at real-time pace, silence included", and pushes it
as `SpeechOutputAudioRawFrame`, a speech stream whose silence a listener has to tell apart), and
its transcript fragments are "frame-aligned, not word- or turn-aligned", each with `start_ms`
and `end_ms` on the session timeline. So the fake's voice is a queue this stream drains, a frame
at a time, a little ahead of its play time (`LEAD_MS`): what the model says goes into the queue
(`say`), a yield drops what has not gone out (`hush`: the Live API has no barge-in event; the
stream just goes quiet), and the frames still go out, silent, until the session ends.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from runners.fakes.speech import synthesize
from runners.fakes.wire import b64, spread_words

#: the API's frame (transcript fragments land on these boundaries; audio goes out in them)
FRAME_MS = 200.0
#: how far ahead of its play time a frame goes out (a real-time stream keeps a little buffered)
LEAD_MS = 100.0


@dataclass
class _Spoken:
    """One `say`: its frames and their words, and when its last frame has gone out."""

    frames: deque[tuple[bytes, str]]
    done: asyncio.Future[None]


@dataclass
class LiveStream:
    """The session's output stream. `send(event)` puts a server event on the wire; `clock` is the
    fake's audio clock; `t0` the session timeline's zero on it (`start`)."""

    send: Callable[[dict[str, Any]], Awaitable[None]]
    clock: Any
    rate: int = 24000
    voice: str = "tone"
    on_speech: Callable[[float], None] | None = None  # a speech frame went out (its length, ms): the duplex floor
    t0: float = 0.0
    frames_sent: int = 0
    speech_frames: int = 0
    _queue: deque[_Spoken] = field(default_factory=deque)
    _task: asyncio.Task[None] | None = None
    _spoke: bool = False  # something was said on this session (a later text's first words get their space)

    @property
    def frame_bytes(self) -> int:
        return int(self.rate * FRAME_MS / 1000) * 2

    def start(self) -> None:
        self.t0 = self.clock.ms
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.hush()

    def session_ms(self) -> int:
        """Now on the session timeline (what `start_ms`/`end_ms` and `offset_ms` count)."""
        return int(self.clock.ms - self.t0)

    @property
    def speaking(self) -> bool:
        return bool(self._queue)

    def say(self, text: str) -> asyncio.Future[None]:
        """Queue `text` as speech; the future resolves once its last frame has gone out (or it was hushed)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        pcm = synthesize(text, self.rate, self.voice) if text else b""
        n = self.frame_bytes
        parts = [pcm[i:i + n] for i in range(0, len(pcm), n)]
        parts = [p + bytes(n - len(p)) for p in parts]  # the last frame filled out with silence
        words = spread_words(text, len(parts)) if parts else []
        first = next((i for i, w in enumerate(words) if w), None)
        if first is not None and self._spoke:  # after what it said before: a space between
            words[first] = " " + words[first]
        self._spoke = self._spoke or bool(parts)
        if not parts:
            fut.set_result(None)
            return fut
        self._queue.append(_Spoken(deque(zip(parts, words, strict=True)), fut))
        return fut

    def hush(self) -> None:
        """Drop what has not gone out yet (the model stops talking: it yields, or the session ends)."""
        while self._queue:
            spoken = self._queue.popleft()
            if not spoken.done.done():
                spoken.done.set_result(None)

    async def _run(self) -> None:
        k = 0
        while True:
            start = self.t0 + k * FRAME_MS
            await self.clock.until(start - LEAD_MS)
            pcm, words = self._next()
            await self.send({"type": "session.output_audio.delta", "delta": b64(pcm)})
            if words:
                at = int(start - self.t0)
                await self.send({"type": "session.output_transcript.delta", "delta": words,
                                 "start_ms": at, "end_ms": at + int(FRAME_MS)})
            k += 1
            self.frames_sent = k

    def _next(self) -> tuple[bytes, str]:
        """The next frame: the queue's next speech frame (and its words), else silence."""
        while self._queue:
            spoken = self._queue[0]
            if spoken.frames:
                pcm, words = spoken.frames.popleft()
                self.speech_frames += 1
                if self.on_speech is not None:
                    self.on_speech(FRAME_MS)
                if not spoken.frames:
                    self._queue.popleft()
                    if not spoken.done.done():
                        spoken.done.set_result(None)
                return pcm, words
            self._queue.popleft()
        return bytes(self.frame_bytes), ""
