"""The user's side of a GLM-Realtime session, on the client's turn boundaries (client VAD): audio
resampled to the session's input rate and sent as one WAV file per append, batched to one every
`flush_ms` (the API allows 50 requests/s; 20 ms frames would exceed it), ~1 s kept until the
session is ready; at a turn's end, what is left flushed, `input_audio_buffer.commit`, and a
response asked for. The turn's stop is a SystemFrame that overtakes audio still queued upstream:
the commit waits for the first audio frame created after it (or COMMIT_GRACE_S without audio)."""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any

from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import InputAudioRawFrame, UserStoppedSpeakingFrame
from pipecat.services.llm_service import LLMService

from .wire import wav_bytes

COMMIT_GRACE_S = 0.5  # commit this long after a user stop if no later audio frame arrives


if TYPE_CHECKING:  # the service it is a part of: Pipecat's `create_task` / `cancel_task`
    _Service = LLMService
else:
    _Service = object


class UserTurns(_Service):
    """A part of `GLMRealtimeLLMService`: call `_open_user_turns` in its constructor; it reads the
    service's `_send`, `_session_ready`, `_create_response` and Pipecat's `create_task` /
    `cancel_task`."""

    _session_ready: asyncio.Event

    if TYPE_CHECKING:  # the service's own (declared here, defined there)
        async def _send(self, event: dict[str, Any]) -> None: ...

        async def _create_response(self) -> None: ...

    def _open_user_turns(self, input_sample_rate: int, flush_ms: int) -> None:
        self._in_rate = input_sample_rate
        self._flush_bytes = input_sample_rate * 2 * flush_ms // 1000
        self._resampler = create_stream_resampler()
        self._turn_open = False  # between UserStartedSpeakingFrame and UserStoppedSpeakingFrame
        self._commit_after_id: int | None = None  # a turn ended; commit once its audio is in
        self._commit_fallback: asyncio.Task[None] | None = None
        self._pending: bytearray = bytearray()  # user audio not yet appended
        self.appends = 0

    async def _user_audio(self, frame: InputAudioRawFrame) -> None:
        if self._commit_after_id is not None and frame.id > self._commit_after_id:
            await self._end_user_turn()  # all audio created before the stop has arrived
        await self._append_audio(frame)

    def _user_started(self) -> None:
        self._turn_open = True

    def _user_stopped(self, frame: UserStoppedSpeakingFrame) -> None:
        """A stop without a start (or a repeated one) would commit nothing."""
        if self._turn_open:
            self._turn_open = False
            self._commit_after_id = frame.id
            self._commit_fallback = self.create_task(self._commit_later())

    async def _append_audio(self, frame: InputAudioRawFrame) -> None:
        audio = frame.audio
        if frame.sample_rate != self._in_rate:
            audio = await self._resampler.resample(audio, frame.sample_rate, self._in_rate)
        self._pending.extend(audio)
        if not self._session_ready.is_set():
            del self._pending[: max(0, len(self._pending) - 4 * self._flush_bytes)]  # keep ~1 s
            return
        if len(self._pending) >= self._flush_bytes:
            await self._flush_audio()

    async def _flush_audio(self) -> None:
        if not self._pending or not self._session_ready.is_set():
            return
        pcm, self._pending = bytes(self._pending), bytearray()
        self.appends += 1
        await self._send({"type": "input_audio_buffer.append", "audio": base64.b64encode(wav_bytes(pcm, self._in_rate)).decode()})

    async def _commit_later(self) -> None:
        await asyncio.sleep(COMMIT_GRACE_S)
        self._commit_fallback = None
        await self._end_user_turn()

    async def _end_user_turn(self) -> None:
        if self._commit_after_id is None:
            return
        self._commit_after_id = None
        if self._commit_fallback and self._commit_fallback is not asyncio.current_task():
            await self.cancel_task(self._commit_fallback)
        self._commit_fallback = None
        await self._flush_audio()
        await self._send({"type": "input_audio_buffer.commit"})
        await self._create_response()
