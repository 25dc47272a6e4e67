"""A local Gemini API (generateContent) server for the Gemini text runner (`GoogleLLMService`).

It speaks what `google-genai` sends over REST: `POST /v1beta/models/{model}:streamGenerateContent`
(`?alt=sse`) and `:generateContent`, the key in `x-goog-api-key`; `contents` of `user` / `model`
turns whose parts are `text`, `functionCall {name, args}` or `functionResponse {name, response,
id}`; `systemInstruction.parts[].text`; `tools[].functionDeclarations[]`. A streamed answer is
server-sent `GenerateContentResponse` chunks (`candidates[0].content.parts`, the last with
`finishReason: STOP` and `usageMetadata`); several calls are several `functionCall` parts of one
model turn (no ids: Pipecat makes them, and the `functionResponse` parts carry them back).
Errors use Google's envelope (`{"error": {code, message, status}}`), and what the API refuses
is refused: no key (403), no contents, a role other than user/model, and a function-call turn
not answered by as many `functionResponse` parts in the next turn (400 INVALID_ARGUMENT).

What to answer is `text_replies`; every request is recorded as an `Exchange`.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from runners.fakes.text_replies import Call, Exchange, TextFake, pieces, sse

ACTIONS = ("streamGenerateContent", "generateContent")


def _text(parts: object) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict) and not p.get("thought"))


class GeminiTextFake(TextFake):
    """`async with GeminiTextFake(script_for_benchmark(bench)) as fake:` → `fake.base_url`."""

    key_headers = ("x-goog-api-key",)
    invalid = "INVALID_ARGUMENT"

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/{version}/models/{target}", self._generate)]

    @staticmethod
    def error(status: int, kind: str, message: str) -> web.Response:
        return web.json_response({"error": {"code": status, "message": message, "status": kind}}, status=status)

    async def _generate(self, request: web.Request) -> web.StreamResponse:
        model, _, action = request.match_info["target"].partition(":")
        ex = self.exchange(request)
        ex.model = model
        if action not in ACTIONS:
            return self.refuse(ex, 404, f"unknown method {action!r}", "NOT_FOUND")
        if not ex.auth_present and not request.query.get("key"):
            return self.refuse(ex, 403, "Method doesn't allow unregistered callers", "PERMISSION_DENIED")
        if (refused := await self.read_request(request, ex)) is not None:
            return refused
        text, calls = self.replies.answer(ex)
        if action == "generateContent":
            return web.json_response(self._response(ex, self._parts(text, calls), final=True))
        chunks = [self._parts("", calls)] if calls else [[{"text": p}] for p in pieces(text)]
        frames = [sse(self._response(ex, parts, final=i == len(chunks) - 1)) for i, parts in enumerate(chunks)]
        return await self.stream(request, frames)

    def read(self, ex: Exchange, body: dict[str, Any]) -> str | None:
        system = body.get("systemInstruction") or {}
        ex.system = _text(system.get("parts")) if isinstance(system, dict) else str(system)
        ex.tools = [str(d.get("name")) for t in body.get("tools") or [] for d in (t.get("functionDeclarations") or [])]
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        pending: list[dict[str, Any]] = []  # the last model turn's function calls, to be answered next
        for i, c in enumerate(contents):
            role = c.get("role", "user")
            if role not in ("user", "model"):
                return f"* GenerateContentRequest.contents[{i}].role: Please use a valid role: user, model."
            parts = [p for p in c.get("parts") or [] if isinstance(p, dict)]
            responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
            if pending and len(responses) != len(pending):
                return ("Please ensure that the number of function response parts is equal to the number of function "
                        "call parts of the function call turn.")
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            for r in responses:
                result = r.get("response")
                ex.turns.append({"role": "tool", "call_id": r.get("id"), "name": r.get("name"), "result": result})
            text = _text(parts)
            if text:
                ex.turns.append({"role": "user" if role == "user" else "assistant", "text": text})
            if calls:
                ex.turns.append({"role": "assistant", "calls": [{"call_id": f.get("id"), "name": f.get("name"),
                                                                 "args": f.get("args")} for f in calls]})
            pending = calls if role == "model" else []
        if pending:
            return "the last model turn's function calls have no functionResponse after them"
        return None

    @staticmethod
    def _parts(text: str, calls: list[Call]) -> list[dict[str, Any]]:
        return [{"functionCall": {"name": c.name, "args": c.args}} for c in calls] or [{"text": text}]

    def _response(self, ex: Exchange, parts: list[dict[str, Any]], *, final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": ex.model, "responseId": f"fake{ex.index:04d}"}
        if final:
            candidate["finishReason"] = "STOP"
            # the whole request is input: its instruction and tool declarations too
            prompt = len(json.dumps([ex.body.get(k) for k in ("systemInstruction", "tools", "contents")])) // 4 + 1
            produced = len(json.dumps(parts)) // 4 + 1
            out["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": produced,
                                    "totalTokenCount": prompt + produced}
        return out
