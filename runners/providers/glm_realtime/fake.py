"""A local GLM-Realtime (Zhipu) server for `runners.providers.glm_realtime.service.GLMRealtimeLLMService`.

Client events: `session.update` (instructions, tools, `turn_detection`, `beta_fields`),
`input_audio_buffer.append` (one base64 WAV file per request), `input_audio_buffer.commit`,
`conversation.item.create` (text messages and `function_call_output`), `response.create`,
`response.cancel`. Server events: `session.created`/`session.updated`, `heartbeat`,
`input_audio_buffer.committed`, `conversation.item.created`,
`conversation.item.input_audio_transcription.completed`, `response.created`,
`response.audio.delta` (PCM16 24 kHz), `response.audio_transcript.delta/.done`,
`response.function_call_arguments.done`, `response.done`, `error`.
A tool-calling reply spans two responses, as on the real API: the first ends after the
call; the client answers with `function_call_output` and a new `response.create`.

Timing (`runners/fakes/timing.py`, `timing="real"`: the shared `ENVELOPE`, not measured for
GLM): the call or the first `response.audio.delta` a while after `response.create`, audio in
bursts slower than real time, `response.audio_transcript.done` right after the last and
`response.done` the plan's lag later; a `no_output` reply sends no response at all.

Duplex cues (user speech over a reply, `runners/fakes/duplex.py`: the profile's `duplex` behaviour):
GLM has no barge-in event (the client cancels), so the fake hears the cue with its own endpointer
and stops sending (a reply the user may speak over is sent as it plays); the client's commit of
the cue is the cue's, answered (the reply again) or left with an empty response.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import uuid
import wave
from collections.abc import Sequence
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.duplex import CueHeard
from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import ScriptedReply, ToolCallSpec
from runners.fakes.reply_session import SocketSession
from runners.fakes.server import WebSocketFake
from runners.fakes.speech import chunks, synthesize
from runners.fakes.wire import b64, spread_words, tool_output
from runners.fakes.timing import ENVELOPE, ReplyPlan, paced
from runners.fakes.usage import realtime_usage

PATH = "/api/paas/v4/realtime"
OUTPUT_RATE = 24000
MAX_INSTRUCTIONS = 12_000
LEAD_MS = 40.0  # a reply the user may speak over is sent this far ahead of its playing (GLM cannot flush)


class _Session(SocketSession):
    FLUSHES = False  # GLM has no barge-in event: what the client holds plays out

    def __init__(self, fake: GLMRealtimeFake, rec: ConnectionRecord, ws: web.WebSocketResponse):
        super().__init__(fake, rec, ws)
        self.appended_since_commit = 0
        self.pending_calls: dict[str, str] = {}  # call_id -> tool name
        # duplex cues: GLM has no barge-in event (the client cancels), so the fake hears the user over
        # its reply with its own endpointer, stops sending, and the client's next commit is the cue's
        self.endpointer: Endpointer | None = None
        self.cue_commit: CueHeard | None = None  # a cue's turn the client committed: its response.create is the cue's

    async def send(self, evt: dict[str, Any]) -> None:
        evt.setdefault("event_id", f"event{uuid.uuid4().hex}")
        await self.sock.send_json(evt)

    async def error(self, code: str, message: str) -> None:
        self.rec.errors.append(f"{code}: {message}")
        await self.send({"type": "error", "error": {"type": "invalid_request_error", "code": code, "message": message}})

    async def run(self) -> None:
        await self.send({"type": "session.created", "session": {"id": f"sess_{uuid.uuid4().hex[:12]}"}})
        async for msg in self.sock.messages():
            if msg.type != WSMsgType.TEXT:
                break
            try:
                evt = json.loads(msg.data)
            except json.JSONDecodeError:
                await self.error("invalid_json", "message is not JSON")
                continue
            try:
                await self.handle(evt)
            except Exception as e:  # malformed event: an error event, as the API sends, not a crash
                await self.error("invalid_event", f"{type(e).__name__}: {e}")
        self.close_floor()

    async def handle(self, evt: dict[str, Any]) -> None:
        kind = evt.get("type")
        if kind == "input_audio_buffer.append":
            self.on_append(evt.get("audio", ""))
            return
        self.rec.messages.append(evt)
        if kind == "session.update":
            session = evt.get("session") or {}
            self.rec.setup = session
            instr = session.get("instructions")
            if instr and len(instr) > MAX_INSTRUCTIONS:
                await self.error("instructions_too_long", f"instructions exceed {MAX_INSTRUCTIONS} characters")
            self.rec.system_instruction = instr
            self.rec.tools = list(session.get("tools") or [])
            await self.send({"type": "session.updated", "session": session})
            await self.send({"type": "heartbeat"})
        elif kind == "input_audio_buffer.commit":
            if not self.appended_since_commit:
                await self.error("input_audio_buffer_commit_empty", "no audio appended before commit")
                return
            self.appended_since_commit = 0
            if self.floor.cue is not None:  # the client closed a duplex cue's turn: no turn of the script
                self.cue_commit = self.floor.cue
                self.floor.speech("stopped")
            else:
                self.rec.user_turns += 1
                self.mark("user_end")
            item_id = f"item{uuid.uuid4().hex}"
            await self.send({"type": "input_audio_buffer.committed", "item_id": item_id})
            await self.send(
                {"type": "conversation.item.created", "item": {"id": item_id, "object": "realtime.item", "type": "message",
                 "status": "completed", "role": "user", "content": [{"type": "input_audio", "transcript": None}]}}
            )
        elif kind == "conversation.item.create":
            item = evt.get("item") or {}
            if item.get("type") == "function_call_output":
                result = tool_output(item.get("output"))
                name = self.pending_calls.pop(str(item.get("call_id")), None)
                if name is None:
                    await self.error("unknown_call_id", f"no open function call {item.get('call_id')!r}")
                self.rec.tool_results.append({"call_id": item.get("call_id"), "name": name, "result": result})
            elif item.get("type") == "message":
                text = "".join(c.get("text", "") for c in item.get("content", []))
                if not text:
                    await self.error("empty_item", "conversation item has no text")
                    return
                self.rec.history.append({"role": item.get("role"), "text": text})
        elif kind == "response.create":
            cue, self.cue_commit = self.cue_commit, None
            if cue is None:
                self.respond()
            elif not cue.reacted:  # not heard as a turn: an empty answer
                rid = f"resp{uuid.uuid4().hex}"
                await self.send({"type": "response.created", "response": {"id": rid, "object": "realtime.response", "status": "in_progress"}})
                await self.done(rid)
            # (a cue reacted to is answered once the reply has stopped for it: `answer_cue`)

    def on_append(self, audio_b64: str) -> None:
        with wave.open(io.BytesIO(base64.b64decode(audio_b64)), "rb") as w:
            rate, pcm = w.getframerate(), w.readframes(w.getnframes())
        self.rec.heard(pcm, rate)
        self.rec.audio_in_chunks += 1
        self.rec.audio_chunk_ms.append(len(pcm) / 2 / rate * 1000)
        self.appended_since_commit += 1
        if self.floor.kinds or self.floor.cue is not None:  # a reply the user may speak over is playing
            self.endpointer = self.endpointer or Endpointer(rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
            edge = self.endpointer.feed(pcm)
            if edge == "started":
                self.floor.speech(edge)

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): nothing more is sent (GLM has no barge-in
        event: what the client holds plays out), and the response ends cancelled."""
        self.mark("barge_in")
        self.replying.cancel()

    async def _respond(self, anchor_ms: float, again: tuple[int, ScriptedReply] | None = None) -> None:
        """One response; `anchor_ms`: when the client's response.create came; `again`: that reply
        spoken once more, without its calls (the answer to a duplex cue)."""
        async with self.lock:
            rid = f"resp{uuid.uuid4().hex}"
            n, reply, k = self.next_call(again)
            if (plan := self.begin(n, anchor_ms, may_stall=k == 0)) is None:
                return
            await self.send({"type": "response.created", "response": {"id": rid, "object": "realtime.response", "status": "in_progress"}})
            if k == 0:
                if reply.user_transcript:
                    await self.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": "", "transcript": reply.user_transcript})
            if k < len(reply.tool_calls):  # one call per response; the client answers it and asks for the next
                await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
                call = reply.tool_calls[k]
                call_id = call.call_id or f"call_{uuid.uuid4().hex[:12]}"
                self.pending_calls[call_id] = call.name
                await self.send(
                    {"type": "response.function_call_arguments.done", "response_id": rid, "output_index": 0, "call_id": call_id,
                     "name": call.name, "arguments": json.dumps(call.args, ensure_ascii=False)}
                )
                self.after_tool = (reply, k + 1, n)
                self.mark("tool_call", n)
                await self.done(rid, calls=[call])
                return
            try:
                await self.speak(rid, n, reply, plan, anchor_ms)
            except asyncio.CancelledError:  # stopped for the user (a duplex cue)
                await self.send({"type": "response.done", "response": {"id": rid, "object": "realtime.response",
                                                                       "status": "cancelled"}})
                raise

    async def speak(self, rid: str, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        pcm = synthesize(reply.text, OUTPUT_RATE, self.script.voice) if reply.text and reply.audio else b""
        parts = chunks(pcm, OUTPUT_RATE, self.script.chunk_ms)
        deltas = spread_words(reply.text, len(parts)) if reply.text else [""]
        parts_ms = [len(p) / 2 / OUTPUT_RATE * 1000.0 for p in parts] or [0.0]
        live = bool(self.floor.kinds)  # the user may speak over it: sent as it plays (a stop then stops it)
        async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
            if live:
                await self.fake.clock.until(self.floor.until_ms - LEAD_MS)
            if deltas[i]:
                await self.send({"type": "response.audio_transcript.delta", "response_id": rid, "delta": deltas[i]})
            if i < len(parts):
                self.mark("audio", n, parts_ms[i])
                self.floor.sent(parts_ms[i])
                await self.send({"type": "response.audio.delta", "response_id": rid, "delta": b64(parts[i])})
        last_ms = self.now
        if reply.text:
            await self.send({"type": "response.audio_transcript.done", "response_id": rid, "transcript": reply.text})
        await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
        self.mark("terminal", n)
        await self.done(rid, reply.text, sum(len(p) for p in parts) / 2 / OUTPUT_RATE * 1000.0)
        if reply.then:
            # GLM has no goAway: every forced end is a close of the socket.
            code = 1000 if reply.then == "go_away" else reply.close_code
            self.rec.closed = f"server:{code}"
            self.sock.close_soon(code, b"session ended")

    async def done(self, rid: str, said: str = "", spoken_ms: float = 0.0, calls: Sequence[ToolCallSpec] = ()) -> None:
        """The response done, with its usage (`fakes/usage.py`: the conversation so far in, what it said, spoke and called out)."""
        context = [self.rec.system_instruction or "", *(str(h.get("text") or "") for h in self.rec.history)]
        usage = realtime_usage(context, self.rec.audio_in_ms, said, spoken_ms, calls)
        await self.send({"type": "response.done", "response": {"id": rid, "object": "realtime.response", "status": "completed",
                                                               "usage": usage}})


class GLMRealtimeFake(WebSocketFake):
    PATH = PATH
    REAL_TIMING = ENVELOPE
    session = _Session
