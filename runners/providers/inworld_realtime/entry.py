"""Inworld Realtime's catalog entry: plain data (`runners/provider_entry.py`), read by
`runners/catalog.py` without importing the runner, the fake or Pipecat.

The model is the LLM inside Inworld's cascade, named `provider/model` (Pipecat's default is
`openai/gpt-4.1-mini`)."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="inworld",
        runner="runners.providers.inworld_realtime.runner:InworldRealtimeRunner",
        fake_class="runners.providers.inworld_realtime.fake:InworldRealtimeFake",
        aliases={"inworld-realtime": "openai/gpt-4.1-mini", "inworld": "openai/gpt-4.1-mini"},
        key_env=("INWORLD_API_KEY",),
        packages=("websockets", "pipecat.services.inworld.realtime.llm"),
        manual_commit=True,
        price_scope="inworld",  # billed as Inworld's STT, LLM and TTS usage, not the LLM's list price
        caps=Capabilities(output_rate=24000),
    ),
)
