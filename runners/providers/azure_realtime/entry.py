"""Azure OpenAI Realtime's catalog entry: plain data (`runners/provider_entry.py`), read by
`runners/catalog.py` without importing the runner, the fake or Pipecat.

A model on Azure is a deployment the user named: the alias's id is the usual deployment name,
and `AZURE_REALTIME_DEPLOYMENT` names another."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="azure-realtime",
        runner="runners.providers.azure_realtime.runner:AzureRealtimeRunner",
        fake_class="runners.providers.azure_realtime.fake:AzureRealtimeFake",
        aliases={"azure-gpt-realtime": "gpt-realtime"},
        key_env=("AZURE_REALTIME_API_KEY",),
        setting_env={"AZURE_REALTIME_ENDPOINT": "the Azure OpenAI resource, https://<resource>.openai.azure.com"},
        model_env={"azure-gpt-realtime": "AZURE_REALTIME_DEPLOYMENT"},
        packages=("websockets", "pipecat.services.azure.realtime.llm"),
        manual_commit=True,
        price_scope="azure-openai",  # Azure bills its own meters (Global, Data Zone) for OpenAI's models
        caps=Capabilities(output_rate=24000, session_limit_s=1800.0),  # (Azure ends a Realtime session at 30 minutes)
    ),
)
