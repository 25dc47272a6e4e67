"""What a text-model fake answers, whatever its wire protocol: one rule for every text fake
(OpenAI Chat Completions, Anthropic Messages, Gemini generateContent, Bedrock Converse).

A text fake hears nothing, so a request is answered by the conversation's LAST user message:
the scripted reply whose `user_transcript` is that text (else the n-th reply for the n-th user
message). A request that ends in the user's message gets all of the reply's tool calls at
once (when the request declares tools), else its text; a request that ends in tool results
gets the reply's text. `Exchange` is what each fake records of a request, in one shape for all
of them, so a test asserts messages, tools and tool results the same way at every fake.

As the backend of a duplex model (Pipecat's `BackendLLMWorker`, a client delegation of
`gpt-live-1`), a text model is handed the conversation as one labelled transcript ("USER: …" /
"ASSISTANT: …" lines, `_render_transcript_request`) and told to act on the user's most recent
request: the fake does so (the last `USER:` line is the user's words), and, told that what the
user hears begins with the spoken mark (`SPOKEN_MARK_RULE`, the worker's pairing instruction),
it begins its answer with it, as a model following that instruction does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from typing import Any, Literal, Unpack

from aiohttp import web
from pydantic import BaseModel, Field

from runners.fakes.script import Script, ScriptedReply
from runners.fakes.server import FakeServer, ServerOptions
from runners.fakes.wire import spread_words

Phase = Literal["user", "tool"]

#: what Pipecat's `BACKEND_PAIRING_INSTRUCTION` (appended to a backend's system instruction) asks:
#: a message the user is to hear begins with the mark (`SPOKEN_MARK`, ">>")
SPOKEN_MARK = ">>"
SPOKEN_MARK_RULE = f"Begin a message with {SPOKEN_MARK}"
#: a line of a transcript a frontend hands its backend (`_render_transcript_request`)
_USER_LINE = re.compile(r"(?m)^USER: (.+)$")


def heard_request(text: str) -> str:
    """The user's words a request carries: the message itself, or, for a labelled transcript
    (a duplex model's delegation), its most recent `USER:` line."""
    lines = _USER_LINE.findall(text)
    return lines[-1].strip() if lines else text.strip()


def spoken(text: str, system: str) -> str:
    """A text answer as a model says it under `system`: marked for the user's ear when the system
    instruction asks for the spoken mark (a delegation backend's), else as it is."""
    return f"{SPOKEN_MARK} {text}" if text and SPOKEN_MARK_RULE in system else text


class Call(BaseModel):
    """A tool call the fake makes (its id, as the protocol spells ids)."""

    call_id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Exchange(BaseModel):
    """One request as the fake understood it (whatever the protocol), and what it answered."""

    index: int  # 1-based
    path: str
    model: str = ""
    auth_present: bool = False  # the key itself is never kept (a fingerprint at most, per fake)
    system: str = ""
    #: the conversation, normalised: {role: user|assistant, text} / {role: assistant, calls: [..]} /
    #: {role: tool, call_id, name, result}
    turns: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)  # declared tool names, in order
    body: dict[str, Any] = Field(default_factory=dict)  # the request as sent
    reply: int | None = None  # script reply answered (None: unscripted / default)
    status: int = 200

    @property
    def phase(self) -> Phase:
        """Where the request's conversation ends: in tool results ("tool") or the user's message ("user")."""
        return "tool" if self.turns and self.turns[-1]["role"] == "tool" else "user"

    def user_texts(self) -> list[str]:
        return [t["text"] for t in self.turns if t["role"] == "user"]

    def tool_results(self) -> list[dict[str, Any]]:
        """`{call_id, name, result}` of every tool result in the request, result parsed as JSON when it is."""
        return [{k: t.get(k) for k in ("call_id", "name", "result")} for t in self.turns if t["role"] == "tool"]


