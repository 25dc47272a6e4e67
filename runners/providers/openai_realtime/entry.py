"""OpenAI Realtime (`OpenAIRealtimeLLMService`) and the no-key simulator that speaks its protocol
(`sim`): both are `runner.py`'s; their fake is the simulator (`runners/simulator/`).

Its catalog entry: plain data (`runners/provider_entry.py`), read by `runners/catalog.py`
without importing the runner, the fake or Pipecat."""

from __future__ import annotations

from runners.provider_entry import REALTIME_REASONING, Capabilities, Provider

PROVIDERS = (
    Provider(
        name="openai",
        runner="runners.providers.openai_realtime.runner:OpenAIRealtimeRunner",
        fake_class="runners.simulator:SimulatorServer",
        aliases={
            "gpt-realtime": "gpt-realtime",
            "gpt-realtime-mini": "gpt-realtime-mini",
            "gpt-4o-realtime": "gpt-4o-realtime-preview",
            "gpt-4o-mini-realtime": "gpt-4o-mini-realtime-preview",
            "openai": "gpt-realtime",
            "gpt-realtime-2": "gpt-realtime-2",
            "gpt-realtime-2.1": "gpt-realtime-2.1",  # Pipecat 1.14's default model
        },
        key_env=("OPENAI_API_KEY",),
        packages=("websockets", "pipecat.services.openai.realtime.llm"),
        manual_commit=True,
        # (Pipecat sends `reasoning` only to the models it knows reason: gpt-realtime-2, gpt-realtime-2.1)
        efforts={"gpt-realtime-2": REALTIME_REASONING, "gpt-realtime-2.1": REALTIME_REASONING},
        caps=Capabilities(output_rate=24000, session_limit_s=3600.0),  # (a Realtime session lasts at most 60 minutes)
    ),
    Provider(
        name="sim",
        runner="runners.providers.openai_realtime.runner:SimulatorRunner",
        fake_class="runners.simulator:SimulatorServer",
        aliases={"sim": "gpt-realtime"},
        packages=("websockets", "pipecat.services.openai.realtime.llm"),
        simulated=True,
        manual_commit=True,
        efforts={"sim": REALTIME_REASONING},  # the simulator takes what gpt-realtime-2 takes, and records it
        caps=Capabilities(output_rate=24000),
    ),
)
