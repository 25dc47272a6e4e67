"""Judge through the real `openai` client (Chat Completions with a strict json_schema)."""

from __future__ import annotations

import hashlib
import os

import httpx
import openai
from openai import AsyncOpenAI

from ..events import TokenUsage
from .backends import InvalidOutput, JudgeBackend, JudgeReply, JudgeRequest, PermanentError, TransientError, parse_output
from .schema import JUDGE_SCHEMA, SCHEMA_NAME

DEFAULT_OPENAI_MODEL = "gpt-5-mini"


class OpenAIJudge(JudgeBackend):
    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise PermanentError("OPENAI_API_KEY is not set (needed for --judge openai)")
        self.model = model
        self.name = f"openai:{model}"
        # max_retries=0: backends.judge_with_retries is the single retry policy.
        self.client = AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0)

    def messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": request.prefix},
            {"role": "user", "content": request.history},
            {"role": "user", "content": request.target},
        ]

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        try:
            resp = await self.client.chat.completions.create(
                model=self.model,
                messages=self.messages(request),  # type: ignore[arg-type]
                # same key for every turn of a benchmark: routes requests to the cache holding the prefix
                prompt_cache_key=cache_key(request.prefix),
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": JUDGE_SCHEMA},
                },
            )
        except (openai.APITimeoutError, openai.APIConnectionError) as e:
            raise TransientError(f"{type(e).__name__}: {_short(e)}") from e
        except openai.APIStatusError as e:
            if e.status_code in (408, 409, 429) or e.status_code >= 500:
                raise TransientError(f"HTTP {e.status_code}: {_short(e)}", _retry_after(e)) from e
            raise PermanentError(f"HTTP {e.status_code}: {_short(e)}") from e
        except (httpx.HTTPError, ValueError) as e:  # e.g. a body that is not JSON at all
            raise InvalidOutput(f"unreadable response: {_short(e)}") from e
        usage = TokenUsage()
        if resp.usage is not None:
            details = resp.usage.prompt_tokens_details
            usage = TokenUsage(
                input_tokens=resp.usage.prompt_tokens,
                cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                output_tokens=resp.usage.completion_tokens,
            )
        if not resp.choices:
            raise InvalidOutput("response has no choices")
        msg = resp.choices[0].message
        if getattr(msg, "refusal", None):
            raise InvalidOutput(f"judge refused: {msg.refusal}")
        return JudgeReply(parse_output(msg.content), usage)

    async def aclose(self) -> None:
        await self.client.close()


def _retry_after(e: openai.APIStatusError) -> float | None:
    raw = e.response.headers.get("retry-after") if e.response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own back-off


def cache_key(prefix: str) -> str:
    return "arena-judge-" + hashlib.sha256(prefix.encode()).hexdigest()[:16]


def _short(e: Exception) -> str:
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__
