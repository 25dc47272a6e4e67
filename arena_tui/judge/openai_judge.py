"""Judge through the real `openai` client (Chat Completions with a strict json_schema): OpenAI
itself, or any OpenAI-compatible server that needs no key (`LocalJudge`: Ollama, vLLM, llama.cpp,
the way Pipecat's own evals judge offline)."""

from __future__ import annotations

import hashlib
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from arena_tui.spine.events import TokenUsage
from arena_tui.spine.judges import LOCAL
from arena_tui.spine.local_llm import LOCAL_KEY, local_llm_url
from .backends import InvalidOutput, JudgeReply, JudgeRequest, KeyedJudge, parse_output
from ..store.scrub import endpoint_label
from .sdk_errors import parsed, sdk_call



class OpenAIJudge(KeyedJudge):
    kind, key_envs = "openai", ("OPENAI_API_KEY",)

    def connect(self, key: str, base_url: str | None) -> None:
        # max_retries=0: backends.judge_with_retries is the single retry policy.
        self.client = AsyncOpenAI(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        self.endpoint = endpoint_label(self.client.base_url)

    def options(self, request: JudgeRequest) -> dict[str, Any]:
        """What this server is sent beyond the messages and the schema."""
        # same key for every turn of a benchmark: routes requests to the cache holding the prefix
        return {"prompt_cache_key": cache_key(request.prefix)}

    def messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        """The prefix as the system message, the history and the target as user messages (an
        empty part, e.g. a whole-run request's history, is left out)."""
        parts = [("system", request.prefix), ("user", request.history), ("user", request.target)]
        return [{"role": role, "content": text} for role, text in parts if text]

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        create = self.client.chat.completions.with_raw_response.create(
            model=self.model,
            messages=self.messages(request),
            response_format={
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "strict": True, "schema": request.schema},
            },
            timeout=request.timeout_s or self.timeout_s,  # a whole run's reply takes minutes
            **self.options(request),
        )
        raw = await sdk_call(create, openai, self.endpoint, request.timeout_s or self.timeout_s)
        resp = await parsed(raw, ChatCompletion, self.endpoint, "a chat completion")
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

    async def aclose(self) -> None:
        await self.client.close()


def cache_key(prefix: str) -> str:
    return "arena-judge-" + hashlib.sha256(prefix.encode()).hexdigest()[:16]


class LocalJudge(OpenAIJudge):
    """An OpenAI-compatible server that needs no key: `--judge-base-url`, else
    ARENA_TUI_LOCAL_LLM_URL, else Ollama's on this machine (`spine.local_llm`, as `local:` models).
    It is sent a placeholder key, never OPENAI_API_KEY, and no OpenAI-only options."""

    kind = LOCAL

    def key(self, given: str | None) -> str:
        return LOCAL_KEY

    def connect(self, key: str, base_url: str | None) -> None:
        super().connect(key, local_llm_url(base_url))

    def options(self, request: JudgeRequest) -> dict[str, Any]:
        return {}
