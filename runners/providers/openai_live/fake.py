"""A local OpenAI Live API server (full duplex, `gpt-live-1`) for `OpenAILiveLLMService`.

Wire (JSON over `wss://…/v1/live/sessions`, `Authorization: Bearer`), as Pipecat 1.14's
service and event models (`pipecat/services/openai/live/`) speak it:
- client: `session.start` (first, once: `model`, `instructions`, `audio`, `delegation`
  {type client | responses, responses {model, instructions, tools, tool_choice …}}, `input` ≤ 128
  text items, `store`), `session.input_audio.append` (PCM16, 24 kHz unless `audio.format` says
  16 kHz; never committed), `session.{instructions,thinking,commentary}.append` (`delegation_id`
  always present, null for the session; ≤ 500 tokens), `session.update` (delegation only, same
  mode), `response.item.create` (`function_call_output`) and `response.create` (Responses
  delegation only, every output of the pending response queued first), `session.close`;
- server: `session.started`, `session.updated`, `session.output_audio.delta` (continuously, a
  frame per 200 ms, silence included: `live_stream.py`), `session.{input,output}_transcript.delta`
  (frame-aligned fragments with `start_ms`/`end_ms`), `session.delegation.created` {offset_ms,
  delegation {id, target, response_id}}, `response.event` (a Responses lifecycle event wrapped
  with its `delegation_id`; snapshots reduced: `output` empty even at `response.completed`),
  `session.*.appended` (start_ms/end_ms), `session.usage.updated` (cumulative seconds),
  `session.closed`, `error`.

What it asserts of the session (each a refusal the client sees as an `error` event, recorded in
`ConnectionRecord.errors`): `session.start` first and once, a live model, a known audio format,
no field the strict schema lacks (`turn_detection`, `tools` at the top, …), no Realtime-API
event (`input_audio_buffer.commit`, `conversation.item.create`, `response.cancel` — there is no
commit and no client-triggered answer), audio only after `session.started`, Responses-only events
only under Responses delegation, context appends with their `delegation_id` and within 500 tokens.

The model (what a duplex model does, driven by the script): it hears the continuous audio with
its own endpointer (`endpointer.py`) and transcribes what it hears as fragments while the user
speaks; it answers when it chooses: the plan's delay after the user's speech ended, or — quirk
`early_start`, with the benchmark's WAVs to recognise the turn (`hearing.py`) — a little before
the user has finished. A turn with calls is delegated: Responses delegation asks the local
Responses fake (`responses_fake.py`) as OpenAI's servers ask the hosted model, its events
wrapped for the client, the client's outputs carried to a follow-up; client delegation waits for
the client's backend to append its answer as commentary. Either way the model then says the
backend's answer. User speech over its reply is met by the profile's `duplex` behaviour
(`duplex.py`); it yields by going quiet (the Live API has no barge-in event).
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from arena_tui.spine.faults import DuplexBehaviour
from runners.fakes.endpointer import Endpointer
from runners.fakes.hearing import Hearing
from runners.fakes.record import ConnectionRecord
from runners.fakes.reply_session import Again, SocketSession
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.server import WebSocketFake
from runners.fakes.timing import ENVELOPE, ReplyPlan, TimingProfile
from runners.fakes.wire import tool_output
from runners.providers.openai_live.live_stream import FRAME_MS, LiveStream
from runners.providers.openai_live.responses_fake import ResponsesFake

PATH = "/v1/live/sessions"
EARLY_START = "early_start"  # quirk: the model starts answering before the user has finished
FILLER = "filler"  # quirk: it says a few words while its backend works
FILLER_TEXT = "One moment, let me check."
WORDS_PER_S = 2.6  # how fast it transcribes what it hears (150 words a minute)
SESSION_KEYS = {"model", "instructions", "audio", "delegation", "input", "store"}
AUDIO_FORMATS = {("audio/pcm", 24000), ("audio/pcm", 16000), ("audio/pcmu", 8000), ("audio/pcma", 8000)}
MAX_INPUT_ITEMS = 128
MAX_APPEND_TOKENS = 500
REFUSED = ("input_audio_buffer.", "conversation.item.", "response.cancel", "response.output_audio")

#: a duplex model's own manners: it yields to an interruption about a third of a second in, talks
#: through backchannels and leaves speech not meant for it alone (what gpt-live-1 is said to do;
#: only a real session can show what it does)
LIVE_DUPLEX = DuplexBehaviour(yield_after_ms=350.0, backchannels="ignore", side_speech="ignore")
#: the shared envelope (first audio 0.5-1.4 s after the user, 1 in 10 late), streamed in real time
#: (the protocol's continuous stream), a fifth of replies started early, 3 in 10 delegations with a filler
REAL_TIMING = ENVELOPE.replace(stream_rate=1.0, terminal_lag_ms=(0.0, 0.0), quirks={EARLY_START: 0.2, FILLER: 0.3},
                               duplex=LIVE_DUPLEX)


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def _tokens(text: str) -> int:
    """The API's budget counts tokens; Pipecat estimates them as ASCII quarters (`_estimated_tokens`)."""
    return (sum(1 if c.isascii() else 4 for c in text) + 3) // 4


