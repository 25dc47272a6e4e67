"""Loopback server speaking the Bedrock runtime Converse JSON API (as boto3 sends it).

Its model's limits are Bedrock's for Claude (defaults: Claude Sonnet 4.5's 64,000 output tokens in a
200,000-token window; a request without `maxTokens` gets 4,096): `maxTokens` over the cap and a prompt
and `maxTokens` over the window are refused (400 ValidationException); a reply longer than
`maxTokens` is cut there, `stopReason: max_tokens`, its tool input unfinished (empty)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, approx_tokens, cut_to
from .judge_answers import all_pass

_ERROR_CODES = {400: "ValidationException", 403: "AccessDeniedException", 429: "ThrottlingException",
                500: "InternalServerException", 503: "ServiceUnavailableException"}


DEFAULT_MAX_TOKENS = 4_096  # what a Converse request without inferenceConfig.maxTokens may write


class FakeBedrock(JudgeFake):
    def __init__(self, answer: AnswerFn = all_pass, *, max_output: int = 64_000, context_window: int = 200_000) -> None:
        super().__init__(answer, max_output=max_output, context_window=context_window)

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
        prompt = system + user
        total = approx_tokens(prompt)
        asked = (req.get("inferenceConfig") or {}).get("maxTokens")
        if asked is not None and asked > self.max_output:
            return self._error(400, f"The maximum tokens you requested exceeds the model limit of {self.max_output}. "
                                    f"Try again with a maximum tokens value that is lower than {self.max_output}.")
        asked = asked or DEFAULT_MAX_TOKENS
        if total + asked > self.context_window:
            return self._error(400, f"input length and `max_tokens` exceed context limit: {total} + {asked} > "
                                    f"{self.context_window}, decrease input length or `max_tokens` and try again")
        if fault is not None and fault.content is not None:
            block: dict[str, Any] = {"text": fault.content}
            stop = "end_turn"
        else:
            answer = self.scripted(target, fault)
            _, cut = cut_to(json.dumps(answer), asked)
            self.cuts += cut
            self._n += 1
            block = {"toolUse": {"toolUseId": f"tooluse_fake{self._n}", "name": tool_name, "input": {} if cut else answer}}
            stop = "max_tokens" if cut else "tool_use"
        cached = self.cache.cached_tokens(prompt)
        out_tokens = asked if stop == "max_tokens" else approx_tokens(json.dumps(block))
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
