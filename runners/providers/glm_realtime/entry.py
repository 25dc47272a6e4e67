"""Zhipu GLM-Realtime (no Pipecat service: ours, `service.py`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import Capabilities, Provider

PROVIDERS = (
    Provider(
        name="glm",
        runner="runners.providers.glm_realtime.runner:GLMRealtimeRunner",
        fake_class="runners.providers.glm_realtime.fake:GLMRealtimeFake",
        aliases={
            "glm-realtime-flash": "glm-realtime-flash",
            "glm-realtime-air": "glm-realtime-air",
            "glm-realtime": "glm-realtime-flash",
            "glm": "glm-realtime-flash",
        },
        key_env=("ZHIPUAI_API_KEY", "GLM_API_KEY", "ZAI_API_KEY"),
        any_key=True,
        packages=("websockets", "pipecat"),
        caps=Capabilities(output_rate=24000),
    ),
)
