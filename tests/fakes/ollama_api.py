"""Loopback server speaking Ollama as a local judge meets it: its own API (`GET /api/version`,
`POST /api/show`, `POST /api/chat` with `format` and `options`) and its OpenAI-compatible
`POST /v1/chat/completions`, no key on either.

Its context window is Ollama's rule: a request's `options.num_ctx`, else the server's default
(`default_ctx`, 4,096 as Ollama gives a machine with little memory); the OpenAI-compatible endpoint
has no way to set it. A prompt longer than the window is not refused: its start is dropped, as
Ollama does (its log says "truncating input prompt"), and the model answers what is left (`seen`).
A reply longer than `num_predict` (`max_tokens` on /v1) is cut there: `done_reason: length`
(`finish_reason: length` on /v1).
"""

from __future__ import annotations

import json
import time
from typing import Any

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, Reply, approx_tokens, cut_to
from .judge_answers import all_pass

VERSION = "0.12.6"


class FakeOllama(JudgeFake):
    def __init__(self, answer: AnswerFn = all_pass, *, default_ctx: int = 4_096, trained_ctx: int = 131_072,
                 arch: str = "llama") -> None:
        super().__init__(answer, max_output=trained_ctx, context_window=trained_ctx)
        self.default_ctx, self.arch = default_ctx, arch
        self.seen: list[str] = []  # each prompt as the model got it, after the window cut its start

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"  # as `local:` models and `--judge local` are given it

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the native /api/chat requests."""
        return [r.json for r in self.requests if r.path == "/api/chat"]

    @property
    def compat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the OpenAI-compatible /v1/chat/completions requests."""
        return [r.json for r in self.requests if r.path == "/v1/chat/completions"]

    def takes_fault(self, rec: Recorded) -> bool:
        return rec.path in ("/api/chat", "/v1/chat/completions")

    def handle_get(self, rec: Recorded) -> Reply:
        if rec.path == "/api/version":
            return 200, {"Content-Type": "application/json"}, json.dumps({"version": VERSION}).encode()
        return 404, {"Content-Type": "text/plain"}, b"404 page not found"

    def _error(self, status: int, message: str) -> Reply:
        return status, {"Content-Type": "application/json"}, json.dumps({"error": message}).encode()

    def handle(self, rec: Recorded, fault: Fault | None) -> Reply:
        try:
            req = rec.json
        except ValueError:
            return self._error(400, "invalid character in request body")
        if rec.path == "/api/show":
            info = {"general.architecture": self.arch, f"{self.arch}.context_length": self.context_window}
            return 200, {"Content-Type": "application/json"}, json.dumps({"model_info": info, "parameters": ""}).encode()
        if rec.path not in ("/api/chat", "/v1/chat/completions"):
            return self._error(404, f"unknown path {rec.path}")
        if (injected := self.injected(fault)) is not None:
            return injected
        native = rec.path == "/api/chat"
        if native and req.get("stream", True):
            return self._error(400, "this fake answers stream: false only")
        options = (req.get("options") or {}) if native else {}  # /v1 has no options: its window is the default
        num_ctx = min(int(options.get("num_ctx") or self.default_ctx), self.context_window)
        num_predict = int(options.get("num_predict") or -1) if native else int(req.get("max_tokens") or -1)
        messages = req.get("messages") or []
        prompt = "".join(f"<{m['role']}>{m['content']}" for m in messages)
        seen = prompt[-num_ctx * 4:] if approx_tokens(prompt) > num_ctx else prompt  # the start is dropped
        self.seen.append(seen)
        target = messages[-1]["content"] if messages else ""
        text = fault.content if fault is not None and fault.content is not None else json.dumps(self.scripted(target, fault))
        room = num_ctx - approx_tokens(seen)
        text, cut = cut_to(text, min(num_predict, room) if num_predict > 0 else max(1, room))
        self.cuts += cut
        prompt_n, out_n = approx_tokens(seen), approx_tokens(text)
        self._n += 1
        reason = "length" if cut else "stop"
        if native:
            body: dict[str, Any] = {
                "model": req.get("model"), "created_at": "2025-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": text}, "done": True, "done_reason": reason,
                "total_duration": 1_000_000, "prompt_eval_count": prompt_n, "eval_count": out_n,
            }  # fmt: skip
        else:
            body = {
                "id": f"chatcmpl-{self._n}", "object": "chat.completion", "created": int(time.time()),
                "model": req.get("model"), "system_fingerprint": "fp_ollama",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": reason}],
                "usage": {"prompt_tokens": prompt_n, "completion_tokens": out_n, "total_tokens": prompt_n + out_n},
            }  # fmt: skip
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()
