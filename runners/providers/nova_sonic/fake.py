"""A local stand-in for Amazon Nova Sonic's bidirectional stream, at the SDK boundary.

The real wire is HTTP/2 + AWS event-stream framing + SigV4, which no local server can
speak to the SDK without real AWS endpoints, so the fake sits one layer up: a client
object with `invoke_model_with_bidirectional_stream()` returning a duplex stream whose
input side takes Pipecat's `InvokeModelWithBidirectionalStreamInputChunk`s (Nova JSON
events: sessionStart, promptStart, contentStart/textInput/audioInput/toolResult/contentEnd,
promptEnd, sessionEnd) and whose output side yields real SDK output chunks carrying Nova
JSON events (completionStart, contentStart, textOutput, audioOutput, toolUse, contentEnd,
completionEnd, usageEvent). `LocalNovaSonicLLMService` is the real Pipecat service with
only `create_client()` overridden to return the fake's client.

Timing (`runners/fakes/timing.py`, `timing="real"`: the shared `ENVELOPE`, not measured for
Nova): the toolUse or the assistant AUDIO content a while after the user's speech ended,
`audioOutput` in bursts slower than real time inside one AUDIO content (one contentId, as AWS
documents), its contentEnd and the FINAL text right after the last chunk, and `completionEnd`
the plan's lag later; a `no_output` reply sends nothing at all.

Duplex cues (user speech over a reply, `runners/fakes/duplex.py`: the profile's `duplex` behaviour):
it stops with the audio and text `contentEnd` `INTERRUPTED` (a reply the user may speak over keeps
its audio content open while it plays).

Usage (`usageEvent` after each completion, as Nova reports it: `runners/fakes/usage.py`): the
`delta` since the last one, speech and text apart (input: the user speech heard since, 25 tokens a
second, our assumption; the system prompt, history and tool results sent since as text; output:
the reply's speech at the same rate, its text and calls as text), with the session's running totals.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Callable
from typing import Any

from aws_sdk_bedrock_runtime.models import (
    InvokeModelWithBidirectionalStreamInputChunk,
    InvokeModelWithBidirectionalStreamOperationInput,
    BidirectionalOutputPayloadPart,
    InvokeModelWithBidirectionalStreamOutputChunk,
)
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService, AWSNovaSonicLLMSettings
from pipecat.services.aws.nova_sonic.session_continuation import SessionContinuationParams

from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.reply_session import ReplySession
from runners.fakes.usage import NOVA_SPEECH_PER_S, audio_tokens, call_tokens, text_tokens
from runners.fakes.script import Script, ScriptedReplies, ScriptedReply
from runners.fakes.server import resolve_timing
from runners.fakes.speech import chunks, synthesize
from runners.fakes.wire import b64, tool_output
from runners.fakes.timing import ENVELOPE, FakeClock, ReplyPlan, TimingProfile, paced


class NovaSonicFake(ScriptedReplies):
    """Scripted Nova Sonic: one ConnectionRecord per opened bidirectional stream.

    It lives in this process at the SDK boundary (no socket): `base_url` says so, and the
    service reaches it only through `client()`."""

    base_url = "inproc://nova-sonic-fake"
    REAL_TIMING = ENVELOPE

    def __init__(self, script: Script | None = None, *, speed: float = 1.0, timing: str | TimingProfile = "instant"):
        self.script = script or Script()
        self.timing = resolve_timing(timing, self.REAL_TIMING)
        self.clock = FakeClock(speed)
        self.connections: list[ConnectionRecord] = []
        self.reply_count = 0
        self.clients_created = 0
        self.streams: list[FakeDuplexStream] = []

    async def start(self) -> NovaSonicFake:
        return self  # nothing to listen on

    async def stop(self) -> None:
        """End every stream still open, as the client closing them would."""
        for stream in self.streams:
            stream.end("client")

    def client(self) -> FakeBedrockClient:
        self.clients_created += 1
        return FakeBedrockClient(self)

    @property
    def last(self) -> ConnectionRecord:
        return self.connections[-1]

    async def wait_until[T](self, cond: Callable[[], T], timeout: float = 30.0, what: str = "") -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (value := cond()):
            if loop.time() > deadline:
                raise TimeoutError(f"fake NovaSonicFake: timed out waiting for {what or cond}")
            await asyncio.sleep(0.02)
        return value


class FakeBedrockClient:
    def __init__(self, fake: NovaSonicFake):
        self.fake = fake

    async def invoke_model_with_bidirectional_stream(self, op_input: InvokeModelWithBidirectionalStreamOperationInput
                                                     ) -> FakeDuplexStream:
        rec = ConnectionRecord(index=len(self.fake.connections) + 1, path=str(op_input.model_id))
        self.fake.connections.append(rec)
        stream = FakeDuplexStream(self.fake, rec)
        self.fake.streams.append(stream)
        return stream


class _Input:
    def __init__(self, stream: FakeDuplexStream):
        self._stream = stream
        self.closed = False

    async def send(self, chunk: InvokeModelWithBidirectionalStreamInputChunk) -> None:
        if self.closed:
            raise RuntimeError("input stream is closed")
        if self._stream.ended:
            # The service ended its side (HTTP/2 half-close); late client events are dropped.
            self._stream.late_events += 1
            return
        await self._stream.on_event(json.loads(chunk.value.bytes_.decode("utf-8")))

    async def close(self) -> None:
        self.closed = True


class _Output:
    def __init__(self, queue: asyncio.Queue[bytes | None]):
        self._queue = queue

    async def receive(self) -> InvokeModelWithBidirectionalStreamOutputChunk | None:
        item = await self._queue.get()
        if item is None:
            return None
        return InvokeModelWithBidirectionalStreamOutputChunk(value=BidirectionalOutputPayloadPart(bytes_=item))


class FakeDuplexStream(ReplySession):
    """One Nova session: decodes input events, answers by the script."""

    def __init__(self, fake: NovaSonicFake, rec: ConnectionRecord):
        super().__init__(fake, rec)
        self.input_stream = _Input(self)
        self._out: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.ended = False
        self.late_events = 0  # client events that arrived after the service ended the stream
        self.prompt_name = ""
        self.out_rate = 24000
        self.contents: dict[str, dict[str, Any]] = {}  # contentName -> contentStart (+ text)
        self.endpointer: Endpointer | None = None
        self.audio_pos_ms = 0.0  # audio time received, at the rate the client declared
        self._speech_start_ms: float | None = None
        self.utterances: list[tuple[float, float]] = []  # (start, end) ms of each user utterance heard
        self.speaking: tuple[str, str, str] | None = None  # (completion, audio content, text) while a reply's audio streams
        self.billed_ms = 0.0  # user audio already counted in a usageEvent
        self.billed_texts = 0  # texts sent (system, history, tool results) already counted
        self.texts: list[str] = []  # every text the client sent, in order
        self.totals = {"input": {"speechTokens": 0, "textTokens": 0}, "output": {"speechTokens": 0, "textTokens": 0}}

    # SDK surface used by Pipecat
    async def await_output(self) -> tuple[None, _Output]:
        return None, _Output(self._out)

    async def close(self) -> None:
        self.input_stream.closed = True
        self.end("client")

    def end(self, how: str) -> None:
        """End the response stream (the SDK then reports no more events)."""
        if not self.ended:
            self.ended = True
            self.rec.closed = self.rec.closed or how
            self._out.put_nowait(None)
            self.close_floor()

    # input side
    async def on_event(self, msg: dict[str, Any]) -> None:
        event = msg.get("event", {})
        (kind, body), = event.items()
        if kind != "audioInput":
            self.rec.messages.append({kind: body if kind != "textInput" or len(body.get("content", "")) < 512 else {**body, "content": f"<{len(body['content'])} chars>"}})
        if kind in ("sessionStart", "promptStart"):
            self.rec.setup[kind] = body
            if kind == "promptStart":
                self.prompt_name = body.get("promptName", "")
                self.out_rate = int(body.get("audioOutputConfiguration", {}).get("sampleRateHertz", 24000))
                for t in body.get("toolConfiguration", {}).get("tools", []):
                    spec = dict(t.get("toolSpec", t))
                    schema = spec.get("inputSchema", {}).get("json")
                    if isinstance(schema, str):
                        spec["inputSchema"] = {"json": json.loads(schema)}
                    self.rec.tools.append(spec)
        elif kind == "contentStart":
            self.contents[body["contentName"]] = {**body, "text": ""}
            if body.get("type") == "AUDIO":
                cfg = body.get("audioInputConfiguration", {})
                self.rec.audio_in_rate = int(cfg.get("sampleRateHertz", 16000))
                self.endpointer = Endpointer(self.rec.audio_in_rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
        elif kind == "textInput":
            self.contents[body["contentName"]]["text"] += body.get("content", "")
        elif kind == "audioInput":
            pcm = base64.b64decode(body.get("content", ""))
            self.rec.heard(pcm, self.rec.audio_in_rate)
            self.rec.audio_in_chunks += 1
            start_ms = self.audio_pos_ms
            self.audio_pos_ms += len(pcm) / 2 / (self.rec.audio_in_rate or 16000) * 1000.0
            said = self.endpointer.feed(pcm) if self.endpointer else None
            if self.floor.speech(said):
                return  # user speech over the reply (a duplex cue): the floor meets it
            if said == "started":
                self._speech_start_ms = start_ms
            elif said == "stopped":
                if self._speech_start_ms is not None:
                    self.utterances.append((self._speech_start_ms, self.audio_pos_ms - self.script.silence_ms))
                    self._speech_start_ms = None
                self.rec.user_turns += 1
                self.mark("user_end")
                self.respond()
        elif kind == "toolResult":
            opened = self.contents.get(body.get("contentName"), {})
            call_id = opened.get("toolResultInputConfiguration", {}).get("toolUseId")
            raw = body.get("content")
            result = tool_output(raw)
            self.texts.append(raw if isinstance(raw, str) else json.dumps(raw))
            self.answered({"call_id": call_id, "name": None, "result": result})
        elif kind == "contentEnd":
            c = self.contents.get(body.get("contentName"))
            if c and c.get("type") == "TEXT":
                role = c.get("role")
                self.texts.append(c.get("text", ""))
                if role == "SYSTEM":
                    self.rec.system_instruction = c["text"]
                elif c.get("interactive"):
                    self.rec.history.append({"role": role, "text": c["text"], "interactive": True})
                    self.respond()
                else:
                    self.rec.history.append({"role": role, "text": c["text"]})
        elif kind == "sessionEnd":
            self.end("client")

    # output side
    def emit(self, kind: str, body: dict[str, Any]) -> None:
        if not self.ended:
            self._out.put_nowait(json.dumps({"event": {kind: body}}).encode("utf-8"))

    def _content(self, ctype: str, role: str, stage: str | None, **extra: object) -> str:
        name = str(uuid.uuid4())
        body: dict[str, Any] = {"promptName": self.prompt_name, "contentId": name, "type": ctype, "role": role, **extra}
        if stage:
            body["additionalModelFields"] = json.dumps({"generationStage": stage})
        self.emit("contentStart", body)
        return name

    def _text(self, role: str, stage: str, text: str, stop: str = "END_TURN") -> None:
        cid = self._content("TEXT", role, stage)
        self.emit("textOutput", {"promptName": self.prompt_name, "contentId": cid, "content": text, "role": role})
        self.emit("contentEnd", {"promptName": self.prompt_name, "contentId": cid, "type": "TEXT", "stopReason": stop})

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): Nova ends its audio and its text INTERRUPTED."""
        self.mark("barge_in")
        self.replying.cancel()
        if self.speaking is not None:
            completion, cid, text = self.speaking
            self.speaking = None
            self.emit("contentEnd", {"promptName": self.prompt_name, "contentId": cid, "type": "AUDIO", "stopReason": "INTERRUPTED"})
            self._text("ASSISTANT", "FINAL", text, stop="INTERRUPTED")
            self.emit("completionEnd", {"promptName": self.prompt_name, "completionId": completion, "stopReason": "INTERRUPTED"})

    async def reply(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        """One completion; `anchor_ms`: when its trigger (the user's speech end, a text) came."""
        completion = str(uuid.uuid4())
        self.emit("completionStart", {"promptName": self.prompt_name, "completionId": completion})
        if reply.user_transcript:
            self._text("USER", "FINAL", reply.user_transcript)
        for call in reply.tool_calls:  # one toolUse each, answered before the next
            call_id = call.call_id or str(uuid.uuid4())
            fut = self.expect_result(call_id, call.name)
            await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
            self.mark("tool_call", n)
            cid = self._content("TOOL", "TOOL", None, toolUseOutputConfiguration={"mediaType": "application/json"})
            self.emit(
                "toolUse",
                {"promptName": self.prompt_name, "contentId": cid, "toolName": call.name,
                 "toolUseId": call_id, "content": json.dumps(call.args)},
            )
            self.emit("contentEnd", {"promptName": self.prompt_name, "contentId": cid, "type": "TOOL", "stopReason": "TOOL_USE"})
            await fut
            anchor_ms = self.now
        last_ms, spoken_ms = self.now, 0.0
        if reply.text:
            parts = chunks(synthesize(reply.text, self.out_rate, self.script.voice), self.out_rate, self.script.chunk_ms) if reply.audio else []
            parts_ms = [len(p) / 2 / self.out_rate * 1000.0 for p in parts] or [0.0]
            spoken_ms = sum(len(p) for p in parts) / 2 / self.out_rate * 1000.0
            cid = ""
            async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
                if i == 0:
                    self._text("ASSISTANT", "SPECULATIVE", reply.text, stop="PARTIAL_TURN")
                    if parts:
                        cid = self._content("AUDIO", "ASSISTANT", None, audioOutputConfiguration={"sampleRateHertz": self.out_rate})
                        self.speaking = (completion, cid, reply.text)
                if parts:
                    self.mark("audio", n, parts_ms[i])
                    self.floor.sent(parts_ms[i])
                    self.emit("audioOutput", {"promptName": self.prompt_name, "contentId": cid, "content": b64(parts[i])})
                    await asyncio.sleep(0)
            if self.floor.kinds:  # the user may speak over it: the audio content stays open while it plays
                await self.fake.clock.until(self.floor.until_ms)
            last_ms = self.now
            self.speaking = None
            if parts:
                self.emit("contentEnd", {"promptName": self.prompt_name, "contentId": cid, "type": "AUDIO", "stopReason": "END_TURN"})
            self._text("ASSISTANT", "FINAL", reply.text)
        await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
        self.emit("usageEvent", {"promptName": self.prompt_name, "completionId": completion, **self.usage(reply, spoken_ms)})
        self.mark("terminal", n)
        self.emit("completionEnd", {"promptName": self.prompt_name, "completionId": completion, "stopReason": "END_TURN"})
        if reply.then:
            # AWS ends a session (e.g. the ~8 min limit) by ending the response stream.
            self.rec.closed = f"server:{reply.then}"
            self.end(f"server:{reply.then}")


    def usage(self, reply: ScriptedReply, spoken_ms: float) -> dict[str, Any]:
        """A usageEvent's body: what this completion used since the last one, and the totals (module docstring)."""
        delta = {
            "input": {"speechTokens": audio_tokens(self.audio_pos_ms - self.billed_ms, NOVA_SPEECH_PER_S),
                      "textTokens": text_tokens(*self.texts[self.billed_texts:])},
            "output": {"speechTokens": audio_tokens(spoken_ms, NOVA_SPEECH_PER_S),
                       "textTokens": text_tokens(reply.text) + call_tokens(reply.tool_calls)},
        }
        self.billed_ms, self.billed_texts = self.audio_pos_ms, len(self.texts)
        for side, counts in delta.items():
            for k, v in counts.items():
                self.totals[side][k] += v
        given, made = (sum(self.totals[side].values()) for side in ("input", "output"))
        return {"details": {"delta": delta, "total": json.loads(json.dumps(self.totals))},
                "totalInputTokens": given, "totalOutputTokens": made, "totalTokens": given + made}


class LocalNovaSonicLLMService(AWSNovaSonicLLMService):
    """The real Pipecat Nova Sonic service, its Bedrock client swapped for the fake's."""

    def __init__(self, *, fake: NovaSonicFake, settings: AWSNovaSonicLLMSettings, tools: ToolsSchema | None = None,
                 session_continuation: SessionContinuationParams | None = None):
        self._fake = fake
        super().__init__(secret_access_key="fake-secret", access_key_id="fake-id", region="us-east-1", settings=settings,
                         tools=tools, session_continuation=session_continuation)

    def create_client(self) -> Any:
        return self._fake.client()
