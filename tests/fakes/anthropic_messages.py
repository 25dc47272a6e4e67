"""Loopback server speaking the Anthropic Messages API as the `anthropic` client uses it to judge:
`POST /v1/messages` with `x-api-key` and `anthropic-version`, a forced strict tool, prompt-cache
breakpoints, Anthropic's error envelope and its usage (cache reads and writes apart).

What the real API refuses is refused: no key (401), no version header, no `max_tokens`, an empty
text block, more than 4 cache breakpoints, a strict tool whose objects are not closed
(`additionalProperties: false`) or that uses a keyword strict mode lacks, a `tool_choice` naming no
tool. Caching is Anthropic's: only prefixes ending at a `cache_control` block are written (from
`min_cache_tokens`), a later request reads the longest one it starts with, writes the rest up to
its last breakpoint, and pays full price after it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, approx_tokens, cut_to
from .judge_answers import all_pass

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}
_STRICT_UNSUPPORTED = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
                       "maxLength", "maxItems"}


def strict_problem(schema: Any, where: str = "input_schema") -> str | None:
    """Why strict tool use refuses this schema, or None."""
    if not isinstance(schema, dict):
        return None
    if bad := _STRICT_UNSUPPORTED & schema.keys():
        return f"{where}: '{sorted(bad)[0]}' is not supported with strict tools"
    if isinstance(schema.get("minItems"), int) and schema["minItems"] > 1:
        return f"{where}: minItems above 1 is not supported with strict tools"
    is_object = schema.get("type") == "object" or "properties" in schema
    if is_object and schema.get("additionalProperties") is not False:
        return f"{where}: For 'object' type, 'additionalProperties' must be explicitly set to false"
    for name, sub in (schema.get("properties") or {}).items():
        if problem := strict_problem(sub, f"{where}.properties.{name}"):
            return problem
    return strict_problem(schema.get("items"), f"{where}.items")


class FakeAnthropic(JudgeFake):
    def __init__(self, answer: AnswerFn = all_pass, *, min_cache_tokens: int = 1024, max_output: int = 64_000,
                 context_window: int = 200_000) -> None:
        super().__init__(answer, max_output=max_output, context_window=context_window)
        self.min_cache_tokens = min_cache_tokens
        self.written: set[str] = set()  # hashes of the prefixes in the cache (its own rule, not `cache`)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    def _error(self, status: int, message: str) -> tuple[int, dict[str, str], bytes]:
        body = {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
                "request_id": f"req_fake{len(self.requests)}"}
        return status, {"Content-Type": "application/json", "request-id": body["request_id"]}, json.dumps(body).encode()

    def _refusal(self, rec: Recorded) -> str | None:
        if not rec.headers.get("anthropic-version"):
            return "anthropic-version: header is required"
        req = rec.json
        if not req.get("model"):
            return "model: Field required"
        if not isinstance(req.get("max_tokens"), int):
            return "max_tokens: Field required"
        messages = req.get("messages") or []
        if not messages or messages[0].get("role") != "user":
            return "messages: first message must use the \"user\" role"
        blocks = [*self._blocks(req.get("system"))] + [b for m in messages for b in self._blocks(m.get("content"))]
        if any(b.get("type") == "text" and not b.get("text") for b in blocks):
            return "messages: text content blocks must be non-empty"
        tools = req.get("tools") or []
        if sum("cache_control" in b for b in [*blocks, *tools]) > 4:
            return "A maximum of 4 blocks with cache_control may be provided."
        for i, tool in enumerate(tools):
            schema = tool.get("input_schema") or {}
            if schema.get("type") != "object":
                return f"tools.{i}.input_schema.type: Input should be 'object'"
            if tool.get("strict") and (problem := strict_problem(schema, f"tools.{i}.input_schema")):
                return problem
        choice = req.get("tool_choice") or {}
        if choice.get("type") == "tool" and choice.get("name") not in {t.get("name") for t in tools}:
            return f"tool_choice: no tool named {choice.get('name')!r}"
        return None

    @staticmethod
    def _blocks(content: Any) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return [b for b in content or [] if isinstance(b, dict)]

    def _pieces(self, req: dict[str, Any]) -> list[tuple[str, bool]]:
        """The prompt in Anthropic's caching order (tools, system, messages), each piece with whether it is a breakpoint."""
        pieces: list[tuple[str, bool]] = [(json.dumps(t, sort_keys=True), "cache_control" in t) for t in req.get("tools") or []]
        pieces += [(b.get("text", ""), "cache_control" in b) for b in self._blocks(req.get("system"))]
        for m in req["messages"]:
            pieces += [(json.dumps(b, sort_keys=True) if b.get("type") != "text" else b["text"], "cache_control" in b)
                       for b in self._blocks(m.get("content"))]
        return pieces

    def _limit_refusal(self, req: dict[str, Any]) -> str | None:
        asked, prompt = req["max_tokens"], approx_tokens("".join(t for t, _ in self._pieces(req)))
        if asked > self.max_output:
            return (f"max_tokens: {asked} > {self.max_output}, which is the maximum allowed number of output tokens "
                    f"for {req['model']}")
        if prompt > self.context_window:
            return f"prompt is too long: {prompt} tokens > {self.context_window} maximum"
        if prompt + asked > self.context_window:
            return (f"input length and `max_tokens` exceed context limit: {prompt} + {asked} > {self.context_window}, "
                    f"decrease input length or `max_tokens` and try again")
        return None

    def _usage(self, req: dict[str, Any]) -> tuple[int, int, int]:
        """(uncached input, cache read, cache written) by Anthropic's breakpoint rule."""
        prefix, marks = "", []
        for text, mark in self._pieces(req):
            prefix += text
            if mark and approx_tokens(prefix) >= self.min_cache_tokens:
                marks.append(prefix)
        total = approx_tokens(prefix)
        key = lambda p: hashlib.sha256(p.encode()).hexdigest()  # noqa: E731
        read = max((approx_tokens(p) for p in marks if key(p) in self.written), default=0)
        written = approx_tokens(marks[-1]) - read if marks else 0
        self.written |= {key(p) for p in marks}
        return total - read - written, read, written

    def handle(self, rec: Recorded, fault: Fault | None) -> tuple[int, dict[str, str], bytes]:
        if rec.path.split("?")[0] != "/v1/messages":
            return self._error(404, f"unknown path {rec.path}")
        if not rec.headers.get("x-api-key"):
            return self._error(401, "x-api-key header is required")
        try:
            req = rec.json
        except ValueError:
            return self._error(400, "body is not JSON")
        if (refused := self._refusal(rec) or self._limit_refusal(req)) is not None:
            return self._error(400, refused)
        choice = req.get("tool_choice") or {}
        if choice.get("type") != "tool":
            return self._error(400, "a tool_choice forcing one tool is required by this fake")
        if (injected := self.injected(fault)) is not None:
            return injected
        target = [b["text"] for b in self._blocks(req["messages"][-1]["content"]) if b.get("type") == "text"][-1]
        self._n += 1
        if fault is not None and fault.content is not None:
            block: dict[str, Any] = {"type": "text", "text": fault.content}
            stop = "end_turn"
        else:
            answer = self.scripted(target, fault)
            _, cut = cut_to(json.dumps(answer), req["max_tokens"])
            self.cuts += cut
            block = {"type": "tool_use", "id": f"toolu_fake{self._n:04d}", "name": choice["name"], "input": {} if cut else answer}
            stop = "max_tokens" if cut else "tool_use"
        uncached, read, written = self._usage(req)
        body = {
            "id": f"msg_fake{self._n:04d}", "type": "message", "role": "assistant", "model": req["model"],
            "content": [block], "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": uncached, "cache_creation_input_tokens": written, "cache_read_input_tokens": read,
                      "output_tokens": req["max_tokens"] if stop == "max_tokens" else approx_tokens(json.dumps(block))},
        }  # fmt: skip
        return 200, {"Content-Type": "application/json", "request-id": f"req_fake{self._n}"}, json.dumps(body).encode()
