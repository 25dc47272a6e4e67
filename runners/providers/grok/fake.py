"""A local xAI Grok Voice Agent (realtime) server for `GrokRealtimeLLMService`.

The OpenAI-Realtime simulator (runners/simulator) is benchmark-driven and speaks OpenAI's
GA dialect; xAI differs where it matters to a client, so this small fake speaks xAI's:
- the server opens with `conversation.created` and only then expects `session.update`;
- `turn_detection` sits at the session's top level (`{"type": "server_vad"}` or null), the
  audio format under `session.audio.input/output.format` ({type: "audio/pcm", rate});
- user audio appended before `session.updated` is dropped;
- `response.function_call_arguments.done` carries `name` (Pipecat reads it from there);
- responses stream `response.output_audio.delta` / `response.output_audio_transcript.delta`.
Server VAD is the fake's energy endpointer (end of speech after the session's
`turn_detection.silence_duration_ms`, else the script's); a tool-calling reply spans two
responses. Items the client creates are checked as the API would (a `function_call_output`
must answer a call the conversation knows) and replayed ones are recorded in order in
`history`: messages as `{role, text}`, calls as `{role: "function_call", call_id, name, args}`,
outputs that answer no live call as `{role: "function_call_output", call_id, output}`.

Timing (`runners/fakes/timing.py`, `timing="real"`: the shared `ENVELOPE`, not measured for
xAI): the call or the first audio a while after the trigger, `response.output_audio.delta` in
bursts slower than real time, `response.output_audio.done` right after the last one and
`response.done` the plan's lag later; a `no_output` reply sends no response at all.

Duplex cues (user speech over a reply, `runners/fakes/duplex.py`: the profile's `duplex` behaviour):
it stops with `input_audio_buffer.speech_started`, the response ending `cancelled`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Sequence
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import ScriptedReply, ToolCallSpec
from runners.fakes.reply_session import SocketSession
from runners.fakes.server import WebSocketFake, spawn
from runners.fakes.speech import chunks, synthesize
from runners.fakes.wire import b64, spread_words, tool_output
from runners.fakes.timing import ENVELOPE, ReplyPlan, paced
from runners.fakes.usage import realtime_usage

PATH = "/v1/realtime"


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


class _Session(SocketSession):
    def __init__(self, fake: XaiRealtimeFake, rec: ConnectionRecord, ws: web.WebSocketResponse):
        super().__init__(fake, rec, ws)
        self.session: dict[str, Any] = {}
        self.ready = False
        self.dropped_before_ready = 0  # bytes of audio appended before session.updated
        self.endpointer: Endpointer | None = None
        self.open_calls: dict[str, str] = {}  # call_id -> tool name, calls the model is waiting on
        self.known_calls: dict[str, str] = {}  # call_id -> tool name, every call in the conversation

    async def send(self, evt: dict[str, Any]) -> None:
        evt.setdefault("event_id", _id("event"))
        await self.sock.send_json(evt)

    async def run(self) -> None:
        await self.send({"type": "conversation.created", "conversation": {"id": _id("conv"), "object": "realtime.conversation"}})
        async for msg in self.sock.messages():
            if msg.type != WSMsgType.TEXT:
                break
            try:
                await self.handle(json.loads(msg.data))
            except Exception as e:  # malformed event: an error event, as the API sends, not a crash
                self.rec.errors.append(f"{type(e).__name__}: {e}")
                await self.send({"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_event", "message": str(e)}})
        self.close_floor()

    @property
    def in_rate(self) -> int:
        fmt = ((self.session.get("audio") or {}).get("input") or {}).get("format") or {}
        return int(fmt.get("rate") or 24000)

    @property
    def out_rate(self) -> int:
        fmt = ((self.session.get("audio") or {}).get("output") or {}).get("format") or {}
        return int(fmt.get("rate") or 24000)

    async def handle(self, evt: dict[str, Any]) -> None:
        kind = evt.get("type")
        if kind == "input_audio_buffer.append":
            pcm = base64.b64decode(evt.get("audio", ""))
            if not self.ready:
                self.dropped_before_ready += len(pcm)
                return
            self.rec.heard(pcm, self.in_rate)
            self.rec.audio_in_chunks += 1
            if self.session.get("turn_detection") and self.endpointer:
                edge = self.endpointer.feed(pcm)
                if self.floor.speech(edge):
                    return  # user speech over the reply (a duplex cue): the floor meets it
                if edge == "started":
                    await self.send({"type": "input_audio_buffer.speech_started", "item_id": _id("item")})
                elif edge == "stopped":
                    item_id = _id("item")
                    self.rec.user_turns += 1
                    await self.send({"type": "input_audio_buffer.speech_stopped", "item_id": item_id})
                    await self.send({"type": "input_audio_buffer.committed", "item_id": item_id})
                    self.mark("user_end")
                    self.respond()
            return
        self.rec.messages.append(evt)
        if kind == "session.update":
            self.session.update(evt.get("session") or {})
            self.rec.setup = dict(self.session)
            self.rec.system_instruction = self.session.get("instructions")
            self.rec.tools = list(self.session.get("tools") or [])
            td = self.session.get("turn_detection") or {}
            silence = int(td.get("silence_duration_ms") or self.script.silence_ms)
            self.endpointer = Endpointer(self.in_rate, silence, self.script.speech_threshold_dbfs)
            self.ready = True
            await self.send({"type": "session.updated", "session": self.session})
        elif kind == "conversation.item.create":
            item = evt.get("item") or {}
            item.setdefault("id", _id("item"))
            if not self._accept_item(item):
                return
            await self.send({"type": "conversation.item.added", "item": item})
        elif kind == "input_audio_buffer.commit":
            self.rec.user_turns += 1
            self.mark("user_end")
            await self.send({"type": "input_audio_buffer.committed", "item_id": _id("item")})
        elif kind == "response.create":
            self.respond()

    def _accept_item(self, item: dict[str, Any]) -> bool:
        """Record a client-created item; False (and an error event queued) when the API would refuse it."""
        kind = item.get("type")
        if kind == "function_call_output":
            call_id = item.get("call_id")
            result = tool_output(item.get("output"))
            if call_id in self.open_calls:  # the answer to a call the model is waiting on
                self.rec.tool_results.append({"call_id": call_id, "name": self.open_calls.pop(call_id), "result": result})
                return True
            if call_id not in self.known_calls:
                self._refuse(f"function_call_output for unknown call_id {call_id!r}")
                return False
            self.rec.history.append({"role": "function_call_output", "call_id": call_id, "output": result})
        elif kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if not call_id or not name:
                self._refuse("function_call item needs call_id and name")
                return False
            try:
                args = json.loads(item.get("arguments") or "{}")
            except json.JSONDecodeError:
                self._refuse(f"function_call {call_id!r}: arguments are not JSON")
                return False
            self.known_calls[call_id] = name
            self.rec.history.append({"role": "function_call", "call_id": call_id, "name": name, "args": args})
        elif kind == "message":
            text = "".join(c.get("text") or c.get("transcript") or "" for c in item.get("content") or [])
            self.rec.history.append({"role": item.get("role"), "text": text})
        return True

    def _refuse(self, message: str) -> None:
        self.rec.errors.append(message)
        spawn(self.tasks, self.send({"type": "error", "error": {"type": "invalid_request_error", "code": "invalid_value", "message": message}}))

    def _response(self, rid: str, status: str, said: str = "", spoken_ms: float = 0.0,
                  calls: Sequence[ToolCallSpec] = ()) -> dict[str, Any]:
        """A response object; a completed one with its usage (`fakes/usage.py`: the conversation so far in,
        what it said, spoke and called out)."""
        r: dict[str, Any] = {"id": rid, "object": "realtime.response", "status": status, "output": []}
        if status == "completed":
            context = [self.rec.system_instruction or "", *(str(h.get("text") or "") for h in self.rec.history)]
            r["usage"] = realtime_usage(context, self.rec.audio_in_ms, said, spoken_ms, calls)
        return r

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): xAI's server VAD says so, the reply ends cancelled."""
        self.mark("barge_in")
        await self.send({"type": "input_audio_buffer.speech_started", "item_id": _id("item")})
        self.replying.cancel()

    async def answer_cue(self) -> None:
        """The cue's speech ended: it is a user turn, answered with the reply it cut (spoken again)."""
        item = _id("item")
        await self.send({"type": "input_audio_buffer.speech_stopped", "item_id": item})
        await self.send({"type": "input_audio_buffer.committed", "item_id": item})
        await super().answer_cue()

    async def _respond(self, anchor_ms: float, again: tuple[int, ScriptedReply] | None = None) -> None:
        """One response; `anchor_ms`: when its trigger (speech stop, response.create) came;
        `again`: speak that reply once more, without its calls (the answer to a duplex cue)."""
        async with self.lock:
            rid = _id("resp")
            n, reply, k = self.next_call(again)
            if (plan := self.begin(n, anchor_ms, may_stall=k == 0)) is None:
                return
            await self.send({"type": "response.created", "response": self._response(rid, "in_progress")})
            if k == 0:
                if reply.user_transcript:
                    await self.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": _id("item"), "transcript": reply.user_transcript})
            if k < len(reply.tool_calls):  # one call per response; the client answers it and asks for the next
                await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
                call = reply.tool_calls[k]
                call_id = call.call_id or _id("call")
                self.open_calls[call_id] = call.name
                self.known_calls[call_id] = call.name
                item = {"id": _id("item"), "object": "realtime.item", "type": "function_call", "status": "completed",
                        "call_id": call_id, "name": call.name, "arguments": ""}
                await self.send({"type": "conversation.item.added", "item": item})
                await self.send({"type": "response.function_call_arguments.done", "call_id": call_id, "name": call.name,
                                 "arguments": json.dumps(call.args), "response_id": rid, "item_id": item["id"]})
                self.after_tool = (reply, k + 1, n)
                self.mark("tool_call", n)
                await self.send({"type": "response.done", "response": self._response(rid, "completed", calls=[call])})
                return
            pcm = synthesize(reply.text, self.out_rate, self.script.voice) if reply.text and reply.audio else b""
            parts = chunks(pcm, self.out_rate, self.script.chunk_ms)
            deltas = spread_words(reply.text, len(parts)) if reply.text else [""]
            parts_ms = [len(p) / 2 / self.out_rate * 1000.0 for p in parts] or [0.0]
            item_id = _id("item")
            try:
                await self._stream(rid, item_id, plan, anchor_ms, parts, parts_ms, deltas)
            except asyncio.CancelledError:  # stopped for the user (a duplex cue): the response ends cancelled
                await self.send({"type": "response.done", "response": self._response(rid, "cancelled")})
                raise
            last_ms = self.now
            if parts:
                await self.send({"type": "response.output_audio.done", "response_id": rid, "item_id": item_id})
            await self.send({"type": "response.output_audio_transcript.done", "response_id": rid, "item_id": item_id, "transcript": reply.text})
            await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
            self.mark("terminal", n)
            await self.send({"type": "response.done", "response": self._response(rid, "completed", reply.text, sum(len(p) for p in parts) / 2 / self.out_rate * 1000.0)})
            if reply.then:
                code = 1000 if reply.then == "go_away" else reply.close_code
                self.rec.closed = f"server:{code}"
                self.sock.close_soon(code, b"session ended")

    async def _stream(self, rid: str, item_id: str, plan: ReplyPlan, anchor_ms: float, parts: list[bytes],
                      parts_ms: list[float], deltas: list[str]) -> None:
        """A reply's audio and transcript deltas, on its plan's schedule."""
        n = plan.reply
        async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
            if i == 0:
                await self.send({"type": "conversation.item.added", "item": {"id": item_id, "object": "realtime.item", "type": "message", "role": "assistant", "content": []}})
            if deltas[i]:
                await self.send({"type": "response.output_audio_transcript.delta", "response_id": rid, "item_id": item_id, "delta": deltas[i]})
            if i < len(parts):
                self.mark("audio", n, parts_ms[i])
                self.floor.sent(parts_ms[i])
                await self.send({"type": "response.output_audio.delta", "response_id": rid, "item_id": item_id,
                                 "output_index": 0, "content_index": 0, "delta": b64(parts[i])})


class XaiRealtimeFake(WebSocketFake):
    PATH = PATH
    REAL_TIMING = ENVELOPE
    session = _Session
