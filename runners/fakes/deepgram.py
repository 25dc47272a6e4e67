"""A local Deepgram live transcription server for a cascade's `DeepgramSTTService`.

It speaks what the Deepgram SDK's live client does: a websocket at `/v1/listen` with the
options in the query (`model`, `encoding=linear16`, `sample_rate`, `channels`, …) and the key
as `Authorization: Token …`; binary messages are the audio, text ones `KeepAlive`, `Finalize`
and `CloseStream`. It answers `Finalize` (Pipecat sends one at each VAD stop) with a final
`Results` (`is_final`, `speech_final`, `from_finalize`, the channel's alternative with its
words and times, the metadata's model info) holding what was said since the last one, and
`CloseStream` with `Metadata`, then closes. What was said is recognised, not transcribed
(`hearing.Hearing`: the benchmark turn whose audio arrived, and its words in that stretch).
Each connection's query, audio (bytes, ms, rate) and every transcript it sent are recorded.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Unpack

import numpy as np
from aiohttp import WSMsgType, web
from pydantic import BaseModel, Field

from arena_tui.spine import audio
from runners.fakes.hearing import Hearing
from runners.fakes.script import Script
from runners.fakes.server import FakeServer, ServerOptions

RATE = 24000  # the rate the benchmark's WAVs are recognised at
MODEL_INFO = {"name": "general-nova-3", "version": "2025-01-01.0", "arch": "nova-3"}


class ListenRecord(BaseModel):
    query: dict[str, str] = Field(default_factory=dict)
    auth_present: bool = False
    audio_bytes: int = 0
    audio_ms: float = 0.0
    finalizes: int = 0
    transcripts: list[str] = Field(default_factory=list)  # every final transcript sent, in order
    closed_by: str = ""


class DeepgramFake(FakeServer):
    """`async with DeepgramFake(script, hearing=Hearing(bench)) as fake:` → `fake.base_url` (ws://…)."""

    def __init__(self, script: Script | None = None, *, hearing: Hearing | None = None,
                 **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.hearing = hearing
        self.listens: list[ListenRecord] = []

    @property
    def base_url(self) -> str:
        return f"ws://{self.host}"

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/v1/listen", self._listen)]

    async def _listen(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        if not (auth.startswith(("Token ", "Bearer ")) and auth.split(" ", 1)[1].strip()):
            return web.json_response({"err_code": "INVALID_AUTH", "err_msg": "Invalid credentials."}, status=401)
        rec = ListenRecord(query=dict(request.query), auth_present=True)
        self.listens.append(rec)
        rate = int(rec.query.get("sample_rate") or RATE)
        if rec.query.get("encoding", "linear16") != "linear16":
            return web.json_response({"err_code": "UNSUPPORTED", "err_msg": "this fake takes linear16"}, status=400)
        ws = await self.open_ws(request)
        stream = Stream(self.hearing, rate)
        request_id = str(uuid.uuid4())
        try:
            async for msg in ws:
                if msg.type == WSMsgType.BINARY:
                    rec.audio_bytes += len(msg.data)
                    stream.feed(msg.data)
                    rec.audio_ms = stream.ms
                elif msg.type == WSMsgType.TEXT:
                    kind = (json.loads(msg.data) or {}).get("type")
                    if kind == "Finalize":
                        rec.finalizes += 1
                        start, text = stream.finalize()
                        rec.transcripts.append(text)
                        await ws.send_str(json.dumps(_results(text, start, stream.ms, request_id)))
                    elif kind == "CloseStream":
                        rec.closed_by = "client:CloseStream"
                        await ws.send_str(json.dumps({"type": "Metadata", "transaction_key": "deprecated",
                                                      "request_id": request_id, "sha256": "", "created": "",
                                                      "duration": stream.ms / 1000.0, "channels": 1}))
                        break
        finally:
            rec.closed_by = rec.closed_by or "client"
            self.forget_ws(ws)
            await ws.close()
        return ws


class Stream:
    """One connection's audio: where it is (ms), and what arrived since the last final result."""

    def __init__(self, hearing: Hearing | None, rate: int) -> None:
        self.hearing, self.rate = hearing, rate
        self.ms = 0.0
        self.said_from = 0.0  # stream ms the next final result starts at
        self.pending = bytearray()  # the audio since then, at the recognition rate

    def feed(self, data: bytes) -> None:
        pcm = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2")
        if self.rate != RATE:
            pcm = audio.resample(pcm, self.rate, RATE)
        self.pending += pcm.astype("<i2").tobytes()
        self.ms += pcm.size * 1000.0 / RATE

    def finalize(self) -> tuple[float, str]:
        """(where the stretch began, the words said in it) since the last final result."""
        start, self.said_from = self.said_from, self.ms
        pcm, self.pending = bytes(self.pending), bytearray()
        if self.hearing is None:
            return start, ""
        return start, self.hearing.clip_words(pcm)[1]


def _results(text: str, start_ms: float, end_ms: float, request_id: str) -> dict[str, Any]:
    words = text.split()
    step = (end_ms - start_ms) / 1000.0 / max(1, len(words))
    items = [{"word": w.strip(".,!?").lower(), "punctuated_word": w, "start": start_ms / 1000.0 + i * step,
              "end": start_ms / 1000.0 + (i + 1) * step, "confidence": 0.99} for i, w in enumerate(words)]
    return {"type": "Results", "channel_index": [0, 1], "duration": (end_ms - start_ms) / 1000.0,
            "start": start_ms / 1000.0, "is_final": True, "speech_final": True, "from_finalize": True,
            "channel": {"alternatives": [{"transcript": text, "confidence": 0.99 if words else 0.0, "words": items}]},
            "metadata": {"request_id": request_id, "model_info": MODEL_INFO, "model_uuid": str(uuid.uuid4())}}
