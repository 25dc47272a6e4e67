"""A local OpenAI audio API for a cascade's OpenAI STT and TTS (`OpenAISTTService`,
`OpenAITTSService`): `POST /v1/audio/transcriptions` and `POST /v1/audio/speech`.

Transcriptions: a multipart form (`file` a WAV, `model`, `language`, optional `prompt` /
`response_format`), the key as a bearer token; answered `{"text": …}` (with `logprobs` when
`include[]` asks, as the json format carries them). A fake cannot transcribe: it recognises the
segment's audio among the benchmark's turns (`hearing.Hearing`) and answers the words of that
turn the segment holds (a turn Pipecat's VAD cut in two is heard in two parts); without a
benchmark, the n-th request gets the script's n-th user transcript. It records the WAV it got
(rate, channels, duration, bytes) and what it said it heard.

Speech: JSON `{model, input, voice, response_format: "pcm"}`, answered with the fake's voice
(`speech.py`) as raw 24 kHz PCM16, streamed in chunks; each input text is recorded.
Errors use OpenAI's envelope; no key is a 401.
"""

from __future__ import annotations

import asyncio
import io
import wave
from typing import Any, Unpack

import numpy as np
from aiohttp import web
from pydantic import BaseModel

from arena_tui.spine import audio
from runners.fakes.hearing import Hearing
from runners.fakes.script import Script
from runners.fakes.server import FakeServer, ServerOptions
from runners.fakes.speech import synthesize

HEARING_RATE = 24000  # the rate the benchmark's WAVs are recognised at
OPENAI_TTS_RATE = 24000  # what the speech endpoint's "pcm" is
CHUNK_BYTES = 4800  # 100 ms of 24 kHz PCM16 per streamed chunk


class Transcription(BaseModel):
    """One transcription request: what audio arrived, and what the fake said it heard."""

    model: str = ""
    language: str = ""
    sample_rate: int = 0
    channels: int = 0
    sample_width: int = 0
    audio_ms: float = 0.0
    audio_bytes: int = 0
    turn: int | None = None  # the benchmark turn recognised in the audio
    text: str = ""


class Speech(BaseModel):
    """One speech request: the text to say and how."""

    model: str = ""
    voice: str = ""
    response_format: str = ""
    text: str = ""
    audio_bytes: int = 0


class OpenAIAudioFake(FakeServer):
    """`async with OpenAIAudioFake(script) as fake:` → `fake.base_url` (`…/v1`)."""

    def __init__(self, script: Script | None = None, *, hearing: Hearing | None = None,
                 **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.hearing = hearing
        self.transcriptions: list[Transcription] = []
        self.speeches: list[Speech] = []
        self.unauthorized = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}/v1"

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/audio/transcriptions", self._transcribe), web.post("/v1/audio/speech", self._speech)]

    def _refused(self, request: web.Request) -> web.Response | None:
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and auth[7:].strip():
            return None
        self.unauthorized += 1
        return _error(401, "You didn't provide an API key.", "invalid_request_error")

    async def _transcribe(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return _error(400, "file: a file is required", "invalid_request_error")
        data = upload.file.read()
        rec = Transcription(model=str(form.get("model") or ""), language=str(form.get("language") or ""), audio_bytes=len(data))
        try:
            with wave.open(io.BytesIO(data)) as w:
                rec.sample_rate, rec.channels, rec.sample_width = w.getframerate(), w.getnchannels(), w.getsampwidth()
                rec.audio_ms = w.getnframes() / w.getframerate() * 1000.0
                frames = w.readframes(w.getnframes())
        except (wave.Error, EOFError) as e:
            return _error(400, f"Invalid file format: {e}", "invalid_request_error")
        if not rec.model:
            return _error(400, "model: a model is required", "invalid_request_error")
        if self.hearing is not None:
            pcm = np.frombuffer(frames, "<i2")
            if rec.channels > 1:
                pcm = audio.to_mono(pcm.reshape(-1, rec.channels)).astype("<i2")
            if rec.sample_rate != HEARING_RATE:
                pcm = audio.resample(pcm, rec.sample_rate, HEARING_RATE)
            rec.turn, rec.text = self.hearing.clip_words(pcm.astype("<i2").tobytes())
        else:
            n = len(self.transcriptions)
            reply = self.script.replies[n] if n < len(self.script.replies) else None
            rec.text = (reply.user_transcript if reply is not None else None) or ""
        self.transcriptions.append(rec)
        body: dict[str, Any] = {"text": rec.text, "usage": {"type": "duration", "seconds": round(rec.audio_ms / 1000.0, 2)}}
        if "logprobs" in form.getall("include[]", []):
            body["logprobs"] = [{"token": w, "logprob": -0.01, "bytes": list(w.encode())} for w in rec.text.split()]
        return web.json_response(body)

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "body is not JSON", "invalid_request_error")
        rec = Speech(model=str(body.get("model") or ""), voice=str(body.get("voice") or ""),
                     response_format=str(body.get("response_format") or "mp3"), text=str(body.get("input") or ""))
        if not rec.text or not rec.model or not rec.voice:
            return _error(400, "input, model and voice are required", "invalid_request_error")
        if rec.response_format != "pcm":
            return _error(400, f"this fake speaks pcm only (got {rec.response_format})", "invalid_request_error")
        pcm = synthesize(rec.text, OPENAI_TTS_RATE, self.script.voice)
        rec.audio_bytes = len(pcm)
        self.speeches.append(rec)
        resp = web.StreamResponse(status=200, headers={"Content-Type": "audio/pcm"})
        await resp.prepare(request)
        for i in range(0, len(pcm), CHUNK_BYTES):
            await resp.write(pcm[i:i + CHUNK_BYTES])
            await asyncio.sleep(0.002)
        await resp.write_eof()
        return resp


def _error(status: int, message: str, kind: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": None}}, status=status)
