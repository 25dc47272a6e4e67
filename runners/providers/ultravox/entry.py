"""Ultravox Realtime (`UltravoxRealtimeLLMService`, a call created over REST, then a WebSocket).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="ultravox",
        runner="runners.providers.ultravox.runner:UltravoxRunner",
        fake_class="runners.providers.ultravox.fake:UltravoxFake",
        # `fixie-ai/ultravox` is the API's default model; `ultravox-v0.7` as Pipecat's docs name it
        aliases={"ultravox": "fixie-ai/ultravox", "ultravox-v0.7": "ultravox-v0.7"},
        key_env=("ULTRAVOX_API_KEY",),
        packages=("aiohttp", "websockets", "pipecat.services.ultravox.llm"),
        caps=Capabilities(output_rate=24000, session_limit_s=3600.0),  # (a call's maxDuration is at most one hour)
    ),
)
