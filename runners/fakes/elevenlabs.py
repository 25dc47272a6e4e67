"""A local ElevenLabs multi-context TTS websocket for a cascade's `ElevenLabsTTSService`.

It speaks what Pipecat's service sends: a websocket at
`/v1/text-to-speech/{voice_id}/multi-stream-input?model_id=…&output_format=pcm_<rate>&auto_mode=…`
with the key in the `xi-api-key` header, and JSON messages naming their `context_id`: a
context's opening `{"text": " "}` (its `voice_settings`, if any, may not change later on the
socket), text to speak, `flush`, `close_context`, keep-alives (`{"text": ""}`, with or without
a context) and `{"close_socket": true}`, which the server answers by closing. Each context's
text is answered with messages `{audio (base64 PCM16 at the asked rate, the fake's voice),
alignment / normalizedAlignment ({chars, charStartTimesMs, charDurationsMs}, restarting at zero
in every message, as the real ones do), contextId}`; a closed context, once its audio is out,
with `{"isFinal": true, contextId}`. With `auto_mode=true` (Pipecat's default: it sends whole
sentences) each text is spoken as it arrives, otherwise it waits in the context's buffer for 120
characters (the first step of the real default chunk schedule), a flush or the close. A sixth
open context, or voice settings changed after the first, close the socket with 1008, as the
real service does. Every socket and context is recorded; the key only as present.

Timing (`timing="real"`, `REAL_TIMING`): not measured for ElevenLabs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Unpack

from aiohttp import WSMsgType, web
from pydantic import BaseModel, Field

from runners.fakes.script import Script
from runners.fakes.server import ServerOptions, ServerSocket, SpeechFake, spawn
from runners.fakes.speech import chunks, synthesize
from runners.fakes.timing import ENVELOPE, ReplyPlan, paced
from runners.fakes.wire import b64

CONTEXT_LIMIT = 5  # open contexts per socket
FIRST_CHUNK_CHARS = 120  # what a buffer holds before it is spoken without auto mode

#: The shared envelope's shape with a TTS's figures, none measured for ElevenLabs: first audio
#: 150-450 ms after a context's text (ElevenLabs states ~75 ms of model time for Flash v2.5,
#: the rest is the network), 1 in 10 contexts slow (1-3 s: the notes' order of magnitude between
#: turns); audio generated 3x faster than it plays, in bursts of 0.2-0.8 s; `isFinal` 20-200 ms
#: after the last audio of a closed context.
REAL_TIMING = ENVELOPE.replace(first_audio_ms=(150.0, 450.0), slow_first_audio_ms=(1000.0, 3000.0),
                               stream_rate=3.0, burst_ms=(200.0, 800.0), terminal_lag_ms=(20.0, 200.0))


class ContextRecord(BaseModel):
    """One context: what it was asked to say and what became of it."""

    context_id: str
    voice_settings: dict[str, Any] | None = None
    texts: list[str] = Field(default_factory=list)  # every non-blank text, in order
    flushes: int = 0
    closed: bool = False  # close_context arrived
    final: bool = False  # isFinal sent
    audio_ms: float = 0.0


class SocketRecord(BaseModel):
    """One connection: its URL's voice and query, and the contexts it opened."""

    voice_id: str
    query: dict[str, str] = Field(default_factory=dict)
    auth_present: bool = False  # the key's value is never kept
    contexts: list[str] = Field(default_factory=list)  # ids in the order they opened
    keepalives: int = 0
    closed: str = ""  # "client", "client:close_socket", "server:1008 …"


class ElevenLabsFake(SpeechFake):
    """`async with ElevenLabsFake(script) as fake:` → `fake.base_url` (ws://…)."""

    REAL_TIMING = REAL_TIMING

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.sockets: list[SocketRecord] = []
        self.contexts: dict[str, ContextRecord] = {}

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/v1/text-to-speech/{voice_id}/multi-stream-input", self._socket)]

    def texts(self, context_id: str | None = None) -> list[str]:
        return [t for c in self.contexts.values() if context_id in (None, c.context_id) for t in c.texts]

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if not request.headers.get("xi-api-key", "").strip():
            return web.json_response({"detail": {"status": "invalid_api_key", "message": "xi-api-key is missing"}}, status=401)
        query = dict(request.query)
        rate = pcm_rate(query.get("output_format", ""))
        if not query.get("model_id") or rate is None:
            return web.json_response({"detail": {"status": "invalid_request",
                                                 "message": "model_id and a pcm_<rate> output_format are required"}}, status=400)
        rec = SocketRecord(voice_id=request.match_info["voice_id"], query=query, auth_present=True)
        self.sockets.append(rec)
        ws = await self.open_ws(request)
        try:
            await Session(self, rec, ServerSocket(ws), rate, auto=query.get("auto_mode") == "true").run()
        finally:
            self.forget_ws(ws)
            rec.closed = rec.closed or "client"
        return ws


def pcm_rate(output_format: str) -> int | None:
    """24000 for "pcm_24000"; None for anything else (this fake speaks PCM only)."""
    kind, _, rate = output_format.partition("_")
    return int(rate) if kind == "pcm" and rate.isdigit() else None


