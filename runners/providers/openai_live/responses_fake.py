"""A local OpenAI Responses API server: the backend model `gpt-live-1` delegates to.

With Responses delegation the Live API runs the backend itself (OpenAI-hosted): the live
session's `delegation.responses` config (model, instructions, tools, tool_choice, reasoning …)
goes to the Responses API, and its lifecycle events come back to the client wrapped in
`response.event` envelopes. The live fake (`fake.py`) plays OpenAI's part in between:
it asks this server, as the hosted backend would be asked, over its real wire:
`POST /v1/responses` with `stream: true`, answered as named server-sent events
(`response.created`, `response.in_progress`, per output item `response.output_item.added`,
`response.function_call_arguments.delta/done` or `response.content_part.added`,
`response.output_text.delta/done`, `response.content_part.done`, then
`response.output_item.done`, and `response.completed` with usage). A follow-up names its
`previous_response_id` and carries the `function_call_output` items; what the API refuses is
refused (400): an unknown previous response, a call of it left without its output, an output
for no call of it, a request without `model` or `input`.

What to answer is `text_replies` (the script by the last user text: all of the turn's calls in
one response, parallel, then its text once their outputs are in); every request is an `Exchange`.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any, Unpack

from aiohttp import web

from runners.fakes.script import Script
from runners.fakes.server import ServerOptions
from runners.fakes.text_replies import Call, Exchange, TextFake, parsed, pieces, sse
from runners.fakes.usage import call_tokens, text_tokens

PATH = "/v1/responses"


def _text(content: object) -> str:
    """A Responses message's text: a string, or its `input_text` / `output_text` parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(p.get("text", "") for p in content if isinstance(p, dict) and "text" in p)


