"""Text models: any OpenAI-compatible Chat Completions endpoint through Pipecat's `OpenAILLMService`.

The turn loop is `runners.run.text` (the engine hands `mode = "text"` runners to it): the
turn's TEXT goes in instead of its audio; tools, records and events are the audio engine's.

Keys: the OpenAI endpoint takes `OPENAI_API_KEY`. With `--base-url` (any other
OpenAI-compatible server) the key is `ARENA_TUI_TEXT_API_KEY`, so an OpenAI key is never sent
to a third party; a loopback endpoint needs none. `ARENA_TUI_TEXT_MODEL` names the model the
`text` alias asks for (for endpoints serving other models).

`local:<model>` (`LocalChatRunner`) is a model served on this machine by any OpenAI-compatible
server: `ARENA_TUI_LOCAL_LLM_URL`, default Ollama's. It is sent no key.
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from pipecat.services.openai.base_llm import OpenAILLMSettings
from pipecat.services.openai.llm import OpenAILLMService

from arena_tui.spine.local_llm import LOCAL_KEY, local_llm_url
from arena_tui.spine.settings import RunSettings

from ...base import SessionSpec, is_local
from ..effort import openai_reasoning
from ..text_base import TextProviderRunner

DEFAULT_BASE_URL = "https://api.openai.com/v1"
FAKE_KEY = "sk-fake-not-a-secret"
OTHER_KEY_ENV = "ARENA_TUI_TEXT_API_KEY"
MODEL_ENV = "ARENA_TUI_TEXT_MODEL"
REASONING = re.compile(r"^(gpt-5|o\d)")


class ChatService(OpenAILLMService):
    """`OpenAILLMService` whose client does not retry by itself, so every failed request is
    ours to see, count and report (the `openai` client would silently retry a 500 twice)."""

    def __init__(self, *, api_key: str, base_url: str, settings: OpenAILLMSettings, request_timeout_s: float = 60.0) -> None:
        self._request_timeout_s = request_timeout_s
        super().__init__(api_key=api_key, base_url=base_url, settings=settings)

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


class TextChatRunner(TextProviderRunner[ChatService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = FAKE_KEY

    #: a text run has no audio clock to speed up; its key is by endpoint (`check_keys`)
    checks: ClassVar[tuple[str, ...]] = ("packages", "input", "keys")

    def check_keys(self, config: RunSettings) -> list[str]:
        """OPENAI_API_KEY for OpenAI, ARENA_TUI_TEXT_API_KEY for another endpoint not on loopback; none for a fake."""
        problems: list[str] = []
        if config.fake:
            return problems
        if config.base_url:
            if not is_local(config.base_url) and not os.environ.get(OTHER_KEY_ENV):
                problems.append(
                    f"{self.name}: environment variable {OTHER_KEY_ENV} is not set (the key for {config.base_url}; "
                    "OPENAI_API_KEY is only sent to OpenAI)"
                )
        elif not os.environ.get("OPENAI_API_KEY"):
            problems.append(f"{self.name}: environment variable OPENAI_API_KEY is not set (the API key)")
        return problems

    def api_key(self, config: RunSettings) -> str:
        """OPENAI_API_KEY only for OpenAI: another endpoint gets ARENA_TUI_TEXT_API_KEY (none on loopback)."""
        if self.fake is not None and not config.base_url:
            return FAKE_KEY
        if config.base_url:
            return os.environ.get(OTHER_KEY_ENV) or ("not-needed" if is_local(config.base_url) else "")
        return os.environ.get("OPENAI_API_KEY", "")

    def reply_timeout_ms(self, config: RunSettings) -> float:
        """How long a request may go without a byte before it counts as failed: the watchdog's
        `extra_ms`, but at least 120 s for reasoning models (gpt-5*, o*) when the user left the
        watchdog unset; they think for tens of seconds before the first token."""
        ms = config.watchdog.extra_ms
        model = self.resolve_model(config.model)
        if "extra_ms" not in config.watchdog.model_fields_set and REASONING.match(model):
            ms = max(ms, 120_000.0)
        return max(1000.0, ms)

    def service_endpoint(self, service: ChatService) -> str:
        return str(service._client.base_url)  # (Pipecat's: the openai client)

    def build_service(self, spec: SessionSpec) -> ChatService:
        cfg = spec.config
        return ChatService(
            api_key=self.api_key(cfg),
            base_url=self.endpoint(cfg),
            request_timeout_s=self.reply_timeout_ms(cfg) / 1000.0,
            settings=OpenAILLMService.Settings(model=spec.model, system_instruction=spec.system_prompt,
                                               extra=openai_reasoning(cfg)),  # `--effort`: reasoning_effort
        )



class LocalChatRunner(TextChatRunner):
    """`local:<model>`: the model id is the rest of the alias (`local:qwen2.5:7b` asks for
    `qwen2.5:7b`), the endpoint `--base-url`, else `ARENA_TUI_LOCAL_LLM_URL`, else Ollama's. The
    server's models are its own business (`ollama pull MODEL`): one it lacks ends the run at its
    first turn, naming the server's 404."""

    default_endpoint = ""

    def endpoint(self, config: RunSettings) -> str:
        return local_llm_url(super().endpoint(config))

    checks = ("packages", "input")  # a server on this machine: no key

    def api_key(self, config: RunSettings) -> str:
        return FAKE_KEY if self.fake is not None and not config.base_url else LOCAL_KEY
