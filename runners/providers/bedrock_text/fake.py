"""A local Amazon Bedrock runtime (Converse) for the Bedrock text runner (`AWSBedrockLLMService`).

It speaks what botocore sends and reads, so the real client (aiobotocore, SigV4-signed) talks to
it through `endpoint_url`: `POST /model/{modelId}/converse-stream` (and `/converse`) with a
SigV4 `Authorization` for the `bedrock` service; `system: [{text}]`, `messages` of `user` /
`assistant` turns whose content blocks are `text`, `toolUse {toolUseId, name, input}` or
`toolResult {toolUseId, content: [{json}|{text}], status}`, `toolConfig.tools[].toolSpec`. A
streamed answer is AWS's binary event stream (`application/vnd.amazon.eventstream`: each message
a prelude with lengths and CRC32, headers `:message-type event`, `:event-type`, `:content-type
application/json`, the JSON payload and its CRC32): `messageStart`, per content block
`contentBlockStart` (a `toolUse`'s id and name) / `contentBlockDelta` (`text`, or a `toolUse`'s
`input` JSON in fragments) / `contentBlockStop`, `messageStop` (`stopReason` `tool_use` or
`end_turn`) and `metadata` (usage, latency). Errors are AWS's (`x-amzn-ErrorType` and
`{"message"}`): no signature (403 `UnrecognizedClientException`), a conversation that does not
start with the user or alternate roles, or `toolResult` blocks that do not answer the previous
turn's `toolUse` blocks (400 `ValidationException`).

What to answer is `text_replies`; every request is recorded as an `Exchange`.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from aiohttp import web

from runners.fakes.text_replies import Call, Exchange, TextFake, pieces

EVENT_STREAM = "application/vnd.amazon.eventstream"


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value  # 7: string


def event_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One event-stream message: prelude (total and header lengths, their CRC32), headers,
    payload, and the CRC32 of all that came before."""
    headers = (_header(":message-type", "event") + _header(":event-type", event_type)
               + _header(":content-type", "application/json"))
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return head + struct.pack(">I", zlib.crc32(head))


def _text(blocks: object) -> str:
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict)) if isinstance(blocks, list) else ""


class BedrockConverseFake(TextFake):
    """`async with BedrockConverseFake(script_for_benchmark(bench)) as fake:` → `fake.base_url`."""

    key_headers = ("authorization",)
    invalid = "ValidationException"

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/model/{model}/converse-stream", self._converse),
                web.post("/model/{model}/converse", self._converse)]

    @staticmethod
    def error(status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"message": message}, status=status, headers={"x-amzn-ErrorType": kind})

    async def _converse(self, request: web.Request) -> web.StreamResponse:
        ex = self.exchange(request)
        ex.model = request.match_info["model"]
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 ") or "/bedrock/aws4_request" not in auth:
            return self.refuse(ex, 403, "The security token included in the request is invalid.", "UnrecognizedClientException")
        if (refused := await self.read_request(request, ex)) is not None:
            return refused
        text, calls = self.replies.answer(ex)
        if not request.path.endswith("-stream"):
            return web.json_response(self._output(ex, text, calls))
        return await self.stream(request, self._events(ex, text, calls), EVENT_STREAM)

    def read(self, ex: Exchange, body: dict[str, Any]) -> str | None:
        ex.system = _text(body.get("system"))
        ex.tools = [str((t.get("toolSpec") or {}).get("name")) for t in (body.get("toolConfig") or {}).get("tools") or []
                    if isinstance(t, dict) and "toolSpec" in t]
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "The model returned the following errors: messages: at least one message is required"
        pending: dict[str, str] = {}
        for i, m in enumerate(messages):
            role = m.get("role")
            want = "user" if i % 2 == 0 else "assistant"
            if role != want:
                return "A conversation must start with a user message and alternate between user and assistant roles"
            blocks = [b for b in m.get("content") or [] if isinstance(b, dict)]
            results = [b["toolResult"] for b in blocks if "toolResult" in b]
            if pending and sorted(str(r.get("toolUseId")) for r in results) != sorted(pending):
                return (f"messages.{i}: the toolResult blocks do not match the toolUse blocks of the previous turn "
                        f"({', '.join(sorted(pending))})")
            for r in results:
                parts = r.get("content") or []
                result = next((p["json"] for p in parts if "json" in p), None)
                result = result if result is not None else _text(parts)
                ex.turns.append({"role": "tool", "call_id": r.get("toolUseId"), "name": pending.get(str(r.get("toolUseId"))),
                                 "result": result})
            text = _text(blocks)
            if text:
                ex.turns.append({"role": role, "text": text})
            uses = [b["toolUse"] for b in blocks if "toolUse" in b]
            if uses:
                ex.turns.append({"role": "assistant", "calls": [{"call_id": u.get("toolUseId"), "name": u.get("name"),
                                                                 "args": u.get("input")} for u in uses]})
            pending = {str(u.get("toolUseId")): str(u.get("name")) for u in uses}
        if pending:
            return "the last assistant turn's toolUse blocks have no toolResult after them"
        return None

    @staticmethod
    def _usage(ex: Exchange, text: str, calls: list[Call]) -> dict[str, int]:
        inp = len(json.dumps([ex.body.get(k) for k in ("system", "toolConfig", "messages")])) // 4 + 1  # the whole request is input
        out = (len(text) + sum(len(json.dumps(c.args)) for c in calls)) // 4 + 1
        return {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}

    def _output(self, ex: Exchange, text: str, calls: list[Call]) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"toolUse": {"toolUseId": c.call_id, "name": c.name, "input": c.args}} for c in calls] or [{"text": text}]
        return {"output": {"message": {"role": "assistant", "content": content}},
                "stopReason": "tool_use" if calls else "end_turn", "usage": self._usage(ex, text, calls),
                "metrics": {"latencyMs": 5}}

    def _events(self, ex: Exchange, text: str, calls: list[Call]) -> list[bytes]:
        frames = [event_message("messageStart", {"role": "assistant"})]
        for i, c in enumerate(calls):
            args = json.dumps(c.args)
            half = len(args) // 2
            frames.append(event_message("contentBlockStart", {"contentBlockIndex": i, "start": {
                "toolUse": {"toolUseId": c.call_id, "name": c.name}}}))
            frames += [event_message("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": part}}})
                       for part in (args[:half], args[half:])]
            frames.append(event_message("contentBlockStop", {"contentBlockIndex": i}))
        if not calls:
            frames += [event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in pieces(text)]
            frames.append(event_message("contentBlockStop", {"contentBlockIndex": 0}))
        frames.append(event_message("messageStop", {"stopReason": "tool_use" if calls else "end_turn"}))
        frames.append(event_message("metadata", {"usage": self._usage(ex, text, calls), "metrics": {"latencyMs": 5}}))
        return frames