@dataclass
class _Utterance:
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


class _LiveSession(SocketSession):
    FLUSHES = False  # no barge-in signal: it goes quiet, and what was sent plays out
    fake: OpenAILiveFake

    def __init__(self, fake: OpenAILiveFake, rec: ConnectionRecord, ws: web.WebSocketResponse) -> None:
        super().__init__(fake, rec, ws)
        self.started = False
        self.config: dict[str, Any] = {}
        self.rate = 24000
        self.endpointer: Endpointer | None = None
        self.stream: LiveStream | None = None
        self.utterance: _Utterance | None = None
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
        evt.setdefault("event_id", _id("event"))
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
        problem = self.startup_problem(session)
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

    def startup_problem(self, session: dict[str, Any]) -> str | None:
        model = session.get("model")
        if not isinstance(model, str) or not model.startswith("gpt-live"):
            return f"session.model must be a live model (got {model!r})"
        fmt = (session.get("audio") or {}).get("format")
        if fmt is not None and (fmt.get("type", "audio/pcm"), int(fmt.get("rate") or 24000)) not in AUDIO_FORMATS:
            return f"session.audio.format {fmt} is not one the API takes (audio/pcm 16 or 24 kHz, G.711 at 8 kHz)"
        items = session.get("input") or []
        if len(items) > MAX_INPUT_ITEMS:
            return f"session.input has {len(items)} items; at most {MAX_INPUT_ITEMS}"
        for i, item in enumerate(items):
            role, parts = item.get("role"), item.get("content") or []
            want = "output_text" if role == "assistant" else "input_text"
            if role not in ("developer", "user", "assistant"):
                return f"session.input[{i}].role {role!r}: developer, user or assistant"
            if len(parts) != 1 or parts[0].get("type") != want:
                return f"session.input[{i}] ({role}) takes exactly one {want} part"
        delegation = session.get("delegation") or {"type": "client"}
        if delegation.get("type") == "responses" and not (delegation.get("responses") or {}).get("model"):
            return "session.delegation.responses.model is required"
        return None

    def resource(self, status: str) -> dict[str, Any]:
        return {"id": f"live_sess_{self.rec.index}", "status": status, "model": self.config.get("model"),
                "instructions": self.config.get("instructions"), "delegation": self.config.get("delegation") or {"type": "client"},
                "audio": {"format": {"type": "audio/pcm", "rate": self.rate}, **(self.config.get("audio") or {})},
                "input": self.config.get("input") or []}

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
        if _tokens(content) > MAX_APPEND_TOKENS:
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

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

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
        self.utterance = _Utterance(start_ms=self.now, words=text.split(), plan=plan, last_emit_ms=self.now,
                                    start_heard_ms=self.rec.audio_in_ms)
        self.conversation.append({"role": "user", "text": text})
        self.mark("user_start")

    def recognise(self, u: _Utterance) -> None:
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
            self.spawn(self._early(u.end_ms - lead))

    async def _early(self, at_ms: float) -> None:
        await self.fake.clock.until(at_ms)
        self.respond(early=True)

    async def transcribe(self, u: _Utterance, final: bool) -> None:
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
        did = _id("del")
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


class OpenAILiveFake(WebSocketFake):
    """The Live API on 127.0.0.1, with the Responses API its delegations are run on (`backend`)."""

    PATH = PATH
    REAL_TIMING = REAL_TIMING
    session = _LiveSession

    def __init__(self, script: Script | None = None, *, hearing: Hearing | None = None, client_backend: Any = None,
                 speed: float = 1.0, timing: str | TimingProfile = "instant", **kwargs: Any) -> None:
        """`hearing`: the benchmark's WAVs, to know a turn by its audio (quirk `early_start`);
        `client_backend`: a client delegation's text model fake (its runner talks to it), started
        and stopped with this one."""
        super().__init__(script, speed=speed, timing=timing, **kwargs)
        self.hearing = hearing
        self.backend = ResponsesFake(self.script)
        self.client_backend = client_backend
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> OpenAILiveFake:
        await self.backend.start()
        if self.client_backend is not None:
            await self.client_backend.start()
        self._http = aiohttp.ClientSession()
        await super().start()
        return self

    async def stop(self) -> None:
        await super().stop()
        if self._http is not None:
            await self._http.close()
            self._http = None
        await self.backend.stop()
        if self.client_backend is not None:
            await self.client_backend.stop()

    async def ask_backend(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """One streamed request to the Responses fake, its events in order (an error as one event)."""
        assert self._http is not None
        headers = {"Authorization": "Bearer live-fake-internal"}  # OpenAI's own call: no client key travels
        async with self._http.post(f"{self.backend.base_url}/responses", json=body, headers=headers) as resp:
            if resp.status != 200:
                return [{"type": "error", "status": resp.status, **(await resp.json())}]
            events = []
            async for line in resp.content:
                if line.startswith(b"data: "):
                    events.append(json.loads(line[6:]))
            return events

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the backend got, once each and in order: the function outputs the client
        sent back (Responses delegation), or those its client backend's model received."""
        if self.client_backend is not None:
            return self.client_backend.tool_results()
        return [r for c in self.connections for r in c.tool_results]
