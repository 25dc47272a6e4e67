"""A local Inworld Realtime server for `InworldRealtimeLLMService`: Inworld's handshake and session,
OpenAI Realtime's GA event names (`runners/fakes/realtime_dialect.py` holds the shape they share
with Azure Voice Live's).

What the real service requires, refused as it refuses it:
- handshake (HTTP 400/401 before the upgrade, recorded in `rejected`): the path
  `/api/v1/realtime/session`; a session `key` and `protocol=realtime` in the query; the API key as
  `Authorization: Basic <key>` (a `Bearer` must be a client JWT: an API key sent so is refused);
- `session.update` (an `error` event, the session unchanged): `type: realtime`; the model as
  `provider/model` (the LLM inside Inworld's cascade); audio under `audio.input` / `audio.output`
  with a format it has (`audio/pcm` at a rate it takes, `audio/pcmu`, `audio/pcma`); an output
  voice and TTS model; turn detection `semantic_vad` / `server_vad` or none;
- a `function_call_output` for a call the server already answered itself: unless the session set
  `providerData.auto_tool_response: false`, Inworld answers every tool call on its own;
- a `response.create` while a response runs (`conversation_already_has_active_response`), and one
  asking for modalities it has not (`text`, `audio`).
Its quirks, modelled: `response.function_call_arguments.done` without the tool's `name` (the
client takes it from the call's item); a `ping` event right after `session.created`; the client's
audio arrives in ~60 ms batches (Pipecat's), recorded in `audio_chunk_ms`.

Usage: Inworld's realtime API is a cascade (its STT, an LLM, its TTS), and what `response.done`
reports is the LLM's: text tokens in and out (`total_tokens`, `input_tokens`, `output_tokens`,
no modality split), the conversation so far as text (the instructions, the history, the user's
transcripts and the replies) in, the reply's text and calls out (`runners/fakes/usage.py`), in
the response and beside it (Pipecat reads either). Its STT minutes and TTS characters are billed
apart and not on the socket.

Timing (`timing="real"`): the shared `ENVELOPE` (`runners/fakes/timing.py`; not measured for
Inworld).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from runners.fakes.realtime_dialect import DialectSession
from runners.fakes.handshake import HandshakeFake
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import ToolCallSpec
from runners.fakes.timing import ENVELOPE
from runners.fakes.usage import call_tokens, text_tokens

PATH = "/api/v1/realtime/session"
RATES = (8000, 16000, 24000, 32000, 44100, 48000)
FORMATS = ("audio/pcm", "audio/pcmu", "audio/pcma")
TURN_TYPES = ("server_vad", "semantic_vad")


def _format_problem(where: str, fmt: object) -> str | None:
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") not in FORMATS:
        return f"Invalid value for {where}.format: {fmt!r}"
    if fmt["type"] == "audio/pcm" and fmt.get("rate", 24000) not in RATES:
        return f"Invalid value for {where}.format.rate: {fmt.get('rate')} (one of {', '.join(map(str, RATES))})"
    return None


def _rate(fmt: object) -> int:
    if not isinstance(fmt, dict):
        return 24000
    return 8000 if fmt.get("type") in ("audio/pcmu", "audio/pcma") else int(fmt.get("rate") or 24000)


class _Session(DialectSession):
    ARGS_DONE_NAME = False
    #: Inworld's session before an update: semantic VAD that answers by itself (left out of an update, it stays)
    DEFAULT_SESSION = {"type": "realtime", "output_modalities": ["audio", "text"],
                       "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000},
                                           "turn_detection": {"type": "semantic_vad", "create_response": True}},
                                 "output": {"format": {"type": "audio/pcm", "rate": 24000}}}}

    async def run(self) -> None:
        await self.send({"type": "ping", "timestamp": int(time.time() * 1000)})  # Inworld's keep-alive, which a client ignores
        await super().run()

    @property
    def _audio(self) -> dict[str, Any]:
        return self.session.get("audio") or {}

    @property
    def in_rate(self) -> int:
        return _rate((self._audio.get("input") or {}).get("format"))

    @property
    def out_rate(self) -> int:
        return _rate((self._audio.get("output") or {}).get("format"))

    @property
    def turn_detection(self) -> dict[str, Any] | None:
        td = (self._audio.get("input") or {}).get("turn_detection")
        return td if isinstance(td, dict) else None

    def session_problem(self, session: dict[str, Any]) -> str | None:
        if session.get("type", "realtime") != "realtime":
            return f"Invalid value for session.type: {session.get('type')!r} (realtime)"
        model = session.get("model")
        if model is not None and (not isinstance(model, str) or "/" not in model):
            return f"Invalid value for session.model: {model!r} (provider/model, e.g. openai/gpt-4.1-mini)"
        audio = session.get("audio") or {}
        inp, out = audio.get("input") or {}, audio.get("output") or {}
        for where, fmt in (("audio.input", inp.get("format")), ("audio.output", out.get("format"))):
            if (problem := _format_problem(where, fmt)) is not None:
                return problem
        td = inp.get("turn_detection")
        if isinstance(td, dict) and td.get("type") not in TURN_TYPES:
            return f"Invalid value for audio.input.turn_detection.type: {td.get('type')!r}"
        if out and not (out.get("voice") and out.get("model")):
            return "audio.output needs a voice and a TTS model"
        return None

    def usage(self, said: str, spoken_ms: float, calls: Sequence[ToolCallSpec] = ()) -> dict[str, Any]:
        given, made = text_tokens(*self.context()), text_tokens(said) + call_tokens(calls)
        return {"total_tokens": given + made, "input_tokens": given, "output_tokens": made}

    async def done(self, rid: str, status: str, usage: dict[str, Any] | None = None) -> None:
        evt: dict[str, Any] = {"type": "response.done", "response": self.response_body(rid, status, usage)}
        await self.send({**evt, "usage": usage} if usage is not None else evt)

    def heard_chunk(self, pcm: bytes) -> None:
        self.rec.audio_chunk_ms.append(len(pcm) / 2 / self.in_rate * 1000.0)

    def response_create_problem(self, evt: dict[str, Any]) -> str | None:
        modalities = (evt.get("response") or {}).get("modalities") or []
        if unknown := [m for m in modalities if m not in ("text", "audio")]:
            return f"Invalid value for response.modalities: {unknown[0]!r}"
        return None

    def accept_tool_output(self, call_id: str) -> str | None:
        provider = self.session.get("providerData") or self.session.get("provider_data") or {}
        if provider.get("auto_tool_response") is not False:
            return f"call {call_id} was answered by the server (providerData.auto_tool_response is on)"
        return None


class InworldRealtimeFake(HandshakeFake):
    """Scripted Inworld Realtime server on 127.0.0.1."""

    PATH = PATH
    REAL_TIMING = ENVELOPE

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}{PATH}"

    def handshake_problem(self, request: web.Request) -> tuple[int, str] | None:
        if not request.query.get("key"):
            return 400, "missing session key (?key=)"
        if request.query.get("protocol") != "realtime":
            return 400, "missing protocol=realtime"
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Basic ") and auth[6:].strip():
            return None
        if auth.startswith("Bearer ") and auth[7:].strip().count(".") == 2:
            return None  # a client's JWT
        if auth.startswith("Bearer "):
            return 401, "a bearer must be a JWT: an API key goes as Authorization: Basic <key>"
        return 401, "missing Authorization: Basic <key>"

    def session(self, rec: ConnectionRecord, ws: web.WebSocketResponse) -> _Session:
        return _Session(self, rec, ws)
