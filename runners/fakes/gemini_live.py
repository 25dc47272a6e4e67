"""A local Gemini Live API (BidiGenerateContent) server for `GeminiLiveLLMService`.

google-genai always dials `wss://`, so the fake listens with TLS; give the client
`HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client})`.
Wire format (JSON text frames): the client sends `setup` first (answered with
`setupComplete`), then `realtimeInput` (audio/text/activity), `clientContent` (history,
turnComplete) and `toolResponse`; the server sends `serverContent` (modelTurn audio,
input/outputTranscription, generationComplete, turnComplete), `toolCall`, `usageMetadata`,
`sessionResumptionUpdate` and `goAway`. google-genai writes top-level client keys in
snake_case, so every key is read in either spelling.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.common import (
    ConnectionRecord,
    Endpointer,
    FakeServer,
    Script,
    ScriptedReply,
    ServerSocket,
    TlsPair,
    b64,
    b64decode_any,
    chunks,
    elide_audio,
    pick,
    self_signed_tls,
    spawn,
    spread_words,
    synthesize,
)

WS_PATH = "/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent"
OUTPUT_RATE = 24000


class ProtocolError(Exception):
    """Client input the real service rejects; the session closes with 1007."""


def content_text(content: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in content.get("parts", []) if isinstance(p, dict))


class GeminiLiveFake(FakeServer):
    """Scripted Gemini Live server. Session-resumption handles map to the stored history."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        tls: TlsPair | None = None,
        go_away_ms: int = 300,
        grant_resumption: bool = True,
        stall_after_tool: bool = False,
    ):
        super().__init__(script, tls=tls or self_signed_tls())
        self.go_away_ms = go_away_ms
        self.grant_resumption = grant_resumption  # False: never send a handle (client must replay)
        # True: after a tool response, say nothing until some realtime_input.text arrives
        # (Gemini's reported stall: no inference after a tool result until realtime input)
        self.stall_after_tool = stall_after_tool
        self._resumable: dict[str, list[dict[str, Any]]] = {}  # handle -> history

    def resumable_history(self, handle: str) -> list[dict[str, Any]]:
        """What the fake keeps server-side for a resumption handle ({role, text} entries)."""
        return list(self._resumable.get(handle, []))

    @property
    def base_url(self) -> str:
        return f"https://{self.host}"

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get(WS_PATH.format(version=v), self.ws_handler(_Session)) for v in ("v1beta", "v1alpha", "v1")
        ]


