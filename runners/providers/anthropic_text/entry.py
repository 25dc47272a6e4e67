"""Claude text models (`AnthropicLLMService`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import CLAUDE_BUDGET, CLAUDE_EFFORT, TEXT, Provider

PROVIDERS = (
    Provider(
        name="anthropic",
        runner="runners.providers.anthropic_text.runner:AnthropicTextRunner",
        fake_class="runners.providers.anthropic_text.fake:AnthropicFake",
        mode="text",
        aliases={"claude-sonnet-4-6": "claude-sonnet-4-6", "claude-sonnet-5": "claude-sonnet-5",
                 "claude-haiku-4-5": "claude-haiku-4-5"},
        key_env=("ANTHROPIC_API_KEY",),
        packages=("anthropic", "pipecat.services.anthropic.llm"),
        install_hint="pip install 'pipecat-ai[anthropic]'",
        efforts={"claude-sonnet-4-6": CLAUDE_EFFORT, "claude-sonnet-5": CLAUDE_EFFORT, "claude-haiku-4-5": CLAUDE_BUDGET},
        caps=TEXT,
    ),
)
