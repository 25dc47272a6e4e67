"""Loopback server speaking the OpenAI Chat Completions HTTP API (structured outputs, usage, errors)."""

from __future__ import annotations

import json
import time
from typing import Any

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, approx_tokens
from .judge_answers import all_pass

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_error"}


class FakeOpenAI(JudgeFake):
    """`keyless`: an OpenAI-compatible local server (Ollama, vLLM, llama.cpp) that asks for no key."""

    def __init__(self, answer: AnswerFn = all_pass, *, keyless: bool = False) -> None:
        super().__init__(answer)
        self.keyless = keyless

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def _error(self, status: int, message: str, code: str | None = None) -> tuple[int, dict[str, str], bytes]:
        body = {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "param": None, "code": code}}
        return status, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def handle(self, rec: Recorded, fault: Fault | None) -> tuple[int, dict[str, str], bytes]:
        if not rec.path.endswith("/v1/chat/completions"):
            return self._error(404, f"unknown path {rec.path}")
        if not self.keyless and not rec.headers.get("authorization", "").startswith("Bearer "):
            return self._error(401, "missing bearer token", "invalid_api_key")
        try:
            req = rec.json
        except ValueError:
            return self._error(400, "body is not JSON")
        rf = req.get("response_format") or {}
        if rf.get("type") != "json_schema" or "schema" not in (rf.get("json_schema") or {}):
            return self._error(400, "response_format json_schema required by this fake")
        if (injected := self.injected(fault)) is not None:
            return injected
        messages = req["messages"]
        prompt = "".join(f"<{m['role']}>{m['content']}" for m in messages)
        target = messages[-1]["content"]
        if fault is not None and fault.content is not None:
            content = fault.content
        else:
            content = json.dumps(self.scripted(target, fault))
        prompt_tokens = approx_tokens(prompt)
        cached = self.cache.cached_tokens(prompt)
        self._n += 1
        body = {
            "id": f"chatcmpl-fake{self._n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": approx_tokens(content),
                "total_tokens": prompt_tokens + approx_tokens(content),
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
            "system_fingerprint": "fp_fake",
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()
