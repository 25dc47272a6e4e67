"""Claude through Pipecat's `AnthropicLLMService`, as the reference runs `--service anthropic`.

A text model: the turn's text in, the streamed reply and tool calls out (`runners.run.text`).
The runner hands Pipecat an `AsyncAnthropic` client of its own: its endpoint (the local fake
with `--fake`, `--base-url` otherwise) and no retries by the client itself, so every failed
request is the engine's to see, count and retry in a rebuilt session.

Tool calls one at a time (`tool_choice.disable_parallel_tool_use`): Pipecat 1.14's service runs
only the last `tool_use` block of a message, so parallel calls (demo_bench turn 5's two
`check_part_stock`) would lose all but one; asked one at a time, Claude makes each in turn,
every one answered (seen at the fake, which makes parallel calls unless asked not to).
"""

from __future__ import annotations

from anthropic import AsyncAnthropic
from pipecat.services.anthropic.llm import AnthropicLLMService

from ...base import SessionSpec
from ..effort import claude_thinking
from ..text_base import TextProviderRunner

DEFAULT_BASE_URL = "https://api.anthropic.com"
ONE_CALL_AT_A_TIME = {"type": "auto", "disable_parallel_tool_use": True}
MAX_TOKENS = 4096  # a spoken reply is short; Pipecat's default asks for as much


class AnthropicTextRunner(TextProviderRunner[AnthropicLLMService]):
    default_endpoint = DEFAULT_BASE_URL
    fake_key = "sk-ant-fake-not-a-secret"

    def service_endpoint(self, service: AnthropicLLMService) -> str:
        return str(service._client.base_url)  # (Pipecat's: the anthropic client)

    def build_service(self, spec: SessionSpec) -> AnthropicLLMService:
        cfg = spec.config
        client = AsyncAnthropic(api_key=self.api_key(cfg), base_url=self.endpoint(cfg), max_retries=0,
                                timeout=self.reply_timeout_ms(cfg) / 1000.0)
        return AnthropicLLMService(
            api_key=self.api_key(cfg),
            client=client,
            settings=AnthropicLLMService.Settings(model=spec.model, system_instruction=spec.system_prompt,
                                                  extra={"tool_choice": ONE_CALL_AT_A_TIME},
                                                  **claude_thinking(cfg, MAX_TOKENS)),  # `--effort`
        )
