"""A local OpenAI-compatible Chat Completions server for the text runner (runners/providers/text_chat/runner.py).

It speaks the wire protocol `OpenAILLMService` uses: `POST /v1/chat/completions` with
`stream: true` answered as server-sent events (`chat.completion.chunk` objects, tool calls
streamed as an id/name chunk then argument fragments, a usage chunk when
`stream_options.include_usage` is set, then `data: [DONE]`); non-streaming requests get
one `chat.completion`. Errors use OpenAI's `{"error": {...}}` envelope.

It hears nothing, so a request is answered from the benchmark script by its LAST user
message: the scripted reply whose `user_transcript` is that text (else the n-th reply for
the n-th user message). A request ending in that user message gets the reply's tool calls
(or its text when it has none); a request ending in tool results gets the reply's text.
Every request body is recorded (the key travels only in a header and is never kept), so
tests can check the exact conversation a retried or trimmed request carried.

Faults (`fake.faults`) are consumed by the first request they match: an HTTP error status,
a connection dropped after N streamed chunks (0: before any response), or a stall.

`GET /v1/models` lists `fake.served` as OpenAI's, Ollama's and vLLM's servers list theirs (the
model list `arena-tui models` probes a local server with).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from typing import Any, Literal, Unpack

from aiohttp import web
from pydantic import BaseModel, Field

from runners.fakes.script import Script, ScriptedReply
from runners.fakes.server import FakeServer, ServerOptions
from runners.fakes.text_replies import Replies
from runners.fakes.wire import spread_words

PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")


class ChatFault(BaseModel):
    """One scripted misbehaviour for the first request that matches `reply` and `phase`."""

    kind: Literal["status", "drop", "stall"]
    status: int = 500  # for kind="status"
    reply: int | None = None  # script reply number the request answers; None = any
    phase: Literal["user", "tool", "any"] = "any"  # request ending in the user message / in tool results
    after_chunks: int = 1  # kind="drop": SSE chunks sent before the connection is cut (0 = no response)
    delay_s: float = 60.0  # kind="stall": how long to sit on the request


class ChatRequestRecord(BaseModel):
    """What one request carried (the JSON body as sent; credentials only as a flag)."""

    index: int  # 1-based
    path: str
    auth_present: bool
    auth_sha256: str = ""  # fingerprint of the bearer token, so a test can tell WHICH key was sent
    model: str = ""
    stream: bool = False
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    body: dict[str, Any] = Field(default_factory=dict)
    reply: int | None = None  # script reply answered (None: unscripted / default)
    phase: str = ""  # "user" | "tool"
    fault: str | None = None  # the fault played instead of an answer
    status: int = 200

    def tool_results(self) -> list[dict[str, Any]]:
        """`{call_id, content}` of every tool message, content parsed as JSON when it is."""
        out = []
        for m in self.messages:
            if m.get("role") == "tool":
                content = _text(m.get("content"))
                try:
                    parsed: Any = json.loads(content)
                except ValueError:
                    parsed = content
                out.append({"call_id": m.get("tool_call_id"), "content": parsed})
        return out

    def user_texts(self) -> list[str]:
        return [_text(m.get("content")) for m in self.messages if m.get("role") == "user"]


def _text(content: object) -> str:
    """Message content as text (a string, or a list of `{type: text, text}` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


class OpenAIChatFake(FakeServer):
    """`async with OpenAIChatFake(script_for_benchmark(bench)) as fake:` → `fake.base_url`."""

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        self.requests: list[ChatRequestRecord] = []
        self.faults: list[ChatFault] = []
        self.replies = Replies(self.script)
        self.served: list[str] = []  # the model ids `GET /models` lists
        self.model_lists = 0  # how many times it was asked for them
        self._closing = asyncio.Event()  # ends stalls, so stopping never waits them out

    async def stop(self) -> None:
        self._closing.set()
        await super().stop()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}/v1"

    @property
    def chat_requests(self) -> list[ChatRequestRecord]:
        return self.requests

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result it received (`{call_id, name, result}`, the name from the call it answers):
        each request carries the conversation so far, so the last holds them all."""
        if not self.requests:
            return []
        last = self.requests[-1]
        names = {c.get("id"): (c.get("function") or {}).get("name") for m in last.messages if m.get("role") == "assistant"
                 for c in m.get("tool_calls") or []}
        return [{"call_id": r["call_id"], "name": names.get(r["call_id"]), "result": r["content"]} for r in last.tool_results()]

    def routes(self) -> list[web.RouteDef]:
        return [*(web.post(p, self._completions) for p in PATHS), *(web.get(p, self._models) for p in MODELS_PATHS)]

    # -- the protocol

    def _error(self, status: int, message: str, type_: str = "server_error", code: str | None = None) -> web.Response:
        body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
        return web.json_response(body, status=status)

    async def _models(self, request: web.Request) -> web.Response:
        self.model_lists += 1
        data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "library"} for m in self.served]
        return web.json_response({"object": "list", "data": data})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        token = auth[7:].strip() if auth.startswith("Bearer ") else ""
        rec = ChatRequestRecord(
            index=len(self.requests) + 1, path=request.path, auth_present=bool(auth),
            auth_sha256=hashlib.sha256(token.encode()).hexdigest() if token else "",
        )
        self.requests.append(rec)
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            rec.status = 401
            return self._error(401, "missing bearer token", "invalid_request_error", "invalid_api_key")
        try:
            body = await request.json()
        except ValueError:
            rec.status = 400
            return self._error(400, "body is not JSON", "invalid_request_error")
        rec.body = body
        rec.model = str(body.get("model", ""))
        rec.stream = bool(body.get("stream"))
        rec.messages = list(body.get("messages") or [])
        rec.tools = list(body.get("tools") or [])
        problem = _check(body)
        if problem:
            rec.status = 400
            return self._error(400, problem, "invalid_request_error")
        rec.phase = "tool" if rec.messages[-1].get("role") == "tool" else "user"
        rec.reply, reply = self._reply_for(rec)
        fault = self._take_fault(rec)
        if fault is not None:
            rec.fault = f"{fault.kind}" + (f":{fault.status}" if fault.kind == "status" else "")
            if fault.kind == "status":
                rec.status = fault.status
                return self._error(fault.status, f"injected {fault.status}")
            if fault.kind == "stall":
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), fault.delay_s)
            if fault.kind == "drop" and fault.after_chunks <= 0:
                _cut(request)
                return web.Response(status=500)  # never reaches the client: the socket is gone
        text, calls = self._content(rec, reply)
        if not rec.stream:
            return web.json_response(self._completion(rec, text, calls))
        return await self._stream(request, rec, text, calls, fault)

    def _reply_for(self, rec: ChatRequestRecord) -> tuple[int | None, ScriptedReply]:
        return self.replies.reply_for(rec.user_texts())

    def _take_fault(self, rec: ChatRequestRecord) -> ChatFault | None:
        for f in self.faults:
            if (f.reply is None or f.reply == rec.reply) and f.phase in ("any", rec.phase):
                self.faults.remove(f)
                return f
        return None

    def _content(self, rec: ChatRequestRecord, reply: ScriptedReply) -> tuple[str, list[dict[str, Any]]]:
        """(text, tool calls) for this request (`text_replies.Replies.content`), the calls as
        Chat Completions spells them: one parallel `tool_calls` message."""
        system = "\n".join(_text(m.get("content")) for m in rec.messages if m.get("role") in ("system", "developer"))
        text, calls = self.replies.content(reply, "tool" if rec.phase == "tool" else "user", bool(rec.tools), system)
        return text, [{"id": c.call_id, "name": c.name, "arguments": json.dumps(c.args)} for c in calls]

    def _usage(self, rec: ChatRequestRecord, text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
        prompt = sum(len(json.dumps(m)) for m in rec.messages) // 4 + 1
        out = (len(text) + sum(len(c["arguments"]) for c in calls)) // 4 + 1
        return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
                "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}

    def _completion(self, rec: ChatRequestRecord, text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
        if calls:
            message["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        return {
            "id": f"chatcmpl-fake{rec.index}", "object": "chat.completion", "created": int(time.time()),
            "model": rec.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": self._usage(rec, text, calls),
        }

    async def _stream(
        self, request: web.Request, rec: ChatRequestRecord, text: str, calls: list[dict[str, Any]], fault: ChatFault | None
    ) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        base = {"id": f"chatcmpl-fake{rec.index}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": rec.model, "system_fingerprint": "fp_fake"}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        if calls:
            for i, call in enumerate(calls):
                args = call["arguments"]
                half = len(args) // 2
                events.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                                     "function": {"name": call["name"], "arguments": ""}}]}))
                for part in (args[:half], args[half:]):
                    events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
            events.append(chunk({}, "tool_calls"))
        else:
            for piece in spread_words(text, min(4, max(1, len(text.split())))):
                if piece:
                    events.append(chunk({"content": piece}))
            events.append(chunk({}, "stop"))
        if (rec.body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": self._usage(rec, text, calls)})
        for n, ev in enumerate(events):
            if fault is not None and fault.kind == "drop" and n >= fault.after_chunks:
                _cut(request)
                return resp
            await resp.write(f"data: {json.dumps(ev)}\n\n".encode())
            await asyncio.sleep(0.005)  # a stream, not one write
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def _cut(request: web.Request) -> None:
    """Drop the TCP connection the way a failing proxy does: no more bytes, no clean end."""
    if request.transport is not None:
        request.transport.abort()


def _check(body: dict[str, Any]) -> str | None:
    """What the real API would reject with a 400 (only what a client can get wrong here)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    if not body.get("model"):
        return "'model' is required"
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"messages[{i}].role {role!r} is not valid"
        if open_calls and role != "tool":
            return f"messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages answering each id ({sorted(open_calls)})"
        if role == "assistant":
            for c in m.get("tool_calls") or []:
                open_calls.add(c.get("id"))
        elif role == "tool":
            cid = m.get("tool_call_id")
            if cid not in open_calls:
                return f"messages[{i}]: tool message answers unknown tool_call_id {cid!r}"
            open_calls.discard(cid)
    if open_calls:
        return f"tool_calls {sorted(open_calls)} have no tool message"
    return None
