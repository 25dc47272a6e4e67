"""Azure Voice Live's catalog entry: plain data (`runners/provider_entry.py`), read by
`runners/catalog.py` without importing the runner, the fake or Pipecat.

The model is named in the connection URL (`?model=`): `gpt-4o-mini` is Pipecat's default (Azure
speech in and out around a text model), `gpt-realtime` a native-audio one."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="azure-voice-live",
        runner="runners.providers.azure_voice_live.runner:AzureVoiceLiveRunner",
        fake_class="runners.providers.azure_voice_live.fake:AzureVoiceLiveFake",
        aliases={"azure-voice-live": "gpt-4o-mini", "azure-voice-live-realtime": "gpt-realtime"},
        key_env=("AZURE_VOICE_LIVE_API_KEY",),
        setting_env={"AZURE_VOICE_LIVE_ENDPOINT": "the Foundry resource, https://<resource>.services.ai.azure.com"},
        packages=("websockets", "pipecat.services.azure.voice_live.llm"),
        manual_commit=True,
        price_scope="azure-voice-live",  # billed by Voice Live's tiers, not the model's list price
        caps=Capabilities(output_rate=24000),
    ),
)
