"""A local Cartesia TTS websocket for a cascade's `CartesiaTTSService`.

It speaks what Pipecat's service sends: a websocket at `/tts/websocket` with `X-API-Key` and
`Cartesia-Version` headers; JSON requests `{transcript, continue, context_id, model_id, voice:
{mode: "id", id}, output_format: {container: "raw", encoding: "pcm_s16le", sample_rate},
add_timestamps}` (text streamed into one context, `continue: false` closing it) and
`{context_id, cancel: true}`. Each piece of text is answered with `chunk` messages (base64
PCM16 at the asked rate, the fake's voice) and a `timestamps` message (`word_timestamps {words,
start, end}`, seconds into the context's audio, which Pipecat turns into the spoken words), a
closed context with `done`; a cancelled one gets nothing more. Each request is recorded.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any, Unpack

from aiohttp import WSMsgType, web
from pydantic import BaseModel, Field

from runners.fakes.script import Script
from runners.fakes.server import ServerOptions, SpeechFake
from runners.fakes.speech import synthesize

CHUNK_MS = 100


class TtsRequest(BaseModel):
    context_id: str
    transcript: str = ""
    cont: bool = True
    model_id: str = ""
    voice: dict[str, Any] = Field(default_factory=dict)
    output_format: dict[str, Any] = Field(default_factory=dict)
    add_timestamps: bool = False


class CartesiaFake(SpeechFake):
    """`async with CartesiaFake(script) as fake:` → `fake.base_url` (ws://…)."""

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.requests: list[TtsRequest] = []
        self.cancelled: list[str] = []
        self.headers: list[dict[str, str]] = []

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/tts/websocket", self._socket)]

    def texts(self, context_id: str | None = None) -> list[str]:
        return [r.transcript for r in self.requests if r.transcript and (context_id is None or r.context_id == context_id)]

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if not request.headers.get("X-API-Key", "").strip():
            return web.json_response({"error": "missing X-API-Key"}, status=401)
        self.headers.append({"cartesia-version": request.headers.get("Cartesia-Version", "")})
        ws = await self.open_ws(request)
        offsets: dict[str, float] = {}  # context → seconds of audio sent so far
        lock = asyncio.Lock()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                body = json.loads(msg.data)
                ctx = str(body.get("context_id", ""))
                if body.get("cancel"):
                    self.cancelled.append(ctx)
                    continue
                req = TtsRequest(context_id=ctx, transcript=str(body.get("transcript") or ""), cont=bool(body.get("continue")),
                                 model_id=str(body.get("model_id") or ""), voice=body.get("voice") or {},
                                 output_format=body.get("output_format") or {}, add_timestamps=bool(body.get("add_timestamps")))
                self.requests.append(req)
                if req.output_format.get("encoding") != "pcm_s16le" or not req.voice.get("id") or not req.model_id:
                    await ws.send_str(json.dumps({"type": "error", "context_id": ctx, "status_code": 400, "done": True,
                                                  "error": "model_id, voice.id and a pcm_s16le output_format are required"}))
                    continue
                async with lock:
                    await self._say(ws, req, offsets)
        finally:
            self.forget_ws(ws)
        return ws

    async def _say(self, ws: web.WebSocketResponse, req: TtsRequest, offsets: dict[str, float]) -> None:
        ctx, rate = req.context_id, int(req.output_format.get("sample_rate") or 24000)
        if req.transcript.strip() and ctx not in self.cancelled:
            pcm = synthesize(req.transcript, rate, self.script.voice)
            at = offsets.get(ctx, 0.0)
            seconds = len(pcm) / 2 / rate
            offsets[ctx] = at + seconds
            words = req.transcript.split()
            if req.add_timestamps and words:
                step = seconds / len(words)
                await ws.send_str(json.dumps({"type": "timestamps", "context_id": ctx, "status_code": 206, "done": False,
                                              "word_timestamps": {"words": words,
                                                                  "start": [at + i * step for i in range(len(words))],
                                                                  "end": [at + (i + 1) * step for i in range(len(words))]}}))
            size = rate * CHUNK_MS // 1000 * 2
            for i in range(0, len(pcm), size):
                if ctx in self.cancelled:
                    return
                await ws.send_str(json.dumps({"type": "chunk", "context_id": ctx, "status_code": 206, "done": False,
                                              "step_time": CHUNK_MS, "data": base64.b64encode(pcm[i:i + size]).decode()}))
                await asyncio.sleep(0.001)
        if not req.cont and ctx not in self.cancelled:
            await ws.send_str(json.dumps({"type": "done", "context_id": ctx, "status_code": 206, "done": True}))