class _Session:
    def __init__(self, fake: GeminiLiveFake, rec: ConnectionRecord, ws: web.WebSocketResponse):
        self.fake, self.rec, self.ws = fake, rec, ws
        self.sock = ServerSocket(ws)
        self.script = fake.script
        self.history: list[dict[str, Any]] = []
        self.endpointer: Endpointer | None = None
        self.vad_disabled = False
        self.resumption = False
        self.lock = asyncio.Lock()
        self.pending_tool: dict[str, asyncio.Future[Any]] = {}
        self.realtime_text: asyncio.Event = asyncio.Event()  # set by each realtime_input.text
        self.tasks: set[asyncio.Task[None]] = set()

    async def send(self, msg: dict[str, Any]) -> None:
        await self.sock.send_json(msg)

    async def run(self) -> None:
        async for msg in self.sock.messages():
            if msg.type != WSMsgType.TEXT and msg.type != WSMsgType.BINARY:
                break
            try:
                await self.handle(json.loads(msg.data))
            except Exception as e:  # a real server answers bad input with a close, not a crash
                self.rec.errors.append(f"{type(e).__name__}: {e}")
                self.rec.closed = "server:1007"
                await self.ws.close(code=1007, message=str(e)[:120].encode())
                break
        for t in self.tasks:
            t.cancel()

    async def handle(self, data: dict[str, Any]) -> None:
        if not pick(data, "realtimeInput") or not pick(pick(data, "realtimeInput"), "audio"):
            self.rec.messages.append(elide_audio(data))
        if (setup := pick(data, "setup")) is not None:
            await self.on_setup(setup)
        elif (ri := pick(data, "realtimeInput")) is not None:
            await self.on_realtime_input(ri)
        elif (cc := pick(data, "clientContent")) is not None:
            await self.on_client_content(cc)
        elif (tr := pick(data, "toolResponse")) is not None:
            self.on_tool_response(tr)

    async def on_setup(self, setup: dict[str, Any]) -> None:
        self.rec.setup = setup
        si = pick(setup, "systemInstruction")
        if isinstance(si, dict):
            self.rec.system_instruction = content_text(si)
        elif isinstance(si, str):
            self.rec.system_instruction = si
        for tool in pick(setup, "tools", []) or []:
            for fd in pick(tool, "functionDeclarations", []) or []:
                self.rec.tools.append(fd)
        ric = pick(setup, "realtimeInputConfig") or {}
        aad = pick(ric, "automaticActivityDetection") or {}
        self.vad_disabled = bool(pick(aad, "disabled", False))
        sr = pick(setup, "sessionResumption")
        self.resumption = sr is not None
        handle = pick(sr, "handle") if isinstance(sr, dict) else None
        if handle:
            self.rec.resumed_from = handle
            self.history = list(self.fake._resumable.get(handle, []))
        await self.send({"setupComplete": {"sessionId": str(uuid.uuid4())}})

    async def on_realtime_input(self, ri: dict[str, Any]) -> None:
        audio = pick(ri, "audio") or pick(ri, "mediaChunks")
        if isinstance(audio, list):
            audio = audio[0] if audio else None
        if audio:
            pcm = b64decode_any(pick(audio, "data", ""))
            mime = pick(audio, "mimeType", "") or ""
            rate = int(mime.split("rate=")[1]) if "rate=" in mime else 16000
            self.rec.audio_in_rate = rate
            self.rec.audio_in_bytes += len(pcm)
            self.rec.audio_in_chunks += 1
            if not self.vad_disabled:
                if self.endpointer is None:
                    self.endpointer = Endpointer(rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
                if self.endpointer.feed(pcm) == "stopped":
                    self.user_turn_ended()
        if pick(ri, "activityEnd") is not None:
            self.user_turn_ended()
        text = pick(ri, "text")
        if isinstance(text, str):
            self.realtime_text.set()
        if isinstance(text, str) and text.strip():
            self.history.append({"role": "user", "text": text})
            self.user_turn_ended()

    async def on_client_content(self, cc: dict[str, Any]) -> None:
        for turn in pick(cc, "turns", []) or []:
            for part in turn.get("parts", []) or []:
                if isinstance(part, dict) and (pick(part, "functionCall") or pick(part, "functionResponse")):
                    # What Gemini Live does with seeded tool parts (noted in Pipecat's adapter).
                    raise ProtocolError("functionCall/functionResponse parts are not accepted in client_content")
            entry = {"role": turn.get("role", "user"), "text": content_text(turn)}
            self.rec.history.append(entry)
            self.history.append(entry)
        if pick(cc, "turnComplete", False):
            self.respond()

    def on_tool_response(self, tr: dict[str, Any]) -> None:
        for fr in pick(tr, "functionResponses", []) or []:
            result = {"call_id": fr.get("id"), "name": fr.get("name"), "result": fr.get("response")}
            self.rec.tool_results.append(result)
            fut = self.pending_tool.pop(fr.get("id"), None)
            if fut and not fut.done():
                fut.set_result(result)

    def user_turn_ended(self) -> None:
        self.rec.user_turns += 1
        self.respond()

    def respond(self) -> None:
        spawn(self.tasks, self._respond())

    async def _respond(self) -> None:
        async with self.lock:
            n, reply = self.fake.next_reply(self.rec)
            if reply.user_transcript:
                await self.send({"serverContent": {"inputTranscription": {"text": reply.user_transcript}}})
                self.history.append({"role": "user", "text": reply.user_transcript})
            for call in reply.tool_calls:  # one toolCall each, answered before the next
                call_id = call.call_id or f"call-{n}-{uuid.uuid4().hex[:6]}"
                fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                self.pending_tool[call_id] = fut
                self.realtime_text.clear()
                await self.send({"toolCall": {"functionCalls": [{"id": call_id, "name": call.name, "args": call.args}]}})
                await fut
            if reply.tool_calls and self.fake.stall_after_tool:
                await self.realtime_text.wait()
            await self.speak(reply)
            await self.after(reply)

    async def speak(self, reply: ScriptedReply) -> None:
        if reply.text:
            pcm = synthesize(reply.text, OUTPUT_RATE, self.script.voice) if reply.audio else b""
            parts = chunks(pcm, OUTPUT_RATE, self.script.chunk_ms)
            deltas = spread_words(reply.text, len(parts))
            for i in range(max(len(parts), 1)):
                if deltas[i]:
                    await self.send({"serverContent": {"outputTranscription": {"text": deltas[i]}}})
                if i < len(parts):
                    inline = {"mimeType": f"audio/pcm;rate={OUTPUT_RATE}", "data": b64(parts[i])}
                    await self.send({"serverContent": {"modelTurn": {"parts": [{"inlineData": inline}]}}})
            self.history.append({"role": "model", "text": reply.text})
        tokens = max(1, len(reply.text) // 4)
        await self.send({"serverContent": {"generationComplete": True}})
        await self.send(
            {
                "serverContent": {"turnComplete": True},
                "usageMetadata": {"promptTokenCount": 10, "responseTokenCount": tokens, "totalTokenCount": 10 + tokens},
            }
        )
        if self.resumption and self.fake.grant_resumption:
            handle = f"h-{uuid.uuid4().hex[:10]}"
            self.fake._resumable[handle] = list(self.history)
            await self.send({"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})

    async def after(self, reply: ScriptedReply) -> None:
        if reply.then == "disconnect":
            self.rec.closed = f"server:{reply.close_code}"
            self.sock.close_soon(reply.close_code, b"forced disconnect")
        elif reply.then == "go_away":
            await self.send({"goAway": {"timeLeft": f"{self.fake.go_away_ms / 1000:.3f}s"}})
            await asyncio.sleep(self.fake.go_away_ms / 1000)
            self.rec.closed = "server:go_away"
            self.sock.close_soon(1000, b"session ended after goAway")
        elif reply.then == "expire":
            self.rec.closed = "server:expired"
            self.sock.close_soon(1011, b"The session has expired")
