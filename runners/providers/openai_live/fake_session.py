"""The model of the local OpenAI Live API (`fake.py`): one session, driven by the script. It hears
the continuous audio with its own endpointer (`endpointer.py`) and transcribes what it hears as
fragments while the user speaks; it answers when it chooses: the plan's delay after the user's
speech ended, or — quirk `early_start`, with the benchmark's WAVs to recognise the turn
(`hearing.py`) — a little before the user has finished. A turn with calls is delegated:
Responses delegation asks the local Responses fake (`responses_fake.py`) as OpenAI's servers ask
the hosted model, its events wrapped for the client, the client's outputs carried to a
follow-up; client delegation waits for the client's backend to append its answer as commentary.
Either way the model then says the backend's answer. User speech over its reply is met by the
profile's `duplex` behaviour (`duplex.py`); it yields by going quiet (the Live API has no barge-in
event). What the API refuses of the client is `fake_wire.py`'s."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.endpointer import Endpointer
from runners.fakes.hearing import Hearing
from runners.fakes.record import ConnectionRecord
from runners.fakes.reply_session import Again, SocketSession
from runners.fakes.script import ScriptedReply
from runners.fakes.server import WebSocketFake, spawn
from runners.fakes.timing import ReplyPlan
from runners.fakes.wire import tool_output
from runners.providers.openai_live.live_stream import FRAME_MS, LiveStream
from runners.providers.openai_live.fake_wire import (
    MAX_APPEND_TOKENS,
    REFUSED,
    SESSION_KEYS,
    new_id,
    session_resource,
    startup_problem,
    tokens,
)

EARLY_START = "early_start"  # quirk: the model starts answering before the user has finished
FILLER = "filler"  # quirk: it says a few words while its backend works
FILLER_TEXT = "One moment, let me check."
WORDS_PER_S = 2.6  # how fast it transcribes what it hears (150 words a minute)


@dataclass
class Utterance:
    """User speech being heard: the words it is transcribed as, and what the model does about it."""

    start_ms: float
    words: list[str]
    plan: ReplyPlan
    said: int = 0  # words transcribed so far
    last_emit_ms: float = 0.0
    pcm: bytearray = field(default_factory=bytearray)  # its first audio, to recognise the turn by
    tried: int = 0  # times it tried to know the turn by its audio
    end_ms: float | None = None  # where it knows the user's speech ends (its clock), once it knows the turn
    start_heard_ms: float = 0.0  # where it began in the audio heard; and its end: a pause is told by these, not the clock
    end_heard_ms: float | None = None  # (the audio's delivery may lag the clock by a varying amount on a loaded machine)
    answered: bool = False  # the model has begun its answer (early, before the speech ended)


class LiveServer(WebSocketFake):
    """What a Live session reads of its server beyond any fake's (`fake.OpenAILiveFake` is one): the
    benchmark's WAVs it knows a turn by, and the backend its delegations ask."""

    hearing: Hearing | None = None

    async def ask_backend(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The Responses API's events for one delegated request."""
        raise NotImplementedError


class LiveSession(SocketSession):
    """One Live API session: the client's events, what the model hears and says, and its delegations."""

    FLUSHES = False  # no barge-in signal: it goes quiet, and what was sent plays out
    fake: LiveServer

    def __init__(self, fake: LiveServer, rec: ConnectionRecord, ws: web.WebSocketResponse) -> None:
        super().__init__(fake, rec, ws)
        self.started = False
        self.config: dict[str, Any] = {}
        self.rate = 24000
        self.endpointer: Endpointer | None = None
        self.stream: LiveStream | None = None
        self.utterance: Utterance | None = None
        self.conversation: list[dict[str, str]] = []  # what was said, as the backend is given it
        self.commentary: dict[str | None, asyncio.Future[str]] = {}  # a client delegation's spoken answer
        self.pending: tuple[str, dict[str, str], list[dict[str, Any]], asyncio.Future[list[dict[str, Any]]]] | None = None
        self.opened = False  # the opening instruction (a greeting) was spoken
        # speech while its reply is under way, silent or not (its backend at work), is the reply's cue
        self.floor.busy = lambda: self.replying.task is not None and not self.replying.task.done()

    @property
    def target(self) -> str:
        return str((self.config.get("delegation") or {}).get("type") or "client")

    async def send(self, evt: dict[str, Any]) -> None:
        evt.setdefault("event_id", new_id("event"))
        await self.sock.send_json(evt)

    async def refuse(self, code: str, message: str, client_event_id: str | None = None, param: str | None = None) -> None:
        self.rec.errors.append(f"{code}: {message}")
        err = {"type": "invalid_request_error", "code": code, "message": message, "param": param,
               "client_event_id": client_event_id}
        await self.send({"type": "error", "error": {k: v for k, v in err.items() if v is not None}})

    async def run(self) -> None:
        try:
            async for msg in self.sock.messages():
                if msg.type != WSMsgType.TEXT:
                    break
                try:
                    evt = json.loads(msg.data)
                except ValueError as e:
                    await self.refuse("invalid_json", f"not JSON: {e}")
                    continue
                await self.handle(evt)
        finally:
            if self.stream is not None:
                self.stream.stop()
            self.close_floor()
            for f in self.commentary.values():
                f.cancel()

    # -- client events

    async def handle(self, evt: dict[str, Any]) -> None:
        kind = str(evt.get("type") or "")
        eid = evt.get("event_id")
        if kind == "session.input_audio.append":
            await self.on_audio(evt, eid)
            return
        self.rec.messages.append(evt)
        if kind == "session.start":
            await self.on_start(evt, eid)
        elif not self.started:
            await self.refuse("session_not_started", f"{kind} before session.start", eid)
        elif kind == "session.update":
            await self.on_update(evt, eid)
        elif kind in ("session.instructions.append", "session.thinking.append", "session.commentary.append"):
            await self.on_append(kind, evt, eid)
        elif kind in ("response.item.create", "response.create"):
            await self.on_response_event(kind, evt, eid)
        elif kind == "session.close":
            await self.on_close()
        elif kind.startswith(REFUSED):
            await self.refuse("unknown_event", f"the Live API has no {kind} (no commit, no client-triggered answer)", eid)
        else:
            await self.refuse("unknown_event", f"unknown event type {kind!r}", eid)

    async def on_start(self, evt: dict[str, Any], eid: str | None) -> None:
        if self.started:
            await self.refuse("session_already_started", "session.start is sent exactly once", eid)
            return
        session = evt.get("session") or {}
        unknown = sorted(set(session) - SESSION_KEYS)
        if unknown:
            await self.refuse("unknown_parameter", f"Unknown parameter: 'session.{unknown[0]}'.", eid, f"session.{unknown[0]}")
            self.sock.close_soon(1008, b"session startup failed")
            return
        problem = startup_problem(session)
        if problem:
            await self.refuse("invalid_value", problem, eid)
            self.sock.close_soon(1008, b"session startup failed")
            return
        self.config = session
        fmt = (session.get("audio") or {}).get("format") or {}
        self.rate = int(fmt.get("rate") or 24000)
        self.rec.setup = dict(session)
        self.rec.system_instruction = session.get("instructions")
        responses = (session.get("delegation") or {}).get("responses") or {}
        self.rec.tools = list(responses.get("tools") or [])
        self.rec.history = [{"role": i.get("role"), "text": "".join(p.get("text", "") for p in i.get("content") or [])}
                            for i in session.get("input") or []]
        self.conversation = [h for h in self.rec.history if h["role"] in ("user", "assistant")]
        self.endpointer = Endpointer(self.rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
        self.stream = LiveStream(self.send, self.fake.clock, rate=self.rate, voice=self.script.voice, on_speech=self.floor.sent)
        self.started = True
        await self.send({"type": "session.started", "client_event_id": eid, "session": self.resource("active")})
        self.stream.start()
        self.tasks.add(asyncio.get_running_loop().create_task(self.usage_reports()))

    def resource(self, status: str) -> dict[str, Any]:
        return session_resource(self.rec.index, self.config, self.rate, status)

    async def on_update(self, evt: dict[str, Any], eid: str | None) -> None:
        session = evt.get("session") or {}
        delegation = session.get("delegation")
        if set(session) - {"delegation"} or not isinstance(delegation, dict):
            await self.refuse("invalid_value", "session.update takes only delegation settings", eid)
        elif delegation.get("type") != self.target:
            await self.refuse("invalid_value", f"the session's delegation mode is {self.target}; it cannot change", eid)
        else:
            merged = dict(self.config.get("delegation") or {})
            if "responses" in delegation:
                merged["responses"] = {**(merged.get("responses") or {}), **delegation["responses"]}
                self.rec.tools = list(merged["responses"].get("tools") or self.rec.tools)
            self.config["delegation"] = merged
            await self.send({"type": "session.updated", "client_event_id": eid, "session": self.resource("active")})

    async def on_append(self, kind: str, evt: dict[str, Any], eid: str | None) -> None:
        if "delegation_id" not in evt:
            await self.refuse("missing_required_parameter", f"{kind} needs delegation_id (null for the session)", eid)
            return
        content, did = str(evt.get("content") or ""), evt.get("delegation_id")
        if tokens(content) > MAX_APPEND_TOKENS:
            await self.refuse("string_above_max_length", f"{kind}: content over {MAX_APPEND_TOKENS} tokens", eid)
            return
        at = self.stream.session_ms() if self.stream else 0
        await self.send({"type": kind.replace(".append", ".appended"), "client_event_id": eid, "start_ms": at, "end_ms": at})
        self.mark(kind.split(".")[1])
        if kind != "session.commentary.append":
            return
        if did is None and not self.opened:  # the opening instruction: the model opens the conversation
            self.opened = True
            self.respond()
        elif did in self.commentary and not self.commentary[did].done():
            self.commentary[did].set_result(content)  # a client delegation's answer, for the model to say
        elif self.stream is not None:
            self.stream.say(content)  # anything else it is asked to say, it says

    async def on_response_event(self, kind: str, evt: dict[str, Any], eid: str | None) -> None:
        if self.target != "responses":
            await self.refuse("invalid_request", f"{kind} is for Responses delegation only (this session's is client)", eid)
            return
        if self.pending is None:
            await self.refuse("invalid_request", f"{kind}: no delegated response is waiting for function call outputs", eid)
            return
        rid, calls, outputs, fut = self.pending
        if kind == "response.item.create":
            item = evt.get("item") or {}
            cid = item.get("call_id")
            if item.get("type") != "function_call_output" or cid not in calls or any(o["call_id"] == cid for o in outputs):
                await self.refuse("invalid_value", f"response.item.create: no open function call {cid!r}", eid)
                return
            result = tool_output(item.get("output"))
            outputs.append({"type": "function_call_output", "call_id": cid, "output": item.get("output")})
            self.answered({"call_id": cid, "name": calls[cid], "result": result})
            self.mark("tool_result")
            return
        missing = sorted(set(calls) - {o["call_id"] for o in outputs})
        if missing:
            await self.refuse("function_call_outputs_required", f"outputs still required for {', '.join(missing)}", eid)
            return
        self.pending = None
        fut.set_result(outputs)

    async def on_close(self) -> None:
        if self.stream is not None:
            self.stream.stop()
        await self.send({"type": "session.closed", "reason": "client_requested", "session": self.resource("closed"),
                         "usage": {"seconds": self.stream.session_ms() / 1000.0 if self.stream else 0.0}})
        self.rec.closed = "server:1000 (session.closed)"
        self.sock.close_soon(1000, b"session closed")

    async def usage_reports(self) -> None:
        while self.stream is not None:
            await self.fake.clock.sleep(5000.0)
            await self.send({"type": "session.usage.updated", "usage": {"seconds": self.stream.session_ms() / 1000.0}})

    # -- what it hears

    async def on_audio(self, evt: dict[str, Any], eid: str | None) -> None:
        if not self.started:
            await self.refuse("session_not_started", "audio before session.started", eid)
            return
        try:
            pcm = base64.b64decode(evt.get("audio") or "", validate=True)
        except ValueError:
            await self.refuse("invalid_value", "audio is not base64", eid)
            return
        if len(pcm) % 2:
            await self.refuse("invalid_value", "audio is not whole PCM16 samples", eid)
            return
        self.rec.heard(pcm, self.rate)
        self.rec.audio_in_chunks += 1
        assert self.endpointer is not None
        edge = self.endpointer.feed(pcm)
        if self.floor.speech(edge):
            return  # user speech over its reply (a duplex cue): the floor meets it
        if edge == "started" and self.utterance is None:
            self.heard_start()  # (else the user goes on after a pause: the same utterance)
        u = self.utterance
        if u is None:
            return
        if len(u.pcm) < self.rate:  # its first half second, to know the turn by
            u.pcm.extend(pcm)
            self.recognise(u)
        if edge != "stopped":
            await self.transcribe(u, final=False)
        elif u.end_heard_ms is not None and self.rec.audio_in_ms < u.end_heard_ms:
            self.mark("pause")  # it knows the turn: the user has not finished, this is a pause
        else:
            await self.transcribe(u, final=True)
            self.utterance = None
            self.mark("user_end")
            if not u.answered:
                u.answered = True
                self.respond()

    def heard_start(self) -> None:
        plan = self.fake.upcoming_plan()  # the reply this utterance will get
        n = self.script.upcoming(self.fake.reply_count, sum(c.user_turns for c in self.fake.connections))
        text = self.script.reply(n).user_transcript or ""
        self.rec.user_turns += 1
        self.utterance = Utterance(start_ms=self.now, words=text.split(), plan=plan, last_emit_ms=self.now,
                                    start_heard_ms=self.rec.audio_in_ms)
        self.conversation.append({"role": "user", "text": text})
        self.mark("user_start")

    def recognise(self, u: Utterance) -> None:
        """Know the turn by its audio (`hearing.py`: twice at most, 0.2 and 0.48 s in), and so where
        its speech ends: a pause before that is no end of the turn (a duplex model understands the
        user has not finished), and quirk `early_start` answers a little before it."""
        hearing: Hearing | None = self.fake.hearing
        tries = (self.rate // 5 * 2, self.rate * 24 // 25)  # bytes of PCM16: 200 ms, 480 ms
        if u.end_ms is not None or hearing is None or self.rate != 24000 or len(u.pcm) < tries[0]:
            return
        if u.tried >= len(tries) or len(u.pcm) < tries[u.tried]:
            return
        u.tried += 1
        found = hearing.locate(bytes(u.pcm))
        if found is None:
            return
        turn, offset = found
        u.end_ms = u.start_ms - offset + hearing.speech_end_ms(turn)
        u.end_heard_ms = u.start_heard_ms - offset + hearing.speech_end_ms(turn)
        if u.plan.has(EARLY_START) and not u.answered:
            u.answered = True
            lead = u.plan.rng(EARLY_START).uniform(400.0, 1000.0)
            self.mark(EARLY_START, u.plan.reply)
            spawn(self.tasks, self._early(u.end_ms - lead))

    async def _early(self, at_ms: float) -> None:
        await self.fake.clock.until(at_ms)
        self.respond(early=True)

    async def transcribe(self, u: Utterance, final: bool) -> None:
        """Fragments of what it hears, on frame boundaries as the speech goes on; the rest at its end."""
        if self.stream is None or (not final and self.now - u.last_emit_ms < FRAME_MS):
            return
        due = len(u.words) if final else min(len(u.words), int((self.now - u.start_ms) / 1000.0 * WORDS_PER_S))
        if due <= u.said:
            return
        words = " ".join(u.words[u.said:due])
        delta = words if u.said == 0 else " " + words
        end = self.stream.session_ms()
        await self.send({"type": "session.input_transcript.delta", "delta": delta, "start_ms": int(u.last_emit_ms - self.stream.t0),
                         "end_ms": end})
        u.said, u.last_emit_ms = due, self.now

    # -- what it says

    def respond(self, again: Again | None = None, early: bool = False) -> None:
        self.replying.start(self._respond(self.now, again, early))

    async def _respond(self, anchor_ms: float, again: Again | None = None, early: bool = False) -> None:
        async with self.lock:
            if (opened := self.open_reply(anchor_ms, again)) is not None:
                n, reply, plan = opened
                await self.reply(n, reply, plan, anchor_ms, early)

    async def reply(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float, early: bool = False) -> None:
        assert self.stream is not None
        if not early:
            await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
        text = reply.text
        if reply.tool_calls:
            text = await self.delegate(n, plan)
        self.conversation.append({"role": "assistant", "text": text})
        await self.stream.say(text)
        self.mark("terminal", n)

    async def barge_in(self) -> None:
        """It yields: it stops talking (no event: the stream goes quiet) and drops the rest of the reply."""
        self.mark("barge_in")
        if self.stream is not None:
            self.stream.hush()
        self.replying.cancel()

    # -- delegation

    async def delegate(self, n: int, plan: ReplyPlan) -> str:
        """Hand the turn's work to the backend; what it answers is what the model then says."""
        assert self.stream is not None
        did = new_id("del")
        if self.utterance is not None:  # an early start: it delegates the request it understood, all of it
            await self.transcribe(self.utterance, final=True)
        if plan.has(FILLER):
            self.stream.say(FILLER_TEXT)
        delegation: dict[str, Any] = {"id": did, "type": "delegation", "target": self.target}
        if self.target == "client":
            self.commentary[did] = asyncio.get_running_loop().create_future()
        await self.send({"type": "session.delegation.created", "offset_ms": self.stream.session_ms(), "delegation": delegation})
        self.mark("delegation", n)
        if self.target == "client":
            return await self.commentary[did]
        return await self.run_responses(did, plan)

    async def run_responses(self, did: str, plan: ReplyPlan) -> str:
        """OpenAI's part: ask the hosted backend (the local Responses fake), wrap its events for the
        client, carry the client's function outputs to a follow-up, until it answers in words."""
        cfg = dict((self.config.get("delegation") or {}).get("responses") or {})
        items = [{"type": "message", "role": h["role"],
                  "content": [{"type": "input_text" if h["role"] == "user" else "output_text", "text": h["text"]}]}
                 for h in self.conversation if h["text"]]
        body: dict[str, Any] = {**cfg, "input": items, "stream": True}
        think = plan.rng("backend").uniform(300.0, 1500.0) if not self.fake.timing.instant else 0.0
        while True:
            await self.fake.clock.sleep(think)
            events = await self.fake.ask_backend(body)
            rid, calls, text = "", {}, ""
            for ev in events:
                kind = ev.get("type")
                if kind in ("response.created", "response.in_progress", "response.completed"):
                    rid = ev["response"]["id"]
                    ev = {**ev, "response": {**ev["response"], "output": []}}  # lifecycle snapshots are reduced
                elif kind == "response.output_item.done" and ev["item"].get("type") == "function_call":
                    calls[ev["item"]["call_id"]] = ev["item"]["name"]
                    self.mark("tool_call", plan.reply)
                elif kind == "response.output_text.done":
                    text = ev.get("text", "")
                elif kind == "error":
                    self.rec.errors.append(f"backend: {ev}")
                if kind == "response.completed" and calls:  # its calls are open before the client hears it ended
                    self.pending = (rid, calls, [], asyncio.get_running_loop().create_future())
                await self.send({"type": "response.event", "delegation_id": did, "event": ev})
            if not calls:
                return text
            assert self.pending is not None
            outputs = await self.pending[3]
            body = {**cfg, "previous_response_id": rid, "input": outputs, "stream": True}