class Session:
    """One socket: its open contexts, each spoken in order by a task of its own."""

    def __init__(self, fake: ElevenLabsFake, rec: SocketRecord, sock: ServerSocket, rate: int, auto: bool) -> None:
        self.fake, self.rec, self.sock, self.rate, self.auto = fake, rec, sock, rate, auto
        self.open: dict[str, Context] = {}
        self.voice_settings: dict[str, Any] | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self.send_lock = asyncio.Lock()

    async def run(self) -> None:
        try:
            async for msg in self.sock.messages():
                if msg.type == WSMsgType.TEXT:
                    self.handle(json.loads(msg.data))
        finally:
            for task in list(self.tasks):
                task.cancel()

    def handle(self, body: dict[str, Any]) -> None:
        if body.get("close_socket"):
            self.rec.closed = "client:close_socket"
            self.sock.close_soon(1000, b"")
            return
        ctx_id = str(body.get("context_id") or "")
        text = body.get("text")
        if not ctx_id or (text == "" and not body.get("flush") and not body.get("close_context")):  # a keep-alive
            self.rec.keepalives += 1
            return
        ctx = self.open.get(ctx_id) or self.opened(ctx_id, body)
        if ctx is None:
            return
        if text:
            ctx.add(str(text))
        if body.get("flush"):
            ctx.record.flushes += 1
            ctx.push()
        if body.get("close_context"):
            ctx.close()
            del self.open[ctx_id]

    def opened(self, ctx_id: str, body: dict[str, Any]) -> Context | None:
        """A new context (its first message), or None when the socket refuses it."""
        if body.get("close_context") or body.get("flush"):  # about a context no longer open
            return None
        settings = body.get("voice_settings")
        if len(self.open) >= CONTEXT_LIMIT:
            self.refuse("Maximum simultaneous contexts per WebSocket connection exceeded (5).")
            return None
        if settings is not None and self.rec.contexts and settings != self.voice_settings:
            self.refuse("voice_settings must be provided in the first message and then not change.")
            return None
        if not self.rec.contexts:
            self.voice_settings = settings
        record = ContextRecord(context_id=ctx_id, voice_settings=settings)
        self.fake.contexts[ctx_id] = record
        self.rec.contexts.append(ctx_id)
        ctx = self.open[ctx_id] = Context(self, record, self.fake.timing.plan(len(self.fake.contexts) - 1))
        spawn(self.tasks, ctx.speak())
        return ctx

    def refuse(self, message: str) -> None:
        self.rec.closed = f"server:1008 {message}"
        self.sock.close_soon(1008, message.encode()[:120])

    async def send(self, msg: dict[str, Any]) -> None:
        async with self.send_lock:
            await self.sock.send_json(msg)


class Context:
    """One context's buffer and its speaker: texts are spoken in the order they came."""

    def __init__(self, session: Session, record: ContextRecord, plan: ReplyPlan) -> None:
        self.session, self.record, self.plan = session, record, plan
        self.buffer = ""
        self.queue: asyncio.Queue[tuple[str, float] | None] = asyncio.Queue()

    def add(self, text: str) -> None:
        if text.strip():
            self.record.texts.append(text)
        self.buffer += text
        if self.session.auto or len(self.buffer.strip()) >= FIRST_CHUNK_CHARS:
            self.push()

    def push(self) -> None:
        """Speak what the buffer holds (nothing, when it is blank)."""
        text, self.buffer = self.buffer.strip(), ""
        if text:
            self.queue.put_nowait((text, self.session.fake.clock.ms))

    def close(self) -> None:
        self.record.closed = True
        self.push()
        self.queue.put_nowait(None)

    async def speak(self) -> None:
        first = True
        while (item := await self.queue.get()) is not None:
            await self.generate(*item, leading=first)
            first = False
        await self.session.fake.clock.sleep(self.plan.terminal_lag_ms)
        await self.session.send({"isFinal": True, "contextId": self.record.context_id})
        self.record.final = True

    async def generate(self, text: str, arrived_ms: float, leading: bool) -> None:
        """The text's audio in messages, each with the characters it holds (a context's first
        speech starts with a space, as Flash's do; each ends with one)."""
        session, rate = self.session, self.session.rate
        parts = chunks(synthesize(text, rate, session.fake.script.voice), rate, session.fake.script.chunk_ms)
        parts_ms = [len(p) / 2 / rate * 1000.0 for p in parts]
        chars = list((" " if leading else "") + text + " ")
        async for i in paced(self.plan, session.fake.clock, arrived_ms, parts_ms):
            held = chars[i * len(chars) // len(parts):(i + 1) * len(chars) // len(parts)]
            step = parts_ms[i] / len(held) if held else 0.0
            alignment = {"chars": held, "charStartTimesMs": [round(k * step) for k in range(len(held))],
                         "charDurationsMs": [round(step)] * len(held)} if held else None
            await session.send({"audio": b64(parts[i]), "alignment": alignment, "normalizedAlignment": alignment,
                                "contextId": self.record.context_id})
            self.record.audio_ms += parts_ms[i]
