"""The model's side of a GLM-Realtime response, as Pipecat frames: its start, its audio (TTS
frames at the session's output rate; the first one ends the TTFB metric), its transcript as text
frames, its usage, and its end. The lightweight model sometimes answers with a transcript but no
audio: such a response is counted in `text_without_audio`, announced (`on_text_without_audio`)
and, unless the caller listens for that instead, surfaced as a non-fatal ErrorFrame."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from pipecat.frames.frames import (
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TextType,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
)
from pipecat.metrics.metrics import LLMTokenUsage

from pipecat.services.llm_service import LLMService

from .events import ResponseAudioDelta, ResponseAudioTranscriptDelta, ResponseCreated, ResponseDone, ResponseTextDelta


if TYPE_CHECKING:  # the service it is a part of: Pipecat's frame and metrics methods
    _Service = LLMService
else:
    _Service = object


class ModelReplies(_Service):
    """A part of `GLMRealtimeLLMService`: call `_open_replies` in its constructor; it reads the
    service's `transcript` and Pipecat's frame and metrics methods."""

    transcript: list[tuple[str, str]]  # the service's (role, text) of the conversation

    def _open_replies(self, output_sample_rate: int, text_without_audio_error: bool) -> None:
        self._out_rate = output_sample_rate
        self._text_without_audio_error = text_without_audio_error
        self._response_active = False
        self._response_audio_bytes = 0
        self._response_text = ""
        self.text_without_audio = 0  # responses with a transcript but no audio

    async def _on_response_created(self, evt: ResponseCreated) -> None:
        self._response_active = True
        self._response_audio_bytes = 0
        self._response_text = ""
        await self.start_ttfb_metrics()
        await self.push_frame(LLMFullResponseStartFrame())

    async def _on_response_audio_delta(self, evt: ResponseAudioDelta) -> None:
        audio = base64.b64decode(evt.delta)
        if not audio:
            return
        if not self._response_audio_bytes:
            await self.stop_ttfb_metrics()
            await self.push_frame(TTSStartedFrame())
        self._response_audio_bytes += len(audio)
        await self.push_frame(TTSAudioRawFrame(audio=audio, sample_rate=self._out_rate, num_channels=1))

    async def _on_text_delta(self, evt: ResponseAudioTranscriptDelta | ResponseTextDelta) -> None:
        await self._push_text(evt.delta)

    async def _push_text(self, text: str) -> None:
        if not text:
            return
        self._response_text += text
        llm = LLMTextFrame(text)
        llm.append_to_context = False
        await self.push_frame(llm)
        tts = TTSTextFrame(text, text_type=TextType.SENTENCE)
        tts.includes_inter_frame_spaces = True
        await self.push_frame(tts)

    async def _on_response_done(self, evt: ResponseDone) -> None:
        if usage := evt.token_usage():
            await self.start_llm_usage_metrics(
                LLMTokenUsage(
                    prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens, total_tokens=usage.total_tokens
                )
            )
        await self._finish_response()

    async def _finish_response(self, interrupted: bool = False) -> None:
        if self._response_text.strip():
            self.transcript.append(("assistant", self._response_text.strip()))
        if self._response_audio_bytes:
            await self.push_frame(TTSStoppedFrame())
        elif self._response_text.strip() and not interrupted:
            self.text_without_audio += 1
            if self._text_without_audio_error:
                await self.push_error(f"GLM-Realtime response had text but no audio: {self._response_text[:80]!r}")
            await self._call_event_handler("on_text_without_audio", self._response_text)
        await self.push_frame(LLMFullResponseEndFrame())
        self._response_active = False
