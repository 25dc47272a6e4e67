"""Judge through the real `openai` client (Chat Completions with a strict json_schema): OpenAI
itself, or any OpenAI-compatible server that needs no key (`LocalJudge`: Ollama, vLLM, llama.cpp,
the way Pipecat's own evals judge offline). Each request asks for an output budget sized from its
turns (`budget`); a reply cut at it (`finish_reason: length`) is a permanent error."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from arena_tui.spine.events import TokenUsage
from arena_tui.spine.judges import LOCAL
from arena_tui.spine.local_llm import LOCAL_KEY, local_llm_url
from . import budget
from .backends import InvalidOutput, JudgeReply, JudgeRequest, KeyedJudge, parse_output
from .model_limits import ModelLimits
from .ollama_native import WINDOW_STEP, OllamaServer
from ..store.scrub import endpoint_label
from .sdk_errors import parsed, sdk_call



class OpenAIJudge(KeyedJudge):
    kind = "openai"
    budget_field = "max_completion_tokens"  # OpenAI's (max_tokens is deprecated and refused by reasoning models)

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
        asked = self.output_budget(request)
        body: dict[str, Any] = {  # a body, as the Anthropic judge's: the budget's field and the options vary by server
            "model": self.model,
            "messages": self.messages(request),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "strict": True, "schema": request.schema},
            },
            "timeout": request.timeout_s or self.timeout_s,  # a whole run's reply takes minutes
            self.budget_field: asked,
            **self.options(request),
        }
        create = self.client.chat.completions.with_raw_response.create(**body)
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
            refusal, content, finish = getattr(msg, "refusal", None), msg.content, resp.choices[0].finish_reason
        except (AttributeError, TypeError, ValueError) as e:  # JSON, but not shaped like a chat completion
            raise InvalidOutput(f"judge reply from {self.endpoint} is not a chat completion ({type(e).__name__})") from e
        if finish == "length":  # cut off at the budget (or the window): the same request is cut again
            raise self.truncated(request, asked, "finish_reason length")
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
    It is sent a placeholder key, never OPENAI_API_KEY, and no OpenAI-only options.

    When the server is Ollama, requests go to its own `/api/chat` with the context window sized
    from the prompt (`ollama_native`: its OpenAI-compatible endpoint cannot set one, and would cut
    the prompt's start); the window the server says its model has bounds it."""

    kind = LOCAL
    budget_field = "max_tokens"  # what Ollama's, vLLM's and llama.cpp's OpenAI-compatible endpoints read

    def key(self, given: str | None) -> str:
        return LOCAL_KEY

    def connect(self, key: str, base_url: str | None) -> None:
        super().connect(key, local_llm_url(base_url))
        self.ollama = OllamaServer(str(self.client.base_url), self.endpoint, self.timeout_s)

    def options(self, request: JudgeRequest) -> dict[str, Any]:
        return {}

    async def model_limits(self) -> ModelLimits | None:
        limits = self.limits
        assert limits is not None
        if await self.ollama.probe() and (window := await self.ollama.window(self.model)):
            return limits.told(window)
        return limits

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        limits = await self.model_limits()
        if not self.ollama.is_ollama:
            return await super().complete(request)
        assert limits is not None
        asked, prompt = budget.output_budget(request, limits), budget.prompt_tokens(request)
        if prompt + budget.needed(request, limits) > limits.context:  # Ollama would cut the prompt's start
            raise budget.context_refused(self.name, request, limits)
        num_ctx = min(limits.context, math.ceil((prompt + asked) / WINDOW_STEP) * WINDOW_STEP)
        data = await self.ollama.chat(self.model, self.messages(request), request.schema, num_ctx=num_ctx,
                                      num_predict=asked, timeout_s=request.timeout_s or self.timeout_s)
        usage = TokenUsage(input_tokens=int(data.get("prompt_eval_count") or 0), output_tokens=int(data.get("eval_count") or 0))
        if data.get("done_reason") == "length":
            raise self.truncated(request, asked, "done_reason length")
        return JudgeReply(parse_output(data["message"].get("content"), request.output), usage)

    async def aclose(self) -> None:
        await super().aclose()
        await self.ollama.aclose()