def parsed(value: object) -> Any:
    """A tool result as sent: JSON text read as JSON, anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class Replies:
    """The script of one fake, read per request (`answer`)."""

    def __init__(self, script: Script, id_prefix: str = "call_fake") -> None:
        self.script = script
        self._ids = (f"{id_prefix}{n:04d}" for n in itertools.count(1))

    def reply_for(self, users: list[str]) -> tuple[int | None, ScriptedReply]:
        last = heard_request(users[-1]) if users else ""
        replies = self.script.replies
        for i, r in enumerate(replies):
            if r.user_transcript is not None and r.user_transcript.strip() == last:
                return i, r
        if self.script.key == "user_turn" and any(r.user_transcript is not None for r in replies):
            # a script keyed by what the user says: words it does not know are the greeting's
            # prompt (the first message) or were not heard as any turn's (the default reply)
            return None, (self.script.kickoff if len(users) <= 1 else self.script.default)
        n = len(users) - 1
        if 0 <= n < len(replies):
            return n, replies[n]
        return None, self.script.default

    def content(self, reply: ScriptedReply, phase: Phase, has_tools: bool, system: str = "") -> tuple[str, list[Call]]:
        """(text, tool calls): every call of the reply at once (parallel calls) to a request that
        ends in the user's message and declares tools, else its text (`spoken` under `system`)."""
        if phase == "user" and reply.tool_calls and has_tools:
            return "", [Call(call_id=c.call_id or next(self._ids), name=c.name, args=c.args) for c in reply.tool_calls]
        return spoken(reply.text, system), []

    def answer(self, ex: Exchange, *, one_at_a_time: bool = False) -> tuple[str, list[Call]]:
        """(text, tool calls) for this request, recording which reply it was in `ex.reply`.
        `one_at_a_time` (the client asked for no parallel calls): the reply's next call not yet
        answered since the user's message, alone, and the text only once all are answered."""
        ex.reply, reply = self.reply_for(ex.user_texts())
        if not one_at_a_time or not reply.tool_calls or not ex.tools:
            return self.content(reply, ex.phase, bool(ex.tools), ex.system)
        last_user = max(i for i, t in enumerate(ex.turns) if t["role"] == "user") if ex.user_texts() else -1
        made = sum(1 for t in ex.turns[last_user + 1:] if t["role"] == "tool")
        if made >= len(reply.tool_calls):
            return spoken(reply.text, ex.system), []
        c = reply.tool_calls[made]
        return "", [Call(call_id=c.call_id or next(self._ids), name=c.name, args=c.args)]


class TextFake(FakeServer):
    """The shell every text-model fake shares: its script's `Replies`, each request's `Exchange`
    (in `exchanges`), and a stream helper. A subclass reads and answers its protocol."""

    #: header(s) a request must carry its key in (the protocol's own)
    key_headers: tuple[str, ...] = ()
    #: the protocol's error kind for a request it refuses as malformed (400)
    invalid: str = ""

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.replies = Replies(self.script)
        self.exchanges: list[Exchange] = []

    @property
    def base_url(self) -> str:
        return f"http://{self.host}"

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result it received: each request carries the conversation so far, so the last holds them all."""
        return self.exchanges[-1].tool_results() if self.exchanges else []

    def exchange(self, request: web.Request) -> Exchange:
        """A new record of this request (the key: present or not, never kept)."""
        ex = Exchange(index=len(self.exchanges) + 1, path=request.path,
                      auth_present=any(request.headers.get(h, "").strip() for h in self.key_headers))
        self.exchanges.append(ex)
        return ex

    @staticmethod
    def error(status: int, kind: str, message: str) -> web.Response:
        """The protocol's error response: its envelope around `kind` and `message`."""
        raise NotImplementedError

    def refuse(self, ex: Exchange, status: int, message: str, kind: str = "") -> web.Response:
        """Refuse the request `ex` records (its status kept) with the protocol's error; `kind` by default a 400's."""
        ex.status = status
        return self.error(status, kind or self.invalid, message)

    def read(self, ex: Exchange, body: dict[str, Any]) -> str | None:
        """Fill `ex` from the request body; what the real API would refuse, or None."""
        raise NotImplementedError

    async def read_request(self, request: web.Request, ex: Exchange) -> web.Response | None:
        """The JSON body read into `ex`, or the refusal to send: not JSON, or what `read` finds wrong (400)."""
        problem: str | None
        try:
            body = await request.json()
        except ValueError:
            problem = "the body is not JSON"
        else:
            ex.body = body
            problem = self.read(ex, body)
        return None if problem is None else self.refuse(ex, 400, problem)

    @staticmethod
    async def stream(request: web.Request, frames: list[bytes], content_type: str = "text/event-stream") -> web.StreamResponse:
        """Send `frames` as one streamed response, a few ms apart (a stream, not one write)."""
        resp = web.StreamResponse(status=200, headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
        await resp.prepare(request)
        for frame in frames:
            await resp.write(frame)
            await asyncio.sleep(0.005)
        await resp.write_eof()
        return resp


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    """One server-sent event (`event:` line when the protocol names its events)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def pieces(text: str) -> list[str]:
    """A reply's text in a few streamed pieces, word-aligned (`wire.spread_words`)."""
    return [p for p in spread_words(text, min(4, max(1, len(text.split())))) if p] or [text]