class ResponsesFake(TextFake):
    """`async with ResponsesFake(script_for_benchmark(bench)) as fake:` → `fake.base_url` (…/v1)."""

    key_headers = ("authorization",)
    invalid = "invalid_request_error"

    def __init__(self, script: Script | None = None, **options: Unpack[ServerOptions]) -> None:
        super().__init__(script, **options)
        #: response id → (the conversation it ends: the Exchange's turns with its own output, its open calls)
        self.stored: dict[str, tuple[list[dict[str, Any]], dict[str, str]]] = {}
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}/v1"

    def routes(self) -> list[web.RouteDef]:
        return [web.post(PATH, self._responses)]

    @staticmethod
    def error(status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": None}}, status=status)

    def read(self, ex: Exchange, body: dict[str, Any]) -> str | None:
        ex.model = str(body.get("model", ""))
        if not ex.model:
            return "Missing required parameter: 'model'."
        ex.system = str(body.get("instructions") or "")
        ex.tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list) or not items:
            return "Missing required parameter: 'input'."
        open_calls: dict[str, str] = {}
        previous = body.get("previous_response_id")
        if previous is not None:
            if previous not in self.stored:
                return f"Previous response with id '{previous}' not found."
            turns, open_calls = self.stored[previous]
            ex.turns = [dict(t) for t in turns]
            open_calls = dict(open_calls)
        for i, item in enumerate(items):
            kind = item.get("type", "message")
            if kind == "message":
                role = item.get("role")
                if role not in ("user", "assistant", "developer", "system"):
                    return f"Invalid value: '{role}'. Supported values are: 'user', 'assistant', 'system' and 'developer'. (input[{i}].role)"
                if role in ("user", "assistant"):
                    ex.turns.append({"role": role, "text": _text(item.get("content"))})
            elif kind == "function_call_output":
                cid = item.get("call_id")
                if cid not in open_calls:
                    return f"No tool call found for function call output with call_id {cid}."
                ex.turns.append({"role": "tool", "call_id": cid, "name": open_calls.pop(cid), "result": parsed(item.get("output"))})
            else:
                return f"Invalid value: '{kind}'. (input[{i}].type)"
        if open_calls:
            return f"No tool output found for function call {sorted(open_calls)[0]}."
        return None

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        ex = self.exchange(request)
        if not ex.auth_present:
            return self.refuse(ex, 401, "You didn't provide an API key.", "invalid_request_error")
        if (refused := await self.read_request(request, ex)) is not None:
            return refused
        text, calls = self.replies.answer(ex)
        rid = f"resp_fake{next(self._ids):04d}"
        made = {c.call_id: c.name for c in calls}
        self.stored[rid] = ([*ex.turns, *([{"role": "assistant", "calls": [c.model_dump() for c in calls]}] if calls else
                                          [{"role": "assistant", "text": text}])], made)
        if not ex.body.get("stream"):
            return web.json_response(self._response(rid, ex, "completed", self._output(text, calls), text, calls))
        return await self.stream(request, self._events(rid, ex, text, calls))

    def _usage(self, ex: Exchange, text: str, calls: list[Call]) -> dict[str, Any]:
        """A completed response's usage as the Responses API reports it (`runners/fakes/usage.py`'s counts):
        the instructions and the conversation in, the text and calls out."""
        prompt = text_tokens(ex.system, *(json.dumps(t) for t in ex.turns))
        out = text_tokens(text) + call_tokens(calls)
        return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + out}

    def _response(self, rid: str, ex: Exchange, status: str, output: list[dict[str, Any]], text: str = "",
                  calls: list[Call] | None = None) -> dict[str, Any]:
        r = {"id": rid, "object": "response", "created_at": int(time.time()), "status": status, "model": ex.model,
             "output": output, "previous_response_id": ex.body.get("previous_response_id"),
             "instructions": ex.body.get("instructions"), "tools": ex.body.get("tools") or [], "usage": None}
        if status == "completed":
            r["usage"] = self._usage(ex, text, calls or [])
        return r

    @staticmethod
    def _output(text: str, calls: list[Call]) -> list[dict[str, Any]]:
        if calls:
            return [{"id": f"fc_{c.call_id}", "type": "function_call", "status": "completed", "call_id": c.call_id,
                     "name": c.name, "arguments": json.dumps(c.args)} for c in calls]
        return [{"id": "msg_fake", "type": "message", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}]

    def _events(self, rid: str, ex: Exchange, text: str, calls: list[Call]) -> list[bytes]:
        seq = itertools.count()
        out: list[bytes] = []

        def emit(kind: str, **fields: object) -> None:
            out.append(sse({"type": kind, "sequence_number": next(seq), **fields}, kind))

        emit("response.created", response=self._response(rid, ex, "in_progress", []))
        emit("response.in_progress", response=self._response(rid, ex, "in_progress", []))
        output = self._output(text, calls)
        for i, item in enumerate(output):
            if item["type"] == "function_call":
                emit("response.output_item.added", output_index=i, item={**item, "status": "in_progress", "arguments": ""})
                args = item["arguments"]
                for part in (args[: len(args) // 2], args[len(args) // 2:]):
                    emit("response.function_call_arguments.delta", item_id=item["id"], output_index=i, delta=part)
                emit("response.function_call_arguments.done", item_id=item["id"], output_index=i, arguments=args)
            else:
                emit("response.output_item.added", output_index=i, item={**item, "status": "in_progress", "content": []})
                part = {"type": "output_text", "text": "", "annotations": []}
                emit("response.content_part.added", item_id=item["id"], output_index=i, content_index=0, part=part)
                for piece in pieces(text):
                    emit("response.output_text.delta", item_id=item["id"], output_index=i, content_index=0, delta=piece)
                emit("response.output_text.done", item_id=item["id"], output_index=i, content_index=0, text=text)
                emit("response.content_part.done", item_id=item["id"], output_index=i, content_index=0,
                     part={**part, "text": text})
            emit("response.output_item.done", output_index=i, item=item)
        emit("response.completed", response=self._response(rid, ex, "completed", output, text, calls))
        return out
