"""A local Azure Voice Live server for `AzureVoiceLiveLLMService`: Voice Live's handshake and
session, the OpenAI Realtime beta's event names (`runners/fakes/realtime_dialect.py` holds the
shape they share with Inworld's).

What the real service requires, refused as it refuses it:
- handshake (HTTP 400/401 before the upgrade, recorded in `rejected`): the path
  `/voice-live/realtime`; an `api-version` it serves (`VERSIONS`); the model as `?model=`; the key
  in an `api-key` header (or a Microsoft Entra bearer: a JWT), never an API key as a bearer;
- `session.update` (an `error` event, the session unchanged): no `model` (the URL names it);
  only Voice Live's own session fields, at the session's top level; `input_audio_sampling_rate`
  16 or 24 kHz; an output format it has (`pcm16` 24 kHz, `pcm16_16000hz`, `pcm16_8000hz`); a
  turn detection type it has; `semantic_vad`, an `openai` voice and OpenAI's transcription
  models only with a native-audio model (`gpt-realtime…`), and no Azure voice for
  `azure-realtime…`; a voice on a session without audio is refused ("Text to speech synthesizer
  is not configured");
- a `response.create` while a response runs (`conversation_already_has_active_response`).
Its quirks, modelled: a committed user item is transcribed once, and when the next audio is
committed Voice Live reports an empty transcript for the previous item; `azure_semantic_vad`
ends the user's turn after the session's `silence_duration_ms` (the fake's energy endpointer).

Usage: each completed `response.done` carries OpenAI Realtime's `usage` (input and output with
their text and audio shares, cached input), the conversation so far as input, at the token rates
Voice Live documents for Azure OpenAI models, about 10 a second of audio in and 20 out (its
overview's "Token usage and cost estimation"; `runners/fakes/usage.py`): Azure speech in and out
around a text model is billed as audio tokens too.

Timing (`timing="real"`): the shared `ENVELOPE` (`runners/fakes/timing.py`; not measured for
Voice Live): the call or first audio a while after the trigger, audio in bursts slower than real
time, `response.done` the plan's lag after the last audio.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from runners.fakes.realtime_dialect import DialectSession
from runners.fakes.record import ConnectionRecord
from runners.fakes.handshake import HandshakeFake, azure_key_problem
from runners.fakes.script import ToolCallSpec
from runners.fakes.timing import ENVELOPE
from runners.fakes.usage import realtime_usage

PATH = "/voice-live/realtime"
VERSIONS = ("2025-10-01", "2026-01-01-preview", "2026-07-15")  # the GA version and Pipecat 1.14's
SESSION_FIELDS = {
    "instructions", "modalities", "voice", "input_audio_format", "output_audio_format", "input_audio_sampling_rate",
    "turn_detection", "input_audio_transcription", "input_audio_noise_reduction", "input_audio_echo_cancellation",
    "temperature", "max_response_output_tokens", "tools", "tool_choice", "avatar", "animation",
}
OUTPUT_RATES = {"pcm16": 24000, "pcm16_16000hz": 16000, "pcm16_8000hz": 8000}
TURN_TYPES = {"server_vad", "semantic_vad", "azure_semantic_vad", "azure_semantic_vad_multilingual"}
OPENAI_TRANSCRIBERS = {"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "gpt-4o-transcribe-diarize"}


def native_audio(model: str) -> bool:
    """A model that hears and speaks itself (OpenAI's realtime models), not Azure speech around a text model."""
    return "realtime" in model and not model.startswith("azure-realtime")


class _Session(DialectSession):
    ITEM_ADDED = "conversation.item.created"
    AUDIO_DELTA = "response.audio.delta"
    AUDIO_DONE = "response.audio.done"
    TRANSCRIPT_DELTA = "response.audio_transcript.delta"
    TRANSCRIPT_DONE = "response.audio_transcript.done"
    DEFAULT_SESSION = {"modalities": ["text", "audio"], "input_audio_format": "pcm16", "output_audio_format": "pcm16",
                       "input_audio_sampling_rate": 24000, "turn_detection": {"type": "server_vad"}}

    def __init__(self, fake: AzureVoiceLiveFake, rec: ConnectionRecord, ws: web.WebSocketResponse):
        super().__init__(fake, rec, ws)
        self.model = rec.query.get("model", "")
        self.session["model"] = self.model

    @property
    def in_rate(self) -> int:
        return int(self.session.get("input_audio_sampling_rate") or 24000)

    @property
    def out_rate(self) -> int:
        return OUTPUT_RATES.get(self.session.get("output_audio_format") or "pcm16", 24000)

    def session_problem(self, session: dict[str, Any]) -> str | None:
        if "model" in session:
            return "Unknown parameter: 'session.model' (the connection URL names the model)"
        if unknown := sorted(set(session) - SESSION_FIELDS):
            return f"Unknown parameter: 'session.{unknown[0]}'"
        if (rate := session.get("input_audio_sampling_rate")) is not None and rate not in (16000, 24000):
            return f"Invalid value: {rate}. input_audio_sampling_rate must be 16000 or 24000"
        if (fmt := session.get("output_audio_format")) is not None and fmt not in OUTPUT_RATES and fmt not in ("g711_ulaw", "g711_alaw"):
            return f"Invalid value: '{fmt}' for output_audio_format"
        td = session.get("turn_detection")
        if isinstance(td, dict) and td.get("type") not in TURN_TYPES:
            return f"Invalid value: '{td.get('type')}' for turn_detection.type"
        native = native_audio(self.model)
        if isinstance(td, dict) and td.get("type") == "semantic_vad" and not native:
            return f"semantic_vad needs a native-audio model; {self.model} takes azure_semantic_vad"
        voice = session.get("voice")
        modalities = session.get("modalities", self.session.get("modalities")) or []
        if voice and "audio" not in modalities:
            return "Text to speech synthesizer is not configured"
        if isinstance(voice, dict):
            if voice.get("type") == "openai" and not native:
                return f"voice type 'openai' needs a native-audio model, not {self.model}"
            if voice.get("type") == "azure-standard" and self.model.startswith("azure-realtime"):
                return f"{self.model} takes its own voices, not azure-standard"
            if not voice.get("name"):
                return "voice.name is required"
        transcriber = (session.get("input_audio_transcription") or {}).get("model")
        if transcriber in OPENAI_TRANSCRIBERS and not native:
            return f"input_audio_transcription.model {transcriber} needs a native-audio model; {self.model} takes azure-speech"
        return None

    def usage(self, said: str, spoken_ms: float, calls: Sequence[ToolCallSpec] = ()) -> dict[str, Any]:
        return realtime_usage(self.context(), self.rec.audio_in_ms, said, spoken_ms, calls)

    async def on_commit(self, item_id: str) -> None:
        await super().on_commit(item_id)
        if len(self.committed) > 1:  # Voice Live's: the item before, transcribed already, reported again empty
            await self.send({"type": "conversation.item.input_audio_transcription.completed",
                             "item_id": self.committed[-2], "content_index": 0, "transcript": ""})
        await self.send({"type": self.ITEM_ADDED, "item": {"id": item_id, "object": "realtime.item", "type": "message",
                                                           "role": "user", "content": [{"type": "input_audio"}]}})


class AzureVoiceLiveFake(HandshakeFake):
    """Scripted Voice Live server on 127.0.0.1 (`ws://`; the runner's service keeps a loopback endpoint as given)."""

    PATH = PATH
    REAL_TIMING = ENVELOPE

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}"

    def handshake_problem(self, request: web.Request) -> tuple[int, str] | None:
        version = request.query.get("api-version", "")
        if version not in VERSIONS:
            return 400, f"api-version {version or '(none)'} is not served; use one of {', '.join(VERSIONS)}"
        if not request.query.get("model"):
            return 400, "missing model (?model=<model>)"
        problem = azure_key_problem(request.headers)
        return None if problem is None else (401, problem)

    def refusal(self, status: int, reason: str) -> dict[str, object]:
        return {"error": {"code": str(status), "message": reason}}  # (Azure's codes are strings)

    def session(self, rec: ConnectionRecord, ws: web.WebSocketResponse) -> _Session:
        return _Session(self, rec, ws)
