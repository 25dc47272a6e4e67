"""A local Ultravox Realtime server: the call-creation REST endpoint and the call websocket.

Pipecat's `UltravoxRealtimeLLMService` posts to the hard-coded https://api.ultravox.ai to
create calls, so offline it is driven with `JoinUrlInputParams(join_url=...)`; the engine
creates the call itself against `fake.base_url` (`POST /api/calls`, body as Ultravox's) and
passes the returned `joinUrl`. The websocket carries binary PCM16 both ways (input at the
call's `inputSampleRate`, default 48 kHz as Pipecat sends; output at `outputSampleRate`,
default the input rate) and JSON data messages: server → `call_started`,
`state`, `transcript`, `client_tool_invocation`, `playback_clear_buffer`, `pong`;
client → `client_tool_result`, `user_text_message`, `set_output_medium`, `ping`, `hang_up`.

A call's history is what Ultravox would start it with: the prior call's messages with
`?priorCallId=` (tool calls and results included), else the body's `initialMessages`; both
together are refused (400), as the API documents. The agent speaks first on join unless the
call says the user does (`firstSpeakerSettings.user`), also on a call that starts with
history. `creations` records every Create Call request (body, prior call, whether a key was
sent, status); `create_failures` makes the next creations answer an error instead.

Timing (`runners/fakes/timing.py`, `timing="real"`: the shared `ENVELOPE`, not measured for
Ultravox): `thinking`, then the invocation or `speaking` and the first audio a while after the
user's audio, binary audio in bursts slower than real time, the final agent transcript right
after the last audio and `state: listening` (what ends Pipecat's response) the plan's lag later;
a `no_output` reply sends nothing at all.

Duplex cues (user speech over a reply, `runners/fakes/duplex.py`: the profile's `duplex` behaviour):
it stops with `playback_clear_buffer`.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from runners.fakes.endpointer import Endpointer
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.reply_session import SocketSession
from runners.fakes.server import FakeServer
from runners.fakes.speech import chunks, synthesize
from runners.fakes.wire import spread_words
from runners.fakes.timing import ENVELOPE, ReplyPlan, TimingProfile, paced

DEFAULT_RATE = 48000


class UltravoxFake(FakeServer):
    """Scripted Ultravox. Calls created over REST keep their config; `priorCallId` carries history."""

    REAL_TIMING = ENVELOPE

    def __init__(self, script: Script | None = None, *, greet_on_join: bool = True, speed: float = 1.0,
                 timing: str | TimingProfile = "instant"):
        super().__init__(script, speed=speed, timing=timing)
        self.greet_on_join = greet_on_join
        self.calls: dict[str, dict[str, Any]] = {}  # call id -> {"config": body, "history": [...]}
        self.creations: list[dict[str, Any]] = []  # every Create Call request: body, prior, status
        self.create_failures: list[tuple[int, Any]] = []  # next creations answer (status, body) instead

    @property
    def base_url(self) -> str:
        return f"http://{self.host}/api"

    def join_url(self, call_id: str | None = None) -> str:
        """A join URL for an existing call, or for an ad-hoc call with default settings."""
        call_id = call_id or self._create_call({}, None)
        return f"ws://{self.host}/calls/{call_id}/join"

    def routes(self) -> list[web.RouteDef]:
        return [
            web.post("/api/calls", self._post_call),
            web.post("/api/agents/{agent_id}/calls", self._post_call),
            web.get("/calls/{call_id}/join", self._join),
        ]

    def _create_call(self, body: dict[str, Any], prior: str | None) -> str:
        call_id = str(uuid.uuid4())
        if prior and prior in self.calls:  # the prior call's messages become this call's start
            history = list(self.calls[prior]["history"])
        else:
            history = [_history_entry(m) for m in body.get("initialMessages") or []]
        self.calls[call_id] = {"config": body, "history": history, "prior_call_id": prior}
        return call_id

    async def _post_call(self, request: web.Request) -> web.Response:
        record: dict[str, Any] = {
            "prior_call_id": request.query.get("priorCallId"),
            "auth_present": "x-api-key" in request.headers,  # the key itself is never kept
            "body": None,
            "status": 0,
        }
        self.creations.append(record)
        response = await self._answer_post(request, record)
        record["status"] = response.status
        return response

    async def _answer_post(self, request: web.Request, record: dict[str, Any]) -> web.Response:
        if "x-api-key" not in request.headers:
            return web.json_response({"detail": "Authentication credentials were not provided."}, status=403)
        if self.create_failures:
            status, payload = self.create_failures.pop(0)
            if isinstance(payload, str):
                return web.Response(status=status, text=payload, content_type="text/plain")
            return web.json_response(payload, status=status)
        try:
            body = await request.json()
        except json.JSONDecodeError as e:
            return web.json_response({"detail": f"JSON parse error: {e}"}, status=400)
        record["body"] = body
        problem = _check_body(body)
        if problem:
            return web.json_response(problem, status=400)
        prior = record["prior_call_id"]
        if prior and prior not in self.calls:
            return web.json_response({"detail": f"priorCallId {prior} not found"}, status=404)
        if prior and body.get("initialMessages"):
            # As the API documents: a continued call takes the prior call's messages instead.
            return web.json_response(
                {"detail": "initialMessages may not be set together with priorCallId"}, status=400
            )
        call_id = self._create_call(body, prior)
        return web.json_response(
            {"callId": call_id, "joinUrl": self.join_url(call_id), "created": "now"}, status=201
        )

    async def _join(self, request: web.Request) -> web.StreamResponse:
        call_id = request.match_info["call_id"]
        if call_id not in self.calls:
            return web.Response(status=404, text="call not found")
        rec = self.new_connection(request)
        call = self.calls[call_id]
        cfg = call["config"]
        rec.setup = cfg
        rec.system_instruction = cfg.get("systemPrompt")
        rec.tools = [t.get("temporaryTool", t) for t in cfg.get("selectedTools", [])]
        rec.history = list(call["history"])
        rec.resumed_from = call.get("prior_call_id")
        rec.query = {"callId": call_id, **({"priorCallId": rec.resumed_from} if rec.resumed_from else {})}
        return await self.run_session(request, rec, lambda ws: _Call(self, rec, ws, call))


class _Call(SocketSession):
    fake: UltravoxFake

    def __init__(self, fake: UltravoxFake, rec: ConnectionRecord, ws: web.WebSocketResponse, call: dict[str, Any]):
        super().__init__(fake, rec, ws)
        self.call = call
        medium = (call["config"].get("medium") or {}).get("serverWebSocket") or {}
        self.in_rate = int(medium.get("inputSampleRate") or DEFAULT_RATE)
        self.out_rate = int(medium.get("outputSampleRate") or self.in_rate)  # unset: same as input
        self.rec.audio_in_rate = self.in_rate
        self.endpointer = Endpointer(self.in_rate, self.script.silence_ms, self.script.speech_threshold_dbfs)
        self.ordinal = 0

    async def send(self, msg: dict[str, Any]) -> None:
        await self.sock.send_json(msg)

    async def run(self) -> None:
        await self.send({"type": "call_started", "callId": str(uuid.uuid4())})
        await self.send({"type": "state", "state": "listening"})
        if self.fake.greet_on_join and _agent_speaks_first(self.call["config"]):
            # The default first speaker is the agent, also on a call that starts with history
            # (initialMessages or a prior call's): it opens with a greeting or a continuation.
            self.respond()
        async for msg in self.sock.messages():
            if msg.type == WSMsgType.BINARY:
                self.on_audio(msg.data)
            elif msg.type == WSMsgType.TEXT:
                try:
                    await self.on_message(json.loads(msg.data))
                except Exception as e:  # noqa: BLE001 -- bad input: report it as Ultravox does, keep the call
                    self.rec.errors.append(f"{type(e).__name__}: {e}")
            else:
                break
        self.close_floor()

    def on_audio(self, pcm: bytes) -> None:
        self.rec.heard(pcm, self.in_rate)
        self.rec.audio_in_chunks += 1
        edge = self.endpointer.feed(pcm)
        if self.floor.speech(edge):
            return  # user speech over the reply (a duplex cue): the floor meets it
        if edge == "stopped":
            self.rec.user_turns += 1
            self.mark("user_end")
            self.respond()

    async def on_message(self, data: dict[str, Any]) -> None:
        self.rec.messages.append(data)
        kind = data.get("type")
        if kind == "client_tool_result":
            result = {"call_id": data.get("invocationId"), "name": None, "result": data.get("result")}
            if "errorType" in data:
                result["error"] = {"errorType": data["errorType"], "errorMessage": data.get("errorMessage")}
            self.answered(result)
        elif kind == "user_text_message":
            self.call["history"].append({"role": "user", "text": data.get("text", "")})
            self.respond()
        elif kind == "ping":
            await self.send({"type": "pong", "timestamp": data.get("timestamp")})
        elif kind == "hang_up":
            self.rec.closed = "client:hang_up"
            await self.ws.close()

    async def barge_in(self) -> None:
        """The reply stops for user speech (a duplex cue): Ultravox tells the client to drop what it holds."""
        self.mark("barge_in")
        self.replying.cancel()
        await self.send({"type": "playback_clear_buffer"})
        await self.send({"type": "state", "state": "listening"})

    async def _transcript(self, role: str, *, text: str | None = None, delta: str | None = None, final: bool) -> None:
        await self.send(
            {"type": "transcript", "role": role, "medium": "voice", "text": text, "delta": delta, "final": final, "ordinal": self.ordinal}
        )

    async def reply(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        """One reply; `anchor_ms`: when its trigger (the user's speech end, a text, the join) came."""
        await self.send({"type": "state", "state": "thinking"})
        if reply.user_transcript:
            await self._transcript("user", text=reply.user_transcript, final=True)
            self.call["history"].append({"role": "user", "text": reply.user_transcript})
            self.ordinal += 1
        for call in reply.tool_calls:  # one invocation each, answered before the next
            inv = call.call_id or f"inv-{n}-{uuid.uuid4().hex[:6]}"
            fut = self.expect_result(inv, call.name)
            await self.fake.clock.until(anchor_ms + plan.first_audio_ms)
            self.mark("tool_call", n)
            await self.send({"type": "client_tool_invocation", "toolName": call.name, "invocationId": inv, "parameters": call.args})
            self.call["history"].append(
                {"role": "tool_call", "toolName": call.name, "invocationId": inv, "text": json.dumps(call.args)}
            )
            result = await fut
            anchor_ms = self.now
            self.call["history"].append(
                {"role": "tool_result", "toolName": call.name, "invocationId": inv, "text": result.get("result")}
            )
        last_ms = self.now
        if reply.text:
            pcm = synthesize(reply.text, self.out_rate, self.script.voice) if reply.audio else b""
            parts = chunks(pcm, self.out_rate, self.script.chunk_ms)
            deltas = spread_words(reply.text, len(parts))
            parts_ms = [len(p) / 2 / self.out_rate * 1000.0 for p in parts] or [0.0]
            async for i in paced(plan, self.fake.clock, anchor_ms, parts_ms):
                if i == 0:
                    await self.send({"type": "state", "state": "speaking"})
                if deltas[i]:
                    await self._transcript("agent", delta=deltas[i], final=False)
                if i < len(parts):
                    self.mark("audio", n, parts_ms[i])
                    self.floor.sent(parts_ms[i])
                    await self.sock.send_bytes(parts[i])
            last_ms = self.now
            await self._transcript("agent", text=reply.text, final=True)
            self.call["history"].append({"role": "agent", "text": reply.text})
            self.ordinal += 1
        await self.fake.clock.until(last_ms + plan.terminal_lag_ms)
        self.mark("terminal", n)
        await self.send({"type": "state", "state": "listening"})
        if reply.then in ("disconnect", "expire", "go_away"):
            # Ultravox has no goAway; every forced end is a close of the call socket.
            self.rec.closed = f"server:{reply.close_code}"
            self.sock.close_soon(reply.close_code, b"call ended")


_ROLES = {"MESSAGE_ROLE_USER": "user", "MESSAGE_ROLE_AGENT": "agent",
          "MESSAGE_ROLE_TOOL_CALL": "tool_call", "MESSAGE_ROLE_TOOL_RESULT": "tool_result"}


def _history_entry(msg: dict[str, Any]) -> dict[str, Any]:
    """An Ultravox call message (`initialMessages`) in the record's history shape."""
    entry: dict[str, Any] = {"role": _ROLES[msg["role"]], "text": msg.get("text", "")}
    for key in ("toolName", "invocationId"):
        if msg.get(key):
            entry[key] = msg[key]
    return entry


def _check_body(body: object) -> dict[str, Any] | None:
    """Field errors the real API would answer with 400, in its per-field shape."""
    if not isinstance(body, dict):
        return {"detail": "request body must be a JSON object"}
    errors: dict[str, list[str]] = {}
    for i, msg in enumerate(body.get("initialMessages") or []):
        if not isinstance(msg, dict) or msg.get("role") not in _ROLES:
            errors.setdefault("initialMessages", []).append(f"[{i}]: unknown role {msg.get('role') if isinstance(msg, dict) else msg!r}")
        elif msg["role"] in ("MESSAGE_ROLE_TOOL_CALL", "MESSAGE_ROLE_TOOL_RESULT") and not (msg.get("toolName") and msg.get("invocationId")):
            errors.setdefault("initialMessages", []).append(f"[{i}]: tool messages need toolName and invocationId")
    for i, sel in enumerate(body.get("selectedTools") or []):
        tool = (sel or {}).get("temporaryTool") or {}
        name = tool.get("modelToolName", "")
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name or ""):
            errors.setdefault("selectedTools", []).append(f"[{i}]: modelToolName {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$")
        if sum(k in tool for k in ("client", "http", "dataConnection")) != 1:
            errors.setdefault("selectedTools", []).append(f"[{i}]: exactly one of client, http, dataConnection")
    return errors or None


def _agent_speaks_first(config: dict[str, Any]) -> bool:
    settings = config.get("firstSpeakerSettings") or {}
    if "user" in settings:
        return False
    return config.get("firstSpeaker") != "FIRST_SPEAKER_USER"
