"""A speech-to-speech fake's session as every such fake has it (Gemini Live, GLM, Grok, Ultravox,
Nova Sonic): the reply in progress and the floor the user may speak over it on (`duplex.py`),
the opening every reply shares (its plan on the fake's timing, marked at its trigger, or a
scripted stall: nothing at all), and the tool calls a reply waits on until their results come
in. A fake's own module holds only its protocol: what it sends and reads.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from runners.fakes.duplex import Floor, ReplyTask
from runners.fakes.record import ConnectionRecord
from runners.fakes.script import Script, ScriptedReplies, ScriptedReply
from runners.fakes.server import FakeServer, ServerSocket
from runners.fakes.timing import ReplyPlan

Again = tuple[int, ScriptedReply]  # a reply spoken once more (the answer to a duplex cue)


class TimedSession:
    """A fake session's view of time: the fake's audio clock, and marks on its record."""

    fake: ScriptedReplies  # the fake it belongs to: `clock`, `timing`, `next_reply`
    rec: ConnectionRecord

    @property
    def now(self) -> float:
        return self.fake.clock.ms

    def mark(self, what: str, reply: int | None = None, audio_ms: float = 0.0) -> None:
        self.rec.mark(self.now, what, reply, audio_ms)


class ReplySession(TimedSession):
    """A session that speaks the script's replies over its connection (`ws`, a websocket; None for a
    fake in this process). A subclass supplies `reply(n, reply, plan, anchor_ms)` (one reply on its
    wire; or `_respond` whole, where a response makes one call at a time) and `barge_in()` (its
    provider's signal that the reply stopped for the user); `close_floor()` when the session ends."""

    #: the provider's barge-in signal makes the client drop the audio it holds (`Floor`)
    FLUSHES = True

    def __init__(self, fake: ScriptedReplies, rec: ConnectionRecord, ws: web.WebSocketResponse | None = None) -> None:
        self.fake, self.rec, self.ws = fake, rec, ws
        self.script: Script = fake.script
        self.sock = ServerSocket(ws) if ws is not None else None
        self.lock = asyncio.Lock()  # one reply at a time
        self.tasks: set[asyncio.Task[Any]] = set()
        self.replying = ReplyTask(self.tasks)  # the reply in progress (a duplex cue stops it, its answer repeats it)
        self.floor = Floor(fake.timing.duplex, fake.clock, rec.duplex, stop=self.barge_in,
                           answer=self.answer_cue, flushes=self.FLUSHES)
        self.waiting: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}  # call id → (tool, its result)
        self.after_tool: tuple[ScriptedReply, int, int] | None = None  # one call a response: a reply, its next call, its number

    def close_floor(self) -> None:
        self.floor.close()
        for t in self.tasks:
            t.cancel()

    def respond(self, again: Again | None = None) -> None:
        """A reply now (its trigger came: the user's speech end, a text, a response request)."""
        self.replying.start(self._respond(self.now, again))

    async def _respond(self, anchor_ms: float, again: Again | None = None) -> None:
        """One reply, one at a time: opened (`open_reply`; nothing when it stalls), then `reply`.
        `anchor_ms`: when its trigger came, from which its plan's delays count."""
        async with self.lock:
            if (opened := self.open_reply(anchor_ms, again)) is not None:
                await self.reply(*opened, anchor_ms)

    async def reply(self, n: int, reply: ScriptedReply, plan: ReplyPlan, anchor_ms: float) -> None:
        raise NotImplementedError

    async def barge_in(self) -> None:
        raise NotImplementedError

    async def answer_cue(self) -> None:
        """The cue's speech ended: a user turn, answered with the reply it cut (spoken again)."""
        if self.replying.current is not None:
            self.respond(again=self.replying.current)

    def begin(self, n: int, anchor_ms: float, *, may_stall: bool = True) -> ReplyPlan | None:
        """Reply `n`'s plan, marked at its trigger (the plan counts from there); None when the script
        stalls it: no output at all (asked again, the reply comes)."""
        plan = self.fake.timing.plan(n)
        self.rec.mark(anchor_ms, "reply_start", n)
        if may_stall and self.script.stalls(n, plan):
            self.mark("stalled", n)
            return None
        return plan

    def open_reply(self, anchor_ms: float, again: Again | None) -> tuple[int, ScriptedReply, ReplyPlan] | None:
        """The reply to speak (`again` without its calls, else the script's next: `ReplyTask.pick`)
        and its plan, or None when it stalls."""
        n, reply = self.replying.pick(again, lambda: self.fake.next_reply(self.rec), self.floor)
        plan = self.begin(n, anchor_ms)
        return None if plan is None else (n, reply, plan)

    def next_call(self, again: Again | None) -> tuple[int, ScriptedReply, int]:
        """Where a protocol of one call a response (OpenAI Realtime's dialects: GLM, Grok) is:
        (reply number, reply, the index of the call this response makes; past its calls, its
        speech). `again` is past its calls; a reply whose calls are under way (`after_tool`) goes
        on; else the script's next, whose cues the floor then listens for."""
        if again is not None:
            (n, reply), k = again, len(again[1].tool_calls)
        elif self.after_tool is not None:
            (reply, k, n), self.after_tool = self.after_tool, None
        else:
            (n, reply), k = self.fake.next_reply(self.rec), 0
        self.replying.current = (n, reply)
        if again is None and k == 0:
            self.floor.replying(reply.duplex)
        return n, reply, k

    def expect_result(self, call_id: str, name: str) -> asyncio.Future[dict[str, Any]]:
        """The reply calls `name`: what it awaits until the result comes in (`answered`)."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = (name, fut)
        return fut

    def answered(self, result: dict[str, Any]) -> None:
        """A tool result came in (`{call_id, name, result}`, name None where the wire leaves it out):
        recorded on the connection, and the reply waiting on its call goes on."""
        self.rec.tool_results.append(result)
        name, fut = self.waiting.pop(str(result.get("call_id")), (None, None))
        if fut is not None and not fut.done():
            result["name"] = result.get("name") or name
            fut.set_result(result)


class SocketSession(ReplySession):
    """A `ReplySession` over a websocket: every fake's but Nova Sonic's (a stream in this process)."""

    fake: FakeServer
    ws: web.WebSocketResponse
    sock: ServerSocket

    def __init__(self, fake: FakeServer, rec: ConnectionRecord, ws: web.WebSocketResponse) -> None:
        super().__init__(fake, rec, ws)
