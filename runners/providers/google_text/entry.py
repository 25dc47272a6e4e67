"""Gemini text models (`GoogleLLMService`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import TEXT, Provider, gemini25_thinking

PROVIDERS = (
    Provider(
        name="google",
        runner="runners.providers.google_text.runner:GoogleTextRunner",
        fake_class="runners.providers.google_text.fake:GeminiTextFake",
        mode="text",
        aliases={"gemini-2.5-flash": "gemini-2.5-flash", "gemini-2.5-pro": "gemini-2.5-pro"},
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        any_key=True,
        packages=("google.genai", "pipecat.services.google.llm"),
        install_hint="pip install 'pipecat-ai[google]'",
        efforts={"gemini-2.5-flash": gemini25_thinking(0, 24576), "gemini-2.5-pro": gemini25_thinking(128, 32768)},
        caps=TEXT,
    ),
)
