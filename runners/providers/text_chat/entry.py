"""OpenAI Chat Completions text models (`OpenAILLMService`), and any OpenAI-compatible server on
this machine (`local:<model>`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import GPT5_REASONING, GPT51_REASONING, TEXT, Provider

PROVIDERS = (
    Provider(
        name="text",
        runner="runners.providers.text_chat.runner:TextChatRunner",
        fake_class="runners.providers.text_chat.fake:OpenAIChatFake",
        mode="text",
        aliases={
            "text": "gpt-4.1",
            "gpt-4.1": "gpt-4.1",
            "gpt-4.1-mini": "gpt-4.1-mini",
            "gpt-4o": "gpt-4o",
            "gpt-4o-mini": "gpt-4o-mini",
            "gpt-5-mini": "gpt-5-mini",
            "gpt-5.1": "gpt-5.1",
        },
        key_env=("OPENAI_API_KEY",),
        packages=("openai", "pipecat.services.openai.llm"),
        model_env={"text": "ARENA_TUI_TEXT_MODEL"},
        efforts={"gpt-5-mini": GPT5_REASONING, "gpt-5.1": GPT51_REASONING},
        caps=TEXT,
    ),
    # a model served by an OpenAI-compatible server: `arena_tui.spine.local_llm`
    Provider(
        name="local",
        runner="runners.providers.text_chat.runner:LocalChatRunner",
        fake_class="runners.providers.text_chat.fake:OpenAIChatFake",
        mode="text",
        aliases={"local:llama3.2": "llama3.2"},
        packages=("openai", "pipecat.services.openai.llm"),
        alias_family="local:",
        caps=TEXT,
    ),
)
