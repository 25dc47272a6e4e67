"""Loopback server speaking the OpenAI Chat Completions HTTP API (structured outputs, usage, errors).

Its model's limits are OpenAI's rule (defaults: gpt-5.2's 128,000 output tokens in a 400,000-token
window): `max_completion_tokens` (or the older `max_tokens`, what local servers read) over the cap is
refused (400 `invalid_value`), a prompt and output over the window too (400
`context_length_exceeded`, as vLLM also answers); a reply longer than asked for is cut there with
`finish_reason: length`."""

from __future__ import annotations

import json
import time
from typing import Any

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, approx_tokens, cut_to
from .judge_answers import all_pass

_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "rate_limit_error"}


class FakeOpenAI(JudgeFake):
    """`keyless`: an OpenAI-compatible local server (Ollama, vLLM, llama.cpp) that asks for no key."""

    def __init__(self, answer: AnswerFn = all_pass, *, keyless: bool = False, max_output: int = 128_000,
                 context_window: int = 400_000) -> None:
        super().__init__(answer, max_output=max_output, context_window=context_window)
        self.keyless = keyless

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    def _error(self, status: int, message: str, code: str | None = None,
               param: str | None = None) -> tuple[int, dict[str, str], bytes]:
        body = {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "param": param, "code": code}}
        return status, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def _limit_refusal(self, req: dict[str, Any], prompt_tokens: int) -> tuple[int, dict[str, str], bytes] | None:
        field = "max_completion_tokens" if req.get("max_completion_tokens") is not None else "max_tokens"
        asked = req.get(field)
        if asked is not None and asked > self.max_output:
            return self._error(400, f"{field} is too large: {asked}. This model supports at most {self.max_output} "
                                    f"completion tokens, whereas you provided {asked}.", "invalid_value", field)
        if prompt_tokens + (asked or 0) > self.context_window:
            return self._error(400, f"This model's maximum context length is {self.context_window} tokens. However, you "
                                    f"requested {prompt_tokens + (asked or 0)} tokens ({prompt_tokens} in the messages, "
                                    f"{asked or 0} in the completion). Please reduce the length of the messages or "
                                    f"completion.", "context_length_exceeded", "messages")
        return None

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
        prompt_tokens = approx_tokens(prompt)
        if (refused := self._limit_refusal(req, prompt_tokens)) is not None:
            return refused
        target = messages[-1]["content"]
        if fault is not None and fault.content is not None:
            content = fault.content
        else:
            content = json.dumps(self.scripted(target, fault))
        asked = req.get("max_completion_tokens") or req.get("max_tokens")
        content, cut = cut_to(content, asked or min(self.max_output, self.context_window - prompt_tokens))
        self.cuts += cut
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
                    "finish_reason": "length" if cut else "stop",
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
