"""Judge through the real `openai` client (Chat Completions with a strict json_schema)."""

from __future__ import annotations

import hashlib
import os
from typing import Any

import httpx
import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from arena_tui.spine.events import TokenUsage
from .backends import (
    InvalidOutput,
    JudgeBackend,
    JudgeReply,
    JudgeRequest,
    PermanentError,
    TransientError,
    parse_output,
    retry_after_seconds,
)
from ..store.scrub import endpoint_label
from .limits import request_timeout

DEFAULT_OPENAI_MODEL = "gpt-5-mini"


class OpenAIJudge(JudgeBackend):
    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float | None = None,  # default: request_timeout()
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise PermanentError("OPENAI_API_KEY is not set (needed for --judge openai)")
        self.model = model
        self.name = f"openai:{model}"
        self.timeout_s = timeout_s if timeout_s is not None else request_timeout()
        # max_retries=0: backends.judge_with_retries is the single retry policy.
        self.client = AsyncOpenAI(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        self.endpoint = endpoint_label(self.client.base_url)

    def messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": request.prefix},
            {"role": "user", "content": request.history},
            {"role": "user", "content": request.target},
        ]

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        try:
            raw = await self.client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=self.messages(request),
                # same key for every turn of a benchmark: routes requests to the cache holding the prefix
                prompt_cache_key=cache_key(request.prefix),
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name, "strict": True, "schema": request.schema},
                },
                timeout=request.timeout_s or self.timeout_s,  # a whole run's reply takes minutes
            )
        except openai.APITimeoutError as e:
            took = request.timeout_s or self.timeout_s
            raise TransientError(f"APITimeoutError: no reply from {self.endpoint} within {took:g} s") from e
        except openai.APIConnectionError as e:
            raise TransientError(f"APIConnectionError: cannot reach {self.endpoint}: {_cause(e)}") from e
        except openai.APIStatusError as e:
            text = f"HTTP {e.status_code} from {self.endpoint}: {_short(e)}"
            if e.status_code in (408, 409, 429) or e.status_code >= 500:
                raise TransientError(text, retry_after_seconds(e.response.headers.get("retry-after"))) from e
            raise PermanentError(text) from e
        except httpx.HTTPError as e:  # e.g. the body broke off while being read
            raise TransientError(f"{type(e).__name__} reading the reply from {self.endpoint}: {_short(e)}") from e
        resp = self._parse(raw)
        try:
            usage = TokenUsage()
            if resp.usage is not None:
                details = resp.usage.prompt_tokens_details
                usage = TokenUsage(
                    input_tokens=resp.usage.prompt_tokens,
                    cached_input_tokens=(details.cached_tokens or 0) if details else 0,
                    output_tokens=resp.usage.completion_tokens,
                )
            if not resp.choices:
                raise InvalidOutput(f"judge reply from {self.endpoint} is not a chat completion (no choices)")
            msg = resp.choices[0].message
            refusal, content = getattr(msg, "refusal", None), msg.content
        except (AttributeError, TypeError, ValueError) as e:  # JSON, but not shaped like a chat completion
            raise InvalidOutput(f"judge reply from {self.endpoint} is not a chat completion ({type(e).__name__})") from e
        if refusal:
            raise InvalidOutput(f"judge refused: {refusal}")
        return JudgeReply(parse_output(content, request.output), usage)

    def _parse(self, raw: Any) -> ChatCompletion:
        """The completion, or InvalidOutput (retried) naming what came back instead: an HTML page, garbage."""
        http = raw.http_response
        kind = http.headers.get("content-type", "").split(";")[0].strip() or "no content type"
        try:
            resp = raw.parse()
        except ValueError:  # a body that does not decode as JSON
            resp = None
        if not isinstance(resp, ChatCompletion):
            raise InvalidOutput(f"judge reply from {self.endpoint} was not JSON ({kind}, {len(http.content)} bytes)")
        return resp

    async def aclose(self) -> None:
        await self.client.close()


def cache_key(prefix: str) -> str:
    return "arena-judge-" + hashlib.sha256(prefix.encode()).hexdigest()[:16]


def _short(e: Exception) -> str:
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__


def _cause(e: Exception) -> str:
    """What the transport said (e.g. `ConnectError: [Errno 111] Connection refused`); no URL in it."""
    cause = e.__cause__ or e
    return f"{type(cause).__name__}: {_short(cause)}"
