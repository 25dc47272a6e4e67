"""xAI Grok Voice (`GrokRealtimeLLMService`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="grok",
        runner="runners.providers.grok.runner:GrokRealtimeRunner",
        fake_class="runners.providers.grok.fake:XaiRealtimeFake",
        aliases={
            "grok-realtime": "grok-voice-latest",
            "grok": "grok-voice-latest",
            "grok-voice-latest": "grok-voice-latest",
            "grok-voice-think-fast-1.0": "grok-voice-think-fast-1.0",
            "grok-voice-fast-1.0": "grok-voice-fast-1.0",
        },
        key_env=("XAI_API_KEY",),
        packages=("websockets", "pipecat.services.xai.realtime.llm"),
        manual_commit=True,
        caps=Capabilities(output_rate=24000),
    ),
)
