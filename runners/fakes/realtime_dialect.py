"""A session of an OpenAI-Realtime-shaped protocol as a fake serves it: what Azure Voice Live and
Inworld Realtime share (each provider's `fake.py` names its events and checks its handshake and
session; the simulator is OpenAI's own, xAI's is `providers/grok/fake.py`).

The shared shape: the server opens with `session.created`; the client's `session.update` is
checked (`session_problem`: the real service's refusal as an `error` event, the session left as
it was) and answered with `session.updated`; user audio arrives as `input_audio_buffer.append`;
with server turn detection the fake's energy endpointer sends `speech_started` / `speech_stopped`,
commits and answers on its own, else the client's `commit` + `response.create` do. A response
makes one call at a time (`response.output_item.added` with the `function_call` item, then
`response.function_call_arguments.done`, then `response.done`); the client answers it with a
`function_call_output` item and asks for the next response; after the calls it speaks: an
assistant item, transcript and audio deltas on the fake's timing (`runners/fakes/timing.py`), the
audio's and transcript's `done`, and `response.done` the plan's lag later, with the usage its
provider reports (`usage`: a provider's fake counts it as its service does). A `response.create`
while a response runs is refused (`conversation_already_has_active_response`), as the APIs do.

Items the client creates are checked as the APIs do (a `function_call_output` must answer a call
the conversation knows) and replayed ones recorded in order in `history`: messages as
`{role, text}`, calls as `{role: "function_call", call_id, name, args}`, outputs that answer no
live call as `{role: "function_call_output", call_id, output}`.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import uuid
from collections.abc import Sequence
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.reply_session import Again, SocketSession
from runners.fakes.script import ScriptedReply, ToolCallSpec
from runners.fakes.server import FakeServer
from runners.fakes.speech import chunks, synthesize
from runners.fakes.timing import ReplyPlan, paced
from runners.fakes.wire import b64, spread_words, tool_output


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def merge(session: dict[str, Any], update: dict[str, Any]) -> None:
    """A `session.update` as these APIs apply it: a field it leaves out keeps its value (inside nested
    objects too), one it sends replaces it (null included: `turn_detection: null` turns VAD off)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(session.get(key), dict):
            merge(session[key], value)
        else:
            session[key] = value


