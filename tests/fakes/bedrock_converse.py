"""Loopback server speaking the Bedrock runtime Converse JSON API (as boto3 sends it)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, approx_tokens
from .judge_answers import all_pass

_ERROR_CODES = {400: "ValidationException", 403: "AccessDeniedException", 429: "ThrottlingException",
                500: "InternalServerException", 503: "ServiceUnavailableException"}


class FakeBedrock(JudgeFake):
    def __init__(self, answer: AnswerFn = all_pass) -> None:
        super().__init__(answer)

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def converse_requests(self) -> list[tuple[str, dict[str, Any]]]:
        """(modelId, body) of each Converse call."""
        out = []
        for r in self.requests:
            parts = r.path.split("/")
            if len(parts) == 4 and parts[1] == "model" and parts[3] == "converse":
                out.append((unquote(parts[2]), r.json))
        return out

    def _error(self, status: int, message: str) -> tuple[int, dict[str, str], bytes]:
        code = _ERROR_CODES.get(status, "InternalServerException")
        return status, {"Content-Type": "application/json", "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/"}, \
            json.dumps({"message": message}).encode()

    def handle(self, rec: Recorded, fault: Fault | None) -> tuple[int, dict[str, str], bytes]:
        parts = rec.path.split("/")
        if not (len(parts) == 4 and parts[1] == "model" and parts[3] == "converse"):
            return self._error(400, f"unknown path {rec.path}")
        if not rec.headers.get("authorization", "").startswith("AWS4-HMAC-SHA256 "):
            return self._error(403, "request is not SigV4-signed")
        try:
            req = rec.json
        except ValueError:
            return self._error(400, "body is not JSON")
        blocks = [*req.get("system", []), *(b for m in req.get("messages", []) for b in m.get("content", []))]
        if any("text" in b and not b["text"].strip() for b in blocks):
            return self._error(400, "The text field in the ContentBlock object is blank. Add text to the text field, and try again.")
        tools = (req.get("toolConfig") or {}).get("tools") or []
        if not tools or "json" not in tools[0].get("toolSpec", {}).get("inputSchema", {}):
            return self._error(400, "toolConfig with a JSON input schema required by this fake")
        if (injected := self.injected(fault)) is not None:
            return injected
        tool_name = tools[0]["toolSpec"]["name"]
        system = "".join(b.get("text", "") for b in req.get("system", []))
        content = req["messages"][-1]["content"]
        user = "".join(b.get("text", "") for b in content)
        target = [b["text"] for b in content if "text" in b][-1]
        if fault is not None and fault.content is not None:
            block: dict[str, Any] = {"text": fault.content}
            stop = "end_turn"
        else:
            answer = self.scripted(target, fault)
            self._n += 1
            block = {"toolUse": {"toolUseId": f"tooluse_fake{self._n}", "name": tool_name, "input": answer}}
            stop = "tool_use"
        prompt = system + user
        total = approx_tokens(prompt)
        cached = self.cache.cached_tokens(prompt)
        out_tokens = approx_tokens(json.dumps(block))
        body = {
            "output": {"message": {"role": "assistant", "content": [block]}},
            "stopReason": stop,
            "usage": {
                "inputTokens": total - cached,
                "outputTokens": out_tokens,
                "totalTokens": total + out_tokens,
                "cacheReadInputTokens": cached,
                "cacheWriteInputTokens": 0,
            },
            "metrics": {"latencyMs": 5},
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()
