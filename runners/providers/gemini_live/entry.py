"""Gemini Live on the Gemini Developer API (`GeminiLiveLLMService`, our subclass in `service.py`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import GEMINI3_THINKING, Capabilities, Provider, gemini25_thinking

PROVIDERS = (
    Provider(
        name="gemini",
        runner="runners.providers.gemini_live.runner:GeminiLiveRunner",
        fake_class="runners.providers.gemini_live.fake:GeminiLiveFake",
        aliases={
            "gemini-native-audio": "gemini-2.5-flash-native-audio-preview-12-2025",
            "gemini-3.1-flash": "gemini-3.1-flash-live-preview",
        },
        key_env=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        any_key=True,
        packages=("google.genai", "pipecat.services.google.gemini_live.llm"),
        install_hint="pip install 'pipecat-ai[google]'",
        model_prefix="models/",
        efforts={"gemini-native-audio": gemini25_thinking(0, 24576), "gemini-3.1-flash": GEMINI3_THINKING},
        caps=Capabilities(output_rate=24000, session_limit_s=600.0),  # (a Live connection lasts about 10 minutes)
    ),
)
