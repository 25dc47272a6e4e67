"""Judge with Gemini through the real `google-genai` client (generateContent, JSON by schema).

Structure comes from `response_mime_type: application/json` and a `response_schema` (the request's
schema in Gemini's OpenAPI dialect: `provider_schema.for_gemini`). Gemini caches a repeated
prefix by itself (implicit caching, reported as `cachedContentTokenCount`): the prefix goes first,
as the system instruction, and stays byte-identical. The client's own retries are off
(`HttpRetryOptions(attempts=1)`). `maxOutputTokens` is sized from the turns asked (`budget`); a reply
cut at it (`finishReason: MAX_TOKENS`) is a permanent error.
"""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai.types import GenerateContentConfig, GenerateContentResponse, HttpOptions, HttpRetryOptions

from arena_tui.spine.events import TokenUsage
from .backends import (InvalidOutput, JudgeReply, JudgeRequest, KeyedJudge, PermanentError, TransientError, parse_output,
                       retry_after_seconds)
from ..store.scrub import endpoint_label
from .provider_schema import for_gemini
from .sdk_errors import short, status_error

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"


class GoogleJudge(KeyedJudge):
    kind = "google"

    def connect(self, key: str, base_url: str | None) -> None:
        url = base_url or DEFAULT_BASE_URL
        options = HttpOptions(base_url=url, timeout=int(self.timeout_s * 1000), retry_options=HttpRetryOptions(attempts=1))
        # vertexai=False: the Gemini API by key, whatever GOOGLE_GENAI_USE_VERTEXAI says
        self.client = genai.Client(api_key=key, vertexai=False, http_options=options)
        self.endpoint = endpoint_label(url)

    def request_args(self, request: JudgeRequest) -> dict[str, Any]:
        parts = [{"text": t} for t in (request.history, request.target) if t]
        return {
            "model": self.model,
            "contents": [{"role": "user", "parts": parts}],
            "config": GenerateContentConfig(
                system_instruction=request.prefix,
                response_mime_type="application/json",
                response_schema=for_gemini(request.schema),
                max_output_tokens=self.output_budget(request),  # sized from the turns asked (`budget`)
                # a whole run's reply takes minutes: the request's own timeout, where it has one
                http_options=HttpOptions(timeout=int(request.timeout_s * 1000)) if request.timeout_s else None,
            ),
        }

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        args = self.request_args(request)
        try:
            resp = await self.client.aio.models.generate_content(**args)
        except genai_errors.APIError as e:
            status = f" {e.status}" if e.status else ""  # Google's name for it: RESOURCE_EXHAUSTED, …
            text = f"HTTP {e.code}{status} from {self.endpoint}: {(e.message or short(e))[:200]}"
            raise status_error(int(e.code or 0), text, _retry_after(e)) from e
        except TimeoutError as e:  # the client's own per-request timeout (aiohttp's total)
            took = request.timeout_s or self.timeout_s
            raise TransientError(f"TimeoutError: no reply from {self.endpoint} within {took:g} s") from e
        except (aiohttp.ClientConnectionError, httpx2.TransportError) as e:
            raise TransientError(f"{type(e).__name__}: cannot reach {self.endpoint}") from e
        except json.JSONDecodeError as e:  # an HTML page, garbage
            raise InvalidOutput(f"judge reply from {self.endpoint} was not JSON ({e.msg} at char {e.pos})") from e
        except (aiohttp.ClientPayloadError, ValueError) as e:  # JSON, but not a response
            raise InvalidOutput(f"judge reply from {self.endpoint} was not a generateContent response "
                                f"({type(e).__name__}: {short(e)[:120]})") from e
        return JudgeReply(parse_output(self._text(resp, request, args["config"].max_output_tokens), request.output),
                          _usage(resp))

    def _text(self, resp: GenerateContentResponse, request: JudgeRequest, asked: int) -> str:
        feedback = resp.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            raise PermanentError(f"the judge prompt was blocked ({feedback.block_reason}) by {self.model}")
        if not resp.candidates:
            raise InvalidOutput(f"judge reply from {self.endpoint} has no candidates")
        cand = resp.candidates[0]
        parts = (cand.content.parts if cand.content is not None else None) or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        reason = str(getattr(cand.finish_reason, "value", cand.finish_reason) or "")
        if reason == "MAX_TOKENS":  # thinking counts in the budget too (`ModelLimits.thinking`)
            raise self.truncated(request, asked, "finishReason MAX_TOKENS")
        if not text:
            raise InvalidOutput(f"judge reply has no text (finishReason {reason or 'none'})")
        return text

    async def aclose(self) -> None:
        await self.client.aio.aclose()


def _usage(resp: GenerateContentResponse) -> TokenUsage:
    u = resp.usage_metadata
    if u is None:
        return TokenUsage()
    return TokenUsage(input_tokens=u.prompt_token_count or 0, cached_input_tokens=u.cached_content_token_count or 0,
                      output_tokens=(u.candidates_token_count or 0) + (u.thoughts_token_count or 0))


def _retry_after(e: genai_errors.APIError) -> float | None:
    """Google says when to come back in the error's RetryInfo (`retryDelay: "7s"`), some
    proxies in a Retry-After header."""
    details = e.details.get("error", e.details) if isinstance(e.details, dict) else {}
    for d in details.get("details") or [] if isinstance(details, dict) else []:
        if isinstance(d, dict) and d.get("@type") == _RETRY_INFO:
            m = re.fullmatch(r"\s*([0-9.]+)s\s*", str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    headers = getattr(e.response, "headers", None)
    return retry_after_seconds(headers.get("retry-after")) if headers is not None else None

