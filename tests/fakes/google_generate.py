"""Loopback server speaking the Gemini API's generateContent as `google-genai` uses it to judge:
`POST /v1beta/models/{model}:generateContent` with the key in `x-goog-api-key`, camelCase REST
fields (`systemInstruction`, `contents`, `generationConfig.responseMimeType/responseSchema`),
Google's error envelope (`{"error": {code, message, status, details}}`, a 429's RetryInfo) and
`usageMetadata` with implicit caching (`cachedContentTokenCount`: the longest prefix seen before).

What the real API refuses is refused: no key (403 PERMISSION_DENIED), no contents, a role other
than user/model, a response schema with a field its OpenAPI-subset `Schema` lacks (400
INVALID_ARGUMENT "Unknown name ...": `additionalProperties`, `$ref`, `const`; as any proto
message, a field may be spelled lowerCamel or snake_case) or a type that is no `Type`, and a schema without `responseMimeType: application/json`.
So are a `maxOutputTokens` over the model's cap and a prompt over its input limit (defaults: Gemini
2.5 Pro's 65,536 and 1,048,576). A reply longer than `maxOutputTokens` is cut there, `finishReason:
MAX_TOKENS`.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from .http_base import AnswerFn, Fault, JudgeFake, Recorded, Reply, approx_tokens, cut_to
from .judge_answers import all_pass

_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
           500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
_SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
                  "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
                  "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
# a proto message in JSON: each field by its lowerCamel name or its original snake_case one
_SCHEMA_FIELDS |= {re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), f) for f in _SCHEMA_FIELDS}
_TYPES = {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}


def schema_problem(schema: Any, where: str = "generation_config.response_schema") -> str | None:
    """The API's refusal of a response schema, or None."""
    if not isinstance(schema, dict):
        return None
    for key in schema:
        if key not in _SCHEMA_FIELDS:
            return f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
    if "type" in schema and str(schema["type"]).upper() not in _TYPES:
        return f"Invalid value at '{where}.type' ({schema['type']!r})"
    for name, sub in (schema.get("properties") or {}).items():
        if problem := schema_problem(sub, f"{where}.properties[{name}].value"):
            return problem
    for i, sub in enumerate(schema.get("anyOf") or []):
        if problem := schema_problem(sub, f"{where}.any_of[{i}]"):
            return problem
    return schema_problem(schema.get("items"), f"{where}.items")


class FakeGemini(JudgeFake):
    def __init__(self, answer: AnswerFn = all_pass, *, max_output: int = 65_536, context_window: int = 1_048_576) -> None:
        super().__init__(answer, max_output=max_output, context_window=context_window)  # the window: its input limit

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def generate_requests(self) -> list[tuple[str, dict[str, Any]]]:
        """(model, body) of each generateContent call."""
        out = []
        for r in self.requests:
            model, _, action = unquote(r.path.split("?")[0]).rpartition("/models/")[2].partition(":")
            if action == "generateContent":
                out.append((model, r.json))
        return out

    def _error(self, status: int, message: str, details: list[dict[str, Any]] | None = None) -> tuple[int, dict[str, str], bytes]:
        err: dict[str, Any] = {"code": status, "message": message, "status": _STATUS.get(status, "INTERNAL")}
        if details:
            err["details"] = details
        return status, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps({"error": err}).encode()

    def injected(self, fault: Fault | None) -> Reply | None:
        """Google says when to retry in the error's details (RetryInfo), not in a header: a fault's
        `retry-delay` header becomes that."""
        if fault is None or "retry-delay" not in fault.headers or fault.body is not None:
            return super().injected(fault)
        extra = dict(fault.headers)
        details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": extra.pop("retry-delay")}]
        status, headers, body = self._error(fault.status, f"injected {fault.status}", details)
        return status, {**headers, **extra}, body

    def _refusal(self, req: dict[str, Any]) -> str | None:
        contents = req.get("contents")
        if not isinstance(contents, list) or not contents:
            return "* GenerateContentRequest.contents: contents is not specified"
        for i, c in enumerate(contents):
            if c.get("role", "user") not in ("user", "model"):
                return f"* GenerateContentRequest.contents[{i}].role: Please use a valid role: user, model."
            if not c.get("parts"):
                return f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
        config = req.get("generationConfig") or {}
        if "responseSchema" in config:
            if config.get("responseMimeType") != "application/json":
                return "* GenerateContentRequest.generation_config.response_mime_type: must be application/json " \
                       "when response_schema is set"
            return schema_problem(config["responseSchema"])
        return None

    def handle(self, rec: Recorded, fault: Fault | None) -> tuple[int, dict[str, str], bytes]:
        path = unquote(rec.path.split("?")[0])
        model, _, action = path.rpartition("/models/")[2].partition(":")
        if "/models/" not in path or action != "generateContent":
            return self._error(404, f"unknown method {path}")
        if not rec.headers.get("x-goog-api-key"):
            return self._error(403, "Method doesn't allow unregistered callers (callers without established identity).")
        try:
            req = rec.json
        except ValueError:
            return self._error(400, "Invalid JSON payload received.")
        if (refused := self._refusal(req)) is not None:
            return self._error(400, refused)
        if "responseSchema" not in (req.get("generationConfig") or {}):
            return self._error(400, "a responseSchema is required by this fake")
        if (injected := self.injected(fault)) is not None:
            return injected
        system = "".join(p.get("text", "") for p in (req.get("systemInstruction") or {}).get("parts") or [])
        texts = [p.get("text", "") for c in req["contents"] for p in c.get("parts") or []]
        target = texts[-1]
        prompt = system + "".join(texts)
        total = approx_tokens(prompt)
        asked = (req.get("generationConfig") or {}).get("maxOutputTokens")
        if asked is not None and not 1 <= asked <= self.max_output:
            return self._error(400, f"Unable to submit request because it has a maxOutputTokens value of {asked} but the "
                                    f"supported range is from 1 (inclusive) to {self.max_output + 1} (exclusive). "
                                    f"Update the value and try again.")
        if total > self.context_window:
            return self._error(400, f"The input token count ({total}) exceeds the maximum number of tokens allowed "
                                    f"({self.context_window}).")
        if fault is not None and fault.content is not None:
            text = fault.content
        else:
            text = json.dumps(self.scripted(target, fault))
        text, cut = cut_to(text, asked or self.max_output)
        self.cuts += cut
        cached = self.cache.cached_tokens(prompt)
        self._n += 1
        out = approx_tokens(text)
        body = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "MAX_TOKENS" if cut else "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": total, "candidatesTokenCount": out, "totalTokenCount": total + out,
                              **({"cachedContentTokenCount": cached} if cached else {})},
            "modelVersion": model, "responseId": f"fake{self._n:04d}",
        }  # fmt: skip
        return 200, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(body).encode()
