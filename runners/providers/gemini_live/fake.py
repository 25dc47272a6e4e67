"""A local Gemini Live API (BidiGenerateContent) server for `GeminiLiveLLMService`.

google-genai always dials `wss://`, so the fake listens with TLS; give the client
`HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client})`.
Wire format (JSON text frames): the client sends `setup` first (answered with
`setupComplete`), then `realtimeInput` (audio/text/activity), `clientContent` (history,
turnComplete) and `toolResponse`; the server sends `serverContent` (modelTurn audio,
input/outputTranscription, generationComplete, turnComplete), `toolCall`, `usageMetadata`,
`sessionResumptionUpdate` and `goAway`. google-genai writes top-level client keys in
snake_case, so every key is read in either spelling.

Usage (`usageMetadata`, as the Live API counts it: `runners/fakes/usage.py`): a reply's last
turnComplete carries it with the modality split, the prompt being the whole conversation so far
(the system instruction and its text turns as TEXT, every second of user audio heard as 32 AUDIO
tokens) and the response the reply's audio (32 a second) and its calls as TEXT; an earlier
turnComplete of the same reply carries none of it (zeros), so a reply is counted once.

Timing (`runners/fakes/timing.py`): with `timing="real"` a reply follows `REAL_TIMING`, taken
from measurements of the real service, and shows its quirks, each a named behaviour a profile
turns on for a share of replies or a test forces per reply (only fields the real protocol has;
`interactionStatus` is `LiveServerContent.interaction_status` in google-genai, sent with
`turnComplete`):
- `interaction_status`: every turnComplete carries `interactionStatus`: an early one
  `IN_PROGRESS` right after `generationComplete`, the last `REQUIRES_ACTION` after the lag;
- `several_turn_completes`: more `IN_PROGRESS` turnCompletes in the reply's gaps (implies the above);
- `interrupted_idle`: `interrupted` with zero output while the user's activity window is open;
- `early_output`: the reply starts while the user's audio is still coming (before activityEnd);
- `resumption_mid_reply`: `sessionResumptionUpdate` every ~0.5 s during a reply, not resumable
  and without a handle (what the API sends while generating);
- `empty_server_content`: `serverContent: {}` messages in the middle of a reply;
- `TurnTiming(no_output=True)`: the turn gets nothing at all (a stall); asked again, it is answered.

Duplex cues (user speech over a reply, `runners/fakes/duplex.py`: the profile's `duplex` behaviour):
it stops with `serverContent.interrupted`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.reply_session import SocketSession
from runners.fakes.server import FakeServer
from runners.fakes.speech import chunks, synthesize
from runners.fakes.tls import TlsPair, self_signed_tls
from runners.fakes.wire import b64, b64decode_any, elide_audio, pick, spread_words
from runners.fakes.timing import ENVELOPE, ReplyPlan, TimingProfile, paced
from runners.fakes.usage import GEMINI_AUDIO_PER_S, audio_tokens, call_tokens, text_tokens

WS_PATH = "/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent"
OUTPUT_RATE = 24000

# Quirks of the real service (see the module docstring), as `TimingProfile.quirks` names.
INTERACTION_STATUS = "interaction_status"
SEVERAL_TURN_COMPLETES = "several_turn_completes"
INTERRUPTED_IDLE = "interrupted_idle"
EARLY_OUTPUT = "early_output"
RESUMPTION_MID_REPLY = "resumption_mid_reply"
EMPTY_SERVER_CONTENT = "empty_server_content"

INTERRUPTED_AFTER_MS = 300.0  # audio into the activity window before an idle `interrupted`
EARLY_OUTPUT_AFTER_MS = 300.0  # audio into the activity window at which an early reply starts
RESUMPTION_EVERY_MS = 500.0  # sessionResumptionUpdate spacing during a reply

#: What Gemini Live does in time (../shared/notes/real-provider-timing.md: kwindla/aiewf-eval's
#: measurements): first audio 0.5-1.4 s after the user's audio, 1 in 10 slow (up to 10 s); audio
#: at ~0.25x real time in dozens of bursts (16 s of speech over ~72 s); turnComplete 5-15 s after
#: generationComplete; interactionStatus on some models (here: half the replies, which model
#: reports it is not known per model); idle `interrupted`, empty serverContent and mid-reply
#: resumption updates as observed. Early output and stalls are left to tests (`TurnTiming`):
#: explicit activity windows, which the engine sends, avoided the first; a seeded stall would
#: make every run's verdict depend on which turn drew it.
REAL_TIMING = ENVELOPE.replace(
    quirks={INTERACTION_STATUS: 0.5, SEVERAL_TURN_COMPLETES: 0.3, INTERRUPTED_IDLE: 0.3,
            RESUMPTION_MID_REPLY: 1.0, EMPTY_SERVER_CONTENT: 0.5},
)


class ProtocolError(Exception):
    """Client input the real service rejects; the session closes with 1007."""


def content_text(content: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in content.get("parts", []) if isinstance(p, dict))


class GeminiLiveFake(FakeServer):
    """Scripted Gemini Live server. Session-resumption handles map to the stored history."""

    REAL_TIMING = REAL_TIMING

    def __init__(
        self,
        script: Script | None = None,
        *,
        tls: TlsPair | None = None,
        go_away_ms: int = 300,
        grant_resumption: bool = True,
        stall_after_tool: bool = False,
        speed: float = 1.0,
        timing: str | TimingProfile = "instant",
    ):
        super().__init__(script, tls=tls or self_signed_tls(), speed=speed, timing=timing)
        self.go_away_ms = go_away_ms
        self.grant_resumption = grant_resumption  # False: never send a handle (client must replay)
        # True: after a tool response, say nothing until some realtime_input.text arrives
        # (Gemini's reported stall: no inference after a tool result until realtime input)
        self.stall_after_tool = stall_after_tool
        self._resumable: dict[str, list[dict[str, Any]]] = {}  # handle -> history
        #: (close code, reason): close every session at its setup, as the real service refuses a
        #: setup it cannot take (1007: an invalid argument; 1008: policy, e.g. a key it does not accept)
        self.refuse_setup: tuple[int, str] | None = None

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


class _Session(SocketSession):
    fake: GeminiLiveFake
    #: what `usageMetadata` names the response's count and its modality split: the Developer API's
    #: `responseTokenCount`; Vertex AI's Live API says `candidatesTokenCount` (its `UsageMetadata`)
    RESPONSE_COUNT, RESPONSE_DETAILS = "responseTokenCount", "responseTokensDetails"

    def __init__(self, fake: GeminiLiveFake, rec: ConnectionRecord, ws: web.WebSocketResponse):
        super().__init__(fake, rec, ws)
        self.history: list[dict[str, Any]] = []
        self.endpointer: Endpointer | None = None
        self.vad_disabled = False
        self.resumption = False
        self.realtime_text: asyncio.Event = asyncio.Event()  # set by each realtime_input.text
        self.window: _Window | None = None  # the user's activity window while it is open

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
        self.close_floor()

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
        if self.fake.refuse_setup is not None:
            code, reason = self.fake.refuse_setup
            self.rec.closed = f"server:{code}"
            await self.ws.close(code=code, message=reason.encode())
            return
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
            self.rec.heard(pcm, rate)
            self.rec.audio_in_chunks += 1
            if self.window is not None:
                await self.window_audio(len(pcm) / 2 / rate * 1000.0)
            if not self.vad_disabled:
                if self.endpointer is None:
                    self.endpointer = Endpointer(rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
                edge = self.endpointer.feed(pcm)
                if not self.floor.speech(edge) and edge == "stopped":
                    self.user_turn_ended()
        if pick(ri, "activityStart") is not None and not self.floor.speech("started"):
            self.window = _Window(plan=self.fake.upcoming_plan())
        if pick(ri, "activityEnd") is not None and not self.floor.speech("stopped"):
            window, self.window = self.window, None
            if window is not None and window.answered:
                self.mark("user_end")  # its reply is already under way (early output)
            else:
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
            self.answered({"call_id": fr.get("id"), "name": fr.get("name"), "result": fr.get("response")})

    async def window_audio(self, ms: float) -> None:
        """User audio inside an open activity window: the quirks that happen while it is open."""
        w = self.window
        assert w is not None
        w.audio_ms += ms
        if w.plan.has(INTERRUPTED_IDLE) and not w.interrupted and w.audio_ms >= INTERRUPTED_AFTER_MS:
            w.interrupted = True  # housekeeping: nothing was said, nothing is cut
            self.mark("interrupted", w.plan.reply)
            await self.send({"serverContent": {"interrupted": True}})
        if w.plan.has(EARLY_OUTPUT) and not w.answered and w.audio_ms >= EARLY_OUTPUT_AFTER_MS:
            w.answered = True  # a pause taken for the end of the turn: the reply starts now
            self.mark("early_output", w.plan.reply)
            self.user_turn_ended()

    def user_turn_ended(self) -> None:
        self.rec.user_turns += 1
        self.mark("user_end")
        self.respond()

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): Gemini says `interrupted`, and generates no more."""
        self.mark("barge_in")
        self.replying.cancel()
        await self.send({"serverContent": {"interrupted": True}})

    async def reply(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        """One reply: `anchor_ms` is when its trigger arrived (the end of the user's audio, the
        client's turnComplete), from which its plan's first-audio delay counts."""
        ticker = spawn_ticker(self, plan)
        try:
            if reply.user_transcript:
                await self.send({"serverContent": {"inputTranscription": {"text": reply.user_transcript}}})
                self.history.append({"role": "user", "text": reply.user_transcript})
            for call in reply.tool_calls:  # one toolCall each, answered before the next
                await self.fake.clock.until(anchor_ms + plan.first_audio_ms)  # the model's time to decide
                call_id = call.call_id or f"call-{n}-{uuid.uuid4().hex[:6]}"
                fut = self.expect_result(call_id, call.name)
                self.realtime_text.clear()
                self.mark("tool_call", n)
                await self.send({"toolCall": {"functionCalls": [{"id": call_id, "name": call.name, "args": call.args}]}})
                await fut
                anchor_ms = self.now
                self.mark("tool_result", n)
            if reply.tool_calls and self.fake.stall_after_tool:
                await self.realtime_text.wait()
                anchor_ms = self.now
            await self.speak(n, reply, plan, anchor_ms)
        finally:
            if ticker is not None:
                ticker.cancel()
        await self.after(reply)

    async def speak(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        """The reply's audio and transcript on the plan's schedule, then generationComplete at
        once and the final turnComplete (with usage) the plan's lag later."""
        status = plan.has(INTERACTION_STATUS) or plan.has(SEVERAL_TURN_COMPLETES)
        spoken_ms = 0.0
        if reply.text:
            pcm = synthesize(reply.text, OUTPUT_RATE, self.script.voice) if reply.audio else b""
            parts = chunks(pcm, OUTPUT_RATE, self.script.chunk_ms)
            deltas = spread_words(reply.text, len(parts))
            parts_ms = [len(p) / 2 / OUTPUT_RATE * 1000.0 for p in parts] or [0.0]
            spoken_ms = sum(len(p) for p in parts) / 2 / OUTPUT_RATE * 1000.0
            starts = _burst_starts(plan.schedule(parts_ms))
            rng = plan.rng("gemini")
            empties = {rng.randrange(len(parts_ms)) for _ in range(rng.randint(1, 3))} if plan.has(EMPTY_SERVER_CONTENT) else set()
            splits = set(rng.sample(sorted(starts), min(len(starts), 2))) if plan.has(SEVERAL_TURN_COMPLETES) else set()
            async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
                if i in empties:
                    self.mark("empty_server_content", n)
                    await self.send({"serverContent": {}})
                if i in splits:  # the model pauses to think: this turnComplete closes only a chunk
                    await self.turn_complete(n, "IN_PROGRESS")
                if deltas[i]:
                    await self.send({"serverContent": {"outputTranscription": {"text": deltas[i]}}})
                if i < len(parts):
                    inline = {"mimeType": f"audio/pcm;rate={OUTPUT_RATE}", "data": b64(parts[i])}
                    self.mark("audio", n, parts_ms[i])
                    self.floor.sent(parts_ms[i])
                    await self.send({"serverContent": {"modelTurn": {"parts": [{"inlineData": inline}]}}})
            self.history.append({"role": "model", "text": reply.text})
        else:
            await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
        last_ms = self.now
        self.mark("generationComplete", n)
        await self.send({"serverContent": {"generationComplete": True}})
        if status:  # the early turnComplete: generation is done, the session not yet idle
            await self.turn_complete(n, "IN_PROGRESS")
        await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
        await self.turn_complete(n, "REQUIRES_ACTION" if status else None, self.usage(reply, spoken_ms), final=True)
        if self.resumption and self.fake.grant_resumption:
            handle = f"h-{uuid.uuid4().hex[:10]}"
            self.fake._resumable[handle] = list(self.history)
            await self.send({"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})

    async def turn_complete(self, n: int, status: str | None, usage: dict[str, Any] | None = None,
                            final: bool = False) -> None:
        """A turnComplete with usage (Pipecat warns without it; zeros but on a reply's last one);
        `status`: its interactionStatus."""
        content: dict[str, Any] = {"turnComplete": True}
        if status:
            content["interactionStatus"] = status
        self.mark("terminal" if final else f"turnComplete:{status}", n)
        zeros = {"promptTokenCount": 0, self.RESPONSE_COUNT: 0, "totalTokenCount": 0}
        await self.send({"serverContent": content, "usageMetadata": usage or zeros})

    def usage(self, reply: ScriptedReply, spoken_ms: float) -> dict[str, Any]:
        """A reply's `usageMetadata` as the Live API counts it (module docstring)."""
        text_in = text_tokens(self.rec.system_instruction or "", *(str(h.get("text", "")) for h in self.history))
        audio_in = audio_tokens(self.rec.audio_in_ms, GEMINI_AUDIO_PER_S)
        audio_out, text_out = audio_tokens(spoken_ms, GEMINI_AUDIO_PER_S), call_tokens(reply.tool_calls)
        prompt = [{"modality": "TEXT", "tokenCount": text_in}] + ([{"modality": "AUDIO", "tokenCount": audio_in}] if audio_in else [])
        response = [{"modality": m, "tokenCount": k} for m, k in (("TEXT", text_out), ("AUDIO", audio_out)) if k]
        return {"promptTokenCount": text_in + audio_in, self.RESPONSE_COUNT: text_out + audio_out,
                "totalTokenCount": text_in + audio_in + text_out + audio_out,
                "promptTokensDetails": prompt, self.RESPONSE_DETAILS: response}

    async def resumption_ticks(self, n: int) -> None:
        """While a reply is under way: an update every ~0.5 s saying the session cannot be
        resumed here (no handle), as the API does while the model generates. On a fixed cadence
        from the reply's start, not one sleep after another: a busy loop delays a tick, never the
        ones after it."""
        clock = self.fake.clock
        start = clock.ms
        tick = 0
        while True:
            tick += 1
            await clock.until(start + tick * RESUMPTION_EVERY_MS)
            self.mark("resumption_update", n)
            await self.send({"sessionResumptionUpdate": {}})

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


class _Window:
    """An open activity window: the audio received in it and the quirks already shown."""

    def __init__(self, plan: ReplyPlan) -> None:
        self.plan = plan
        self.audio_ms = 0.0
        self.interrupted = False
        self.answered = False  # its reply already started (early output)


def _burst_starts(schedule: list[float]) -> set[int]:
    """Indices of the parts that open a burst after a gap (not the first)."""
    return {i for i in range(1, len(schedule)) if schedule[i] > schedule[i - 1]}


def spawn_ticker(session: _Session, plan: ReplyPlan) -> asyncio.Task[None] | None:
    """The mid-reply resumption updates, when the client asked for resumption and the plan has them."""
    if not (plan.has(RESUMPTION_MID_REPLY) and session.resumption):
        return None
    task = asyncio.get_running_loop().create_task(session.resumption_ticks(plan.reply))
    session.tasks.add(task)
    task.add_done_callback(session.tasks.discard)
    return task


#: one session of the protocol, as another fake of it extends it (Vertex AI's: `providers/gemini_vertex/fake.py`)
Session = _Session
