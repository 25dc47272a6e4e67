"""Text models: any OpenAI-compatible Chat Completions endpoint through Pipecat's `OpenAILLMService`.

The turn loop is `runners.text_engine` (the engine hands `mode = "text"` runners to it): the
turn's TEXT goes in instead of its audio; tools, records and events are the audio engine's.

Keys: the OpenAI endpoint takes `OPENAI_API_KEY`. With `--base-url` (any other
OpenAI-compatible server) the key is `ARENA_TUI_TEXT_API_KEY`, so an OpenAI key is never sent
to a third party; a loopback endpoint needs none. `ARENA_TUI_TEXT_MODEL` names the model the
`text` alias asks for (for endpoints serving other models).
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlparse

from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from pipecat.services.openai.llm import OpenAILLMService

from .base import HistoryItem, ProviderRunner, SessionSpec, context_messages, register
from .config import RunConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"
FAKE_KEY = "sk-fake-not-a-secret"
OTHER_KEY_ENV = "ARENA_TUI_TEXT_API_KEY"
MODEL_ENV = "ARENA_TUI_TEXT_MODEL"
REASONING = re.compile(r"^(gpt-5|o\d)")


class ChatService(OpenAILLMService):
    """`OpenAILLMService` whose client does not retry by itself, so every failed request is
    ours to see, count and report (the `openai` client would silently retry a 500 twice)."""

    def __init__(self, *, request_timeout_s: float = 60.0, **kwargs: Any) -> None:
        self._request_timeout_s = request_timeout_s
        super().__init__(**kwargs)

    def create_client(self, api_key=None, base_url=None, organization=None, project=None, default_headers=None, **kwargs):
        return AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            organization=organization,
            project=project,
            default_headers=default_headers,
            max_retries=0,
            timeout=self._request_timeout_s,
            http_client=DefaultAsyncHttpxClient(),
        )


def _loopback(url: str) -> bool:
    return (urlparse(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


@register("text", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "gpt-5-mini", "gpt-5.1")
class TextChatRunner(ProviderRunner):
    name = "text"
    mode = "text"
    aliases = {
        "text": "gpt-4.1",
        "gpt-4.1": "gpt-4.1",
        "gpt-4.1-mini": "gpt-4.1-mini",
        "gpt-4o": "gpt-4o",
        "gpt-4o-mini": "gpt-4o-mini",
        "gpt-5-mini": "gpt-5-mini",
        "gpt-5.1": "gpt-5.1",
    }
    key_env = ("OPENAI_API_KEY",)
    packages = ("openai", "pipecat.services.openai.llm")

    def __init__(self) -> None:
        self.fake: Any = None
        self.base_url: str | None = None

    def resolve_model(self, alias: str) -> str:
        if alias == "text" and os.environ.get(MODEL_ENV):
            return os.environ[MODEL_ENV]
        return super().resolve_model(alias)

    def preflight(self, config: RunConfig) -> list[str]:
        problems = super().preflight(config.model_copy(update={"fake": True}))  # packages only; keys below
        if config.fake:
            return problems
        if config.base_url:
            if not _loopback(config.base_url) and not os.environ.get(OTHER_KEY_ENV):
                problems.append(
                    f"{self.name}: environment variable {OTHER_KEY_ENV} is not set (the key for {config.base_url}; "
                    "OPENAI_API_KEY is only sent to OpenAI)"
                )
        elif not os.environ.get("OPENAI_API_KEY"):
            problems.append(f"{self.name}: environment variable OPENAI_API_KEY is not set (the API key)")
        return problems

    def endpoint(self, config: RunConfig) -> str:
        return config.base_url or self.base_url or DEFAULT_BASE_URL

    def api_key(self, config: RunConfig) -> str:
        if self.fake is not None and not config.base_url:
            return FAKE_KEY
        if config.base_url:
            return os.environ.get(OTHER_KEY_ENV) or ("not-needed" if _loopback(config.base_url) else "")
        return os.environ.get("OPENAI_API_KEY", "")

    def reply_timeout_ms(self, config: RunConfig) -> float:
        """How long a request may go without a byte before it counts as failed: the watchdog's
        `extra_ms`, but at least 120 s for reasoning models (gpt-5*, o*) when the user left the
        watchdog unset; they think for tens of seconds before the first token."""
        ms = config.watchdog.extra_ms
        model = self.resolve_model(config.model)
        if "extra_ms" not in config.watchdog.model_fields_set and REASONING.match(model):
            ms = max(ms, 120_000.0)
        return max(1000.0, ms)

    def build_service(self, spec: SessionSpec) -> ChatService:
        cfg = spec.config
        return ChatService(
            api_key=self.api_key(cfg),
            base_url=self.endpoint(cfg),
            request_timeout_s=self.reply_timeout_ms(cfg) / 1000.0,
            settings=OpenAILLMService.Settings(model=spec.model, system_instruction=spec.system_prompt),
        )

    def history_messages(self, history: list[HistoryItem]) -> list[dict[str, Any]]:
        return context_messages(history)

    def is_alive(self, service: Any) -> bool:
        return True  # HTTP: no connection to lose between requests; a failed request is seen as an error

    def provider_ttfb_label(self) -> str:
        return "time to first token (our clock: request sent → first streamed token or tool call)"

    async def start(self, config: RunConfig, benchmark: Any) -> None:
        if not config.fake or config.base_url:
            return
        from .fakes.common import script_for_benchmark
        from .fakes.openai_chat import OpenAIChatFake

        self.fake = OpenAIChatFake(script_for_benchmark(benchmark, config.turns))
        await self.fake.start()
        self.base_url = self.fake.base_url

    async def stop(self) -> None:
        if self.fake is not None:
            await self.fake.stop()
        # keep self.fake: tests read what it received after the run
