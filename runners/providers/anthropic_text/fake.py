"""A local Anthropic Messages API server for the Claude text runner (`AnthropicLLMService`).

It speaks what the `anthropic` client sends and reads: `POST /v1/messages` (`?beta=true` from
`client.beta.messages`) with the key in `x-api-key` and an `anthropic-version`; `system` as text
or text blocks, `messages` whose content is text or blocks (`text`, `tool_use {id, name,
input}`, `tool_result {tool_use_id, content}`), `tools` as `{name, description, input_schema}`.
A streamed answer is server-sent events, named: `message_start`, then per content block
`content_block_start` / `content_block_delta` (`text_delta`, or `input_json_delta` fragments of
a tool call's input) / `content_block_stop`, then `message_delta` (`stop_reason` `tool_use` or
`end_turn`, output usage) and `message_stop`. Errors use Anthropic's envelope
(`{"type": "error", "error": {"type", "message"}}`), and what the real API refuses is refused:
no key, no `max_tokens`, a first message not from the user, a `tool_result` answering no
`tool_use` of the message before it, or a `tool_use` left unanswered.

What to answer is `text_replies` (the script by the last user text; calls, then text after
their results; one call per response when `tool_choice.disable_parallel_tool_use` asks so);
every request is recorded as an `Exchange`.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from runners.fakes.text_replies import Call, Exchange, TextFake, parsed, pieces, sse


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: object) -> str:
    return "".join(b.get("text", "") for b in _blocks(content) if b.get("type") == "text")


class AnthropicFake(TextFake):
    """`async with AnthropicFake(script_for_benchmark(bench)) as fake:` → `fake.base_url`."""

    key_headers = ("x-api-key",)
    invalid = "invalid_request_error"

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/messages", self._messages)]

    @staticmethod
    def error(status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        ex = self.exchange(request)
        if not ex.auth_present:
            return self.refuse(ex, 401, "x-api-key header is required", "authentication_error")
        if (refused := await self.read_request(request, ex)) is not None:
            return refused
        body = ex.body
        choice = body.get("tool_choice") or {}
        text, calls = self.replies.answer(ex, one_at_a_time=bool(choice.get("disable_parallel_tool_use")))
        if not body.get("stream"):
            return web.json_response(self._message(ex, text, calls))
        return await self.stream(request, self._events(ex, text, calls))

    def read(self, ex: Exchange, body: dict[str, Any]) -> str | None:
        ex.model = str(body.get("model", ""))
        if not ex.model:
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        system = body.get("system")
        ex.system = system if isinstance(system, str) else _text(system)
        ex.tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        if messages[0].get("role") != "user":
            return "messages: first message must use the \"user\" role"
        open_calls: dict[str, str] = {}
        for i, m in enumerate(messages):
            role = m.get("role")
            if role not in ("user", "assistant"):
                return f"messages.{i}.role: Input should be 'user' or 'assistant'"
            blocks = _blocks(m.get("content"))
            answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
            if open_calls and set(open_calls) - answered:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                        f"{', '.join(sorted(set(open_calls) - answered))}")
            names, open_calls = open_calls, {}
            for b in blocks:
                kind = b.get("type")
                if kind == "text" and b.get("text"):
                    ex.turns.append({"role": role, "text": b["text"]})
                elif kind == "tool_use" and role == "assistant":
                    open_calls[str(b.get("id"))] = str(b.get("name"))
                    last = ex.turns[-1] if ex.turns else None
                    call = {"call_id": b.get("id"), "name": b.get("name"), "args": b.get("input")}
                    if last is not None and last["role"] == "assistant" and "calls" in last:
                        last["calls"].append(call)
                    else:
                        ex.turns.append({"role": "assistant", "calls": [call]})
                elif kind == "tool_result":
                    cid = b.get("tool_use_id")
                    if cid not in names:
                        return f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {cid}"
                    content = b.get("content")
                    ex.turns.append({"role": "tool", "call_id": cid, "name": names[cid],
                                     "result": parsed(content if isinstance(content, str) else _text(content))})
        if open_calls:
            return "the last assistant message's `tool_use` blocks have no `tool_result` after them"
        return None

    @staticmethod
    def _usage(ex: Exchange, text: str, calls: list[Call]) -> tuple[int, int]:
        prompt = len(json.dumps([ex.body.get("tools"), ex.body.get("messages")])) // 4 + len(ex.system) // 4 + 1
        return prompt, (len(text) + sum(len(json.dumps(c.args)) for c in calls)) // 4 + 1

    def _message(self, ex: Exchange, text: str, calls: list[Call]) -> dict[str, Any]:
        content = [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.args} for c in calls] or [
            {"type": "text", "text": text}]
        inp, out = self._usage(ex, text, calls)
        return {"id": f"msg_fake{ex.index:04d}", "type": "message", "role": "assistant", "model": ex.model,
                "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": inp, "output_tokens": out}}

    def _events(self, ex: Exchange, text: str, calls: list[Call]) -> list[bytes]:
        inp, out = self._usage(ex, text, calls)
        start = {**self._message(ex, text, calls), "content": [], "stop_reason": None,
                 "usage": {"input_tokens": inp, "output_tokens": 1}}
        frames = [sse({"type": "message_start", "message": start}, "message_start")]
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        for c in calls:
            args = json.dumps(c.args)
            half = len(args) // 2
            blocks.append(({"type": "tool_use", "id": c.call_id, "name": c.name, "input": {}},
                           [{"type": "input_json_delta", "partial_json": part} for part in (args[:half], args[half:])]))
        if not calls:
            blocks.append(({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(text)]))
        for i, (block, deltas) in enumerate(blocks):
            frames.append(sse({"type": "content_block_start", "index": i, "content_block": block}, "content_block_start"))
            frames += [sse({"type": "content_block_delta", "index": i, "delta": d}, "content_block_delta") for d in deltas]
            frames.append(sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
        frames.append(sse({"type": "message_delta", "delta": {"stop_reason": "tool_use" if calls else "end_turn",
                                                               "stop_sequence": None}, "usage": {"output_tokens": out}},
                          "message_delta"))
        frames.append(sse({"type": "message_stop"}, "message_stop"))
        return frames