class DialectSession(SocketSession):
    """One connection of an OpenAI-Realtime-shaped protocol; a provider's fake subclasses it with
    its event names and its checks."""

    #: the event names that differ between the dialects (OpenAI's GA names by default)
    ITEM_ADDED = "conversation.item.added"
    AUDIO_DELTA = "response.output_audio.delta"
    AUDIO_DONE = "response.output_audio.done"
    TRANSCRIPT_DELTA = "response.output_audio_transcript.delta"
    TRANSCRIPT_DONE = "response.output_audio_transcript.done"
    #: `response.function_call_arguments.done` carries the tool's name (Inworld's may leave it out)
    ARGS_DONE_NAME = True
    #: what `session.created` says of the session before the client's update
    DEFAULT_SESSION: dict[str, Any] = {}

    def __init__(self, fake: FakeServer, rec: ConnectionRecord, ws: web.WebSocketResponse):
        super().__init__(fake, rec, ws)
        self.session: dict[str, Any] = copy.deepcopy(self.DEFAULT_SESSION)
        self.updated = False  # a session.update was taken
        self.endpointer: Endpointer | None = None
        self.open_calls: dict[str, str] = {}  # call_id -> tool name, calls the model is waiting on
        self.known_calls: dict[str, str] = {}  # call_id -> tool name, every call in the conversation
        self.active: str | None = None  # the response under way (its id)
        self.committed: list[str] = []  # user audio items committed, in order
        self.said: list[str] = []  # what was said since the session opened (user transcripts, replies), as text

    # -- what a provider's fake says

    def session_problem(self, session: dict[str, Any]) -> str | None:
        """Why the real service refuses this `session.update` payload (one line); None: it takes it."""
        return None

    @property
    def in_rate(self) -> int:
        return 24000

    @property
    def out_rate(self) -> int:
        return 24000

    @property
    def turn_detection(self) -> dict[str, Any] | None:
        """The session's server turn detection; None: the client commits."""
        td = self.session.get("turn_detection")
        return td if isinstance(td, dict) else None

    def heard_chunk(self, pcm: bytes) -> None:
        """One `input_audio_buffer.append` arrived (what a provider checks of its chunks)."""

    async def on_commit(self, item_id: str) -> None:
        """A user audio item was committed (the provider's events about it)."""
        await self.send({"type": "input_audio_buffer.committed", "item_id": item_id,
                         "previous_item_id": self.committed[-2] if len(self.committed) > 1 else None})

    def response_create_problem(self, evt: dict[str, Any]) -> str | None:
        """Why the service refuses this `response.create` (besides one already running); None: it takes it."""
        return None

    def accept_tool_output(self, call_id: str) -> str | None:
        """Why a `function_call_output` for a live call is refused; None: it is the call's answer."""
        return None

    # -- the wire

    async def send(self, evt: dict[str, Any]) -> None:
        evt.setdefault("event_id", new_id("event"))
        await self.sock.send_json(evt)

    async def error(self, message: str, code: str = "invalid_value", event_id: str | None = None) -> None:
        """The API's error event (the session goes on), recorded on the connection."""
        self.rec.errors.append(message)
        await self.send({"type": "error", "error": {"type": "invalid_request_error", "code": code, "message": message,
                                                    "event_id": event_id}})

    async def run(self) -> None:
        await self.send({"type": "session.created", "session": {"id": new_id("sess"), **self.session}})
        async for msg in self.sock.messages():
            if msg.type != WSMsgType.TEXT:
                break
            try:
                await self.handle(json.loads(msg.data))
            except Exception as e:  # malformed event: an error event, as the API sends, not a crash
                await self.error(f"{type(e).__name__}: {e}", "invalid_event")
        self.close_floor()

    async def handle(self, evt: dict[str, Any]) -> None:
        kind = evt.get("type")
        if kind == "input_audio_buffer.append":
            await self.on_audio(base64.b64decode(evt.get("audio", "")))
            return
        self.rec.messages.append(evt)
        if kind == "session.update":
            await self.on_session_update(evt)
        elif kind == "conversation.item.create":
            item = dict(evt.get("item") or {})
            item["id"] = item.get("id") or new_id("item")
            if await self.accept_item(item):
                await self.send({"type": self.ITEM_ADDED, "previous_item_id": evt.get("previous_item_id"), "item": item})
        elif kind == "input_audio_buffer.commit":
            await self.user_turn_end()
        elif kind == "input_audio_buffer.clear":
            await self.send({"type": "input_audio_buffer.cleared"})
        elif kind == "response.create":
            if self.active is not None:
                await self.error("Conversation already has an active response", "conversation_already_has_active_response",
                                 evt.get("event_id"))
            elif (problem := self.response_create_problem(evt)) is not None:
                await self.error(problem, "invalid_value", evt.get("event_id"))
            else:
                self.respond()
        elif kind == "response.cancel":
            if self.active is None:
                await self.error("Cancellation failed: no active response found", "response_cancel_not_active")
            else:
                self.replying.cancel()

    async def on_session_update(self, evt: dict[str, Any]) -> None:
        session = evt.get("session") or {}
        if (problem := self.session_problem(session)) is not None:
            await self.error(problem, "invalid_value", evt.get("event_id"))
            return
        merge(self.session, session)
        self.updated = True
        self.rec.setup = dict(self.session)
        self.rec.system_instruction = self.session.get("instructions")
        self.rec.tools = list(self.session.get("tools") or [])
        td = self.turn_detection or {}
        silence = int(td.get("silence_duration_ms") or self.script.silence_ms)
        self.endpointer = Endpointer(self.in_rate, silence, self.script.speech_threshold_dbfs)
        await self.send({"type": "session.updated", "session": self.session})

    async def on_audio(self, pcm: bytes) -> None:
        self.rec.heard(pcm, self.in_rate)
        self.rec.audio_in_chunks += 1
        self.heard_chunk(pcm)
        if self.turn_detection is None or self.endpointer is None:
            return
        edge = self.endpointer.feed(pcm)
        if self.floor.speech(edge):
            return  # user speech over the reply (a duplex cue): the floor meets it
        if edge == "started":
            await self.send({"type": "input_audio_buffer.speech_started", "item_id": new_id("item"),
                             "audio_start_ms": int(self.rec.audio_in_ms)})
        elif edge == "stopped":
            await self.send({"type": "input_audio_buffer.speech_stopped", "item_id": new_id("item"),
                             "audio_end_ms": int(self.rec.audio_in_ms)})
            await self.user_turn_end()
            if (self.turn_detection or {}).get("create_response", True) is not False:
                self.respond()

    async def user_turn_end(self) -> None:
        """The user's audio so far is one item (server VAD's end of speech, or the client's commit)."""
        item = new_id("item")
        self.committed.append(item)
        self.rec.user_turns += 1
        self.mark("user_end")
        await self.on_commit(item)

    async def accept_item(self, item: dict[str, Any]) -> bool:
        """Record a client-created item; False (and an error event sent) when the API would refuse it."""
        kind = item.get("type")
        if kind == "function_call_output":
            call_id = item.get("call_id")
            result = tool_output(item.get("output"))
            if call_id in self.open_calls:  # the answer to a call the model is waiting on
                if (problem := self.accept_tool_output(call_id)) is not None:
                    await self.error(problem)
                    return False
                self.rec.tool_results.append({"call_id": call_id, "name": self.open_calls.pop(call_id), "result": result})
                return True
            if call_id not in self.known_calls:
                await self.error(f"function_call_output for unknown call_id {call_id!r}")
                return False
            self.rec.history.append({"role": "function_call_output", "call_id": call_id, "output": result})
        elif kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if not call_id or not name:
                await self.error("function_call item needs call_id and name")
                return False
            try:
                args = json.loads(item.get("arguments") or "{}")
            except json.JSONDecodeError:
                await self.error(f"function_call {call_id!r}: arguments are not JSON")
                return False
            self.known_calls[call_id] = name
            self.rec.history.append({"role": "function_call", "call_id": call_id, "name": name, "args": args})
        elif kind == "message":
            text = "".join(c.get("text") or c.get("transcript") or "" for c in item.get("content") or [])
            self.rec.history.append({"role": item.get("role"), "text": text})
        else:
            await self.error(f"unknown item type {kind!r}")
            return False
        return True

    # -- a response

    def response_body(self, rid: str, status: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"id": rid, "object": "realtime.response", "status": status, "output": []}
        if usage is not None:
            body["usage"] = usage
        return body

    def usage(self, said: str, spoken_ms: float, calls: Sequence[ToolCallSpec] = ()) -> dict[str, Any] | None:
        """A completed response's `usage`, counted as the provider counts it (`runners/fakes/usage.py`);
        None: it reports none. `said`: its text, `spoken_ms`: its speech, `calls`: its function calls."""
        return None

    def context(self) -> list[str]:
        """The conversation so far as text: the instructions, the replayed items, what was said since."""
        return [self.rec.system_instruction or "", *(str(h.get("text") or "") for h in self.rec.history), *self.said]

    async def done(self, rid: str, status: str, usage: dict[str, Any] | None = None) -> None:
        """`response.done` with the response (and its usage, when it has one)."""
        await self.send({"type": "response.done", "response": self.response_body(rid, status, usage)})

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): server VAD says so, the response ends cancelled."""
        self.mark("barge_in")
        await self.send({"type": "input_audio_buffer.speech_started", "item_id": new_id("item")})
        self.replying.cancel()

    async def answer_cue(self) -> None:
        """The cue's speech ended: it is a user turn, answered with the reply it cut (spoken again)."""
        await self.send({"type": "input_audio_buffer.speech_stopped", "item_id": new_id("item")})
        await self.user_turn_end()
        await super().answer_cue()

    async def _respond(self, anchor_ms: float, again: Again | None = None) -> None:
        """One response; `anchor_ms`: when its trigger (speech end, response.create) came; `again`:
        speak that reply once more, without its calls (the answer to a duplex cue)."""
        async with self.lock:
            rid = new_id("resp")
            n, reply, k = self.next_call(again)
            if (plan := self.begin(n, anchor_ms, may_stall=k == 0)) is None:
                return
            self.active = rid
            try:
                await self.send({"type": "response.created", "response": self.response_body(rid, "in_progress")})
                if k == 0 and reply.user_transcript and self.committed:
                    self.said.append(reply.user_transcript)
                    await self.send({"type": "conversation.item.input_audio_transcription.completed",
                                     "item_id": self.committed[-1], "content_index": 0, "transcript": reply.user_transcript})
                if k < len(reply.tool_calls):
                    await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
                    await self.call(rid, reply.tool_calls[k])
                    self.after_tool = (reply, k + 1, n)
                    self.mark("tool_call", n)
                    await self.done(rid, "completed", self.usage("", 0.0, [reply.tool_calls[k]]))
                    return
                await self.speak(rid, n, reply, plan, anchor_ms)
            except asyncio.CancelledError:  # stopped for the user (a duplex cue): the response ends cancelled
                await self.done(rid, "cancelled")
                raise
            finally:
                self.active = None

    async def call(self, rid: str, spec: ToolCallSpec) -> None:
        """One function call: its item, then its arguments."""
        call_id = spec.call_id or new_id("call")
        self.open_calls[call_id] = spec.name
        self.known_calls[call_id] = spec.name
        item = {"id": new_id("item"), "object": "realtime.item", "type": "function_call", "status": "completed",
                "call_id": call_id, "name": spec.name, "arguments": ""}
        await self.send({"type": "response.output_item.added", "response_id": rid, "output_index": 0, "item": item})
        await self.send({"type": self.ITEM_ADDED, "item": item})
        done = {"type": "response.function_call_arguments.done", "response_id": rid, "item_id": item["id"],
                "output_index": 0, "call_id": call_id, "arguments": json.dumps(spec.args)}
        await self.send({**done, "name": spec.name} if self.ARGS_DONE_NAME else done)

    async def speak(self, rid: str, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        """The reply's speech: an assistant item, its deltas on the plan's schedule, the dones, `response.done`."""
        rate = self.out_rate
        pcm = synthesize(reply.text, rate, self.script.voice) if reply.text and reply.audio else b""
        parts = chunks(pcm, rate, self.script.chunk_ms)
        deltas = spread_words(reply.text, len(parts)) if reply.text else [""]
        parts_ms = [len(p) / 2 / rate * 1000.0 for p in parts] or [0.0]
        item_id = new_id("item")
        ids = {"response_id": rid, "item_id": item_id, "output_index": 0, "content_index": 0}
        async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
            if i == 0:
                item = {"id": item_id, "object": "realtime.item", "type": "message", "role": "assistant", "content": []}
                await self.send({"type": "response.output_item.added", "response_id": rid, "output_index": 0, "item": item})
                await self.send({"type": self.ITEM_ADDED, "item": item})
            if deltas[i]:
                await self.send({"type": self.TRANSCRIPT_DELTA, **ids, "delta": deltas[i]})
            if i < len(parts):
                self.mark("audio", n, parts_ms[i])
                self.floor.sent(parts_ms[i])
                await self.send({"type": self.AUDIO_DELTA, **ids, "delta": b64(parts[i])})
        last_ms = self.now
        if parts:
            await self.send({"type": self.AUDIO_DONE, **ids})
        await self.send({"type": self.TRANSCRIPT_DONE, **ids, "transcript": reply.text})
        await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
        self.mark("terminal", n)
        spoken_ms = sum(len(p) for p in parts) / 2 / rate * 1000.0
        await self.done(rid, "completed", self.usage(reply.text, spoken_ms, ()))
        self.said.append(reply.text)
        if reply.then:
            code = 1000 if reply.then == "go_away" else reply.close_code
            self.rec.closed = f"server:{code}"
            self.sock.close_soon(code, b"session ended")

